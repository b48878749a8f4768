//! `[[sources]]`: where items (or cases, or dialogues) come from, and the selections that
//! keep some of them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::kafka::{
    self, KafkaClientSettings, KafkaSaslMechanism, KafkaSecret, KafkaSecurityProtocol,
};
use toml::Spanned;

use crate::error::{ConfigError, ConfigText};
use crate::yes;

/// `[[sources]]`: where items come from.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SourceConfig {
    /// A JSONL bank file (one item per line).
    Jsonl {
        /// The bank file; relative to the directory the run starts in, and must exist.
        path: PathBuf,
        /// Take only the first `limit` items (after `select`).
        #[serde(default)]
        limit: Option<usize>,
        /// Keep only the items this selection names.
        #[serde(default)]
        select: Option<Selection>,
    },
    /// A Parquet file of items (columns as the JSONL fields; `candidates` a list of strings).
    Parquet {
        /// The Parquet file; relative to the directory the run starts in, and must exist.
        path: PathBuf,
        /// Take only the first `limit` items (after `select`).
        #[serde(default)]
        limit: Option<usize>,
        /// Keep only the items this selection names.
        #[serde(default)]
        select: Option<Selection>,
    },
    /// A Kafka topic of JSON item messages.
    Kafka {
        /// `host:port[,host:port]`.
        brokers: String,
        /// The topic of item messages; its partitions are spread over the workers.
        topic: String,
        /// Consumer group used for committed offsets (no group rebalancing is used).
        #[serde(default = "default_group")]
        group: String,
        /// Keep consuming until stopped (true) or stop at the end of the topic (false).
        #[serde(default = "yes")]
        continuous: bool,
        /// `plaintext` (default), `ssl`, `sasl_plaintext` or `sasl_ssl` ([`kafka`]).
        #[serde(default)]
        security_protocol: KafkaSecurityProtocol,
        /// `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512` (SASL protocols).
        #[serde(default)]
        sasl_mechanism: Option<KafkaSaslMechanism>,
        /// SASL user name; required by the SASL protocols, refused by the others.
        #[serde(default)]
        sasl_username: Option<String>,
        /// Name of the environment variable that holds the SASL password.
        #[serde(default)]
        sasl_password_env: Option<String>,
        /// CA certificate(s) (PEM file or directory) that verify the brokers (TLS protocols).
        #[serde(default)]
        ssl_ca_location: Option<PathBuf>,
        /// Any other librdkafka property (no secrets, nothing the typed fields set).
        #[serde(default, deserialize_with = "kafka::property_table")]
        properties: std::collections::BTreeMap<String, String>,
        /// The password read from `sasl_password_env` when the config is loaded (shown as
        /// `[redacted]`, never read from a file).
        #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
        sasl_password: Option<KafkaSecret>,
    },
}

impl SourceConfig {
    /// A Kafka source's security settings and password.
    fn kafka_security(&self) -> Option<(kafka::KafkaSecurityFields<'_>, Option<&KafkaSecret>)> {
        match self {
            SourceConfig::Kafka {
                security_protocol,
                sasl_mechanism,
                sasl_username,
                sasl_password_env,
                ssl_ca_location,
                properties,
                sasl_password,
                ..
            } => Some((
                kafka::KafkaSecurityFields {
                    security_protocol: *security_protocol,
                    sasl_mechanism: *sasl_mechanism,
                    sasl_username: sasl_username.as_deref(),
                    sasl_password_env: sasl_password_env.as_deref(),
                    ssl_ca_location: ssl_ca_location.as_deref(),
                    properties,
                },
                sasl_password.as_ref(),
            )),
            _ => None,
        }
    }

    /// A Kafka source's cluster settings (brokers and librdkafka properties, the password
    /// included); `None` for file sources.
    pub fn kafka_client(&self) -> Option<KafkaClientSettings> {
        let SourceConfig::Kafka { brokers, .. } = self else {
            return None;
        };
        let (fields, password) = self.kafka_security()?;
        Some(KafkaClientSettings {
            brokers: brokers.clone(),
            properties: kafka::librdkafka_properties(&fields, password),
        })
    }
}

/// `select` of a file source: which of its items a panel runs. Every given criterion must hold;
/// a record that is not a readable item is kept (so that it reaches `rejects/`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    /// Ids to keep (`item_id`, or a coverage case's `case_id`, or a dialogue's `dialogue_id`).
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    /// A file of item ids to keep, one per line (`#` starts a comment); relative to the
    /// directory the run starts in. Resolved into `ids` when the config is loaded.
    #[serde(default)]
    pub ids_file: Option<PathBuf>,
    /// Target lengths to keep.
    #[serde(default)]
    pub lengths: Option<Vec<usize>>,
    /// Domains to keep (`arithmetic`, `lexical`).
    #[serde(default)]
    pub domains: Option<Vec<String>>,
    /// Arithmetic strata: `balanced` / `unbalanced`.
    #[serde(default)]
    pub structure: Option<String>,
    /// Arithmetic strata: `low` / `high`.
    #[serde(default)]
    pub carry_class: Option<String>,
    /// Lexical strata: `low` / `high` (Zipf split at 4.0).
    #[serde(default)]
    pub frequency_stratum: Option<String>,
    /// Lexical strata: whether the target repeats a letter.
    #[serde(default)]
    pub repeated_letters: Option<bool>,
}

impl Selection {
    /// Whether the record `payload` (an item's JSON text) is selected. Text that is not a JSON
    /// object is kept: validation downstream rejects it with its location.
    pub fn keeps(&self, payload: &str) -> bool {
        let Ok(serde_json::Value::Object(v)) = serde_json::from_str::<serde_json::Value>(payload)
        else {
            return true;
        };
        let text = |key: &str| v.get(key).and_then(serde_json::Value::as_str);
        if let Some(ids) = &self.ids {
            let id = text("item_id")
                .or_else(|| text("case_id"))
                .or_else(|| text("dialogue_id"));
            if !id.is_some_and(|id| ids.iter().any(|x| x == id)) {
                return false;
            }
        }
        if let Some(lengths) = &self.lengths {
            let length = v
                .get("length")
                .and_then(serde_json::Value::as_u64)
                .map(|l| l as usize)
                .or_else(|| text("target").map(|t| t.chars().count()));
            if !length.is_some_and(|l| lengths.contains(&l)) {
                return false;
            }
        }
        if let Some(domains) = &self.domains {
            if !text("domain").is_some_and(|d| domains.iter().any(|x| x == d)) {
                return false;
            }
        }
        let meta = |table: &str, key: &str| v.get(table).and_then(|t| t.get(key)).cloned();
        let string_is = |got: Option<serde_json::Value>, want: &Option<String>| match want {
            None => true,
            Some(w) => got.as_ref().and_then(serde_json::Value::as_str) == Some(w.as_str()),
        };
        string_is(meta("arithmetic", "structure"), &self.structure)
            && string_is(meta("arithmetic", "carry_class"), &self.carry_class)
            && string_is(
                meta("lexical", "frequency_stratum"),
                &self.frequency_stratum,
            )
            && match self.repeated_letters {
                None => true,
                Some(w) => meta("lexical", "repeated_letters").and_then(|x| x.as_bool()) == Some(w),
            }
    }
}

/// Read an id-list file: one id per line, blank lines and `#` comments skipped. Errors are
/// (line, message).
pub fn read_id_list(text: &str) -> Result<Vec<String>, (usize, String)> {
    let mut ids: Vec<String> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let id = line.split('#').next().unwrap_or_default().trim();
        if id.is_empty() {
            continue;
        }
        if id.contains(char::is_whitespace) {
            return Err((n + 1, format!("`{id}` is not one item id")));
        }
        if ids.iter().any(|x| x == id) {
            return Err((n + 1, format!("`{id}` is listed twice")));
        }
        ids.push(id.to_string());
    }
    Ok(ids)
}

fn default_group() -> String {
    "choice2seq".into()
}

/// The first source that selects by an item property (length, domain, …): records that are
/// not items (coverage cases, dialogues) are selected by id only.
pub(crate) fn item_selector_source(sources: &[SourceConfig]) -> Option<usize> {
    sources.iter().position(|s| match s {
        SourceConfig::Jsonl {
            select: Some(sel), ..
        }
        | SourceConfig::Parquet {
            select: Some(sel), ..
        } => {
            sel.lengths.is_some()
                || sel.domains.is_some()
                || sel.structure.is_some()
                || sel.carry_class.is_some()
                || sel.frequency_stratum.is_some()
                || sel.repeated_letters.is_some()
        }
        _ => false,
    })
}

/// Check a selection and read its id file into `ids`; errors are (field, message).
pub(crate) fn resolve_selection(sel: &mut Selection, base: &Path) -> Result<(), (String, String)> {
    if let Some(file) = &sel.ids_file {
        let text = std::fs::read_to_string(base.join(file)).map_err(|e| {
            (
                "ids_file".to_string(),
                format!("cannot read {}: {e}", file.display()),
            )
        })?;
        let listed = read_id_list(&text).map_err(|(line, message)| {
            (
                "ids_file".to_string(),
                format!("{}:{line}: {message}", file.display()),
            )
        })?;
        if listed.is_empty() {
            return Err((
                "ids_file".to_string(),
                format!("{} lists no item id", file.display()),
            ));
        }
        match &mut sel.ids {
            Some(ids) => ids.extend(listed),
            None => sel.ids = Some(listed),
        }
    }
    if sel.ids.as_ref().is_some_and(Vec::is_empty) {
        return Err(("ids".to_string(), "lists no item id".to_string()));
    }
    if let Some(domains) = &sel.domains {
        if let Some(d) = domains
            .iter()
            .find(|d| c2s_records::Domain::parse(d).is_none())
        {
            let all: Vec<&str> = c2s_records::Domain::ALL
                .iter()
                .map(|d| d.as_str())
                .collect();
            return Err((
                "domains".to_string(),
                format!("unknown domain `{d}` ({})", all.join(", ")),
            ));
        }
    }
    for (field, value, allowed) in [
        ("structure", &sel.structure, ["balanced", "unbalanced"]),
        ("carry_class", &sel.carry_class, ["low", "high"]),
        ("frequency_stratum", &sel.frequency_stratum, ["low", "high"]),
    ] {
        if let Some(v) = value {
            if !allowed.contains(&v.as_str()) {
                return Err((
                    field.to_string(),
                    format!("unknown value `{v}` ({})", allowed.join(", ")),
                ));
            }
        }
    }
    Ok(())
}

/// Check every `[[sources]]` entry (files exist, selections resolve, Kafka security and its
/// password from `env`); at least one is needed.
pub(crate) fn check_sources(
    at: &ConfigText<'_>,
    raw: Vec<Spanned<SourceConfig>>,
    base: &Path,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<Vec<SourceConfig>, ConfigError> {
    let mut sources = Vec::new();
    for (i, s) in raw.into_iter().enumerate() {
        let span = Some(s.span());
        let mut s = s.into_inner();
        match &mut s {
            SourceConfig::Jsonl { path, select, .. }
            | SourceConfig::Parquet { path, select, .. } => {
                if !base.join(&*path).exists() {
                    return Err(at.error(
                        span,
                        format!("sources[{i}].path"),
                        format!("{} does not exist", path.display()),
                    ));
                }
                if let Some(sel) = select {
                    resolve_selection(sel, base).map_err(|(field, message)| {
                        at.error(
                            span.clone(),
                            format!("sources[{i}].select.{field}"),
                            message,
                        )
                    })?;
                }
            }
            SourceConfig::Kafka { brokers, topic, .. } => {
                if brokers.trim().is_empty() || topic.trim().is_empty() {
                    return Err(at.error(
                        span,
                        format!("sources[{i}]"),
                        "a Kafka source needs brokers and topic",
                    ));
                }
            }
        }
        if let Some((fields, _)) = s.kafka_security() {
            let password =
                kafka::check_security(&fields, base, env).map_err(|(field, message)| {
                    let key = field.split('.').next().unwrap_or(&field);
                    at.error(at.key(&span, key), format!("sources[{i}].{field}"), message)
                })?;
            if let SourceConfig::Kafka { sasl_password, .. } = &mut s {
                *sasl_password = password;
            }
        }
        sources.push(s);
    }
    if sources.is_empty() {
        return Err(at.error(None, "sources", "at least one [[sources]] entry is needed"));
    }
    Ok(sources)
}
