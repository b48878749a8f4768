//! Security settings of the run's Kafka clients (`[[sources]]` of kind `kafka` and
//! `[output.kafka]`): the librdkafka settings managed clusters require (Confluent Cloud, MSK,
//! Aiven and most company clusters want SASL over TLS), as typed fields, plus a `properties`
//! table for any other librdkafka property.
//!
//! The SASL password is never in the config: `sasl_password_env` names the environment
//! variable that holds it, read when the config is loaded. The password is kept in a
//! [`KafkaSecret`], which no `Debug`, `Display` or serialization reveals, so it reaches no
//! manifest, log, error or output.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// librdkafka's `security.protocol`: how the client talks to the brokers.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KafkaSecurityProtocol {
    /// No TLS, no authentication (the default; a local broker).
    #[default]
    Plaintext,
    /// TLS, no SASL authentication.
    Ssl,
    /// SASL authentication without TLS (the password travels in clear with PLAIN).
    SaslPlaintext,
    /// SASL authentication over TLS (what managed clusters use).
    SaslSsl,
}

impl KafkaSecurityProtocol {
    /// The value of librdkafka's `security.protocol`.
    pub fn librdkafka_name(self) -> &'static str {
        match self {
            KafkaSecurityProtocol::Plaintext => "plaintext",
            KafkaSecurityProtocol::Ssl => "ssl",
            KafkaSecurityProtocol::SaslPlaintext => "sasl_plaintext",
            KafkaSecurityProtocol::SaslSsl => "sasl_ssl",
        }
    }

    /// Whether the client authenticates with SASL (`sasl_plaintext`, `sasl_ssl`): the
    /// protocols that need `sasl_mechanism`, `sasl_username` and `sasl_password_env`.
    pub fn uses_sasl(self) -> bool {
        matches!(
            self,
            KafkaSecurityProtocol::SaslPlaintext | KafkaSecurityProtocol::SaslSsl
        )
    }

    /// Whether the connection is TLS (`ssl`, `sasl_ssl`): the protocols `ssl_ca_location`
    /// is read with.
    pub fn uses_tls(self) -> bool {
        matches!(
            self,
            KafkaSecurityProtocol::Ssl | KafkaSecurityProtocol::SaslSsl
        )
    }
}

/// librdkafka's `sasl.mechanism`. OAUTHBEARER is not offered: a static token from the
/// environment expires, and librdkafka's OIDC token refresh needs a libcurl build.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
pub enum KafkaSaslMechanism {
    /// User name and password (Confluent Cloud API keys, Aiven).
    #[serde(rename = "PLAIN")]
    Plain,
    /// SCRAM over SHA-256, with user name and password.
    #[serde(rename = "SCRAM-SHA-256")]
    ScramSha256,
    /// MSK, Aiven, Redpanda and Strimzi clusters.
    #[serde(rename = "SCRAM-SHA-512")]
    ScramSha512,
}

impl KafkaSaslMechanism {
    /// The value of librdkafka's `sasl.mechanism`.
    pub fn librdkafka_name(self) -> &'static str {
        match self {
            KafkaSaslMechanism::Plain => "PLAIN",
            KafkaSaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            KafkaSaslMechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }
}

/// The SASL password, read from the environment variable `sasl_password_env` names. It is
/// written nowhere: `Debug` and serialization show `[redacted]`, and a config read back from a
/// manifest has none.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KafkaSecret(String);

/// What a manifest and any debug output show in place of a secret.
pub const REDACTED: &str = "[redacted]";

impl KafkaSecret {
    /// The password itself, for the Kafka client only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for KafkaSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(REDACTED)
    }
}

impl Serialize for KafkaSecret {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(REDACTED)
    }
}

/// A librdkafka property value as TOML may write it: text, a number or a boolean (librdkafka
/// takes every value as text).
struct PropertyValue(String);

impl<'de> Deserialize<'de> for PropertyValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = PropertyValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string, number or boolean (a librdkafka property value)")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PropertyValue, E> {
                Ok(PropertyValue(v.to_owned()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<PropertyValue, E> {
                Ok(PropertyValue(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<PropertyValue, E> {
                Ok(PropertyValue(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<PropertyValue, E> {
                Ok(PropertyValue(v.to_string()))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<PropertyValue, E> {
                Ok(PropertyValue(v.to_string()))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// `properties = { "client.rack" = "use1-az1", "linger.ms" = 20 }`: values as text.
pub(crate) fn property_table<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    let raw: BTreeMap<String, PropertyValue> = BTreeMap::deserialize(d)?;
    Ok(raw.into_iter().map(|(k, v)| (k, v.0)).collect())
}

/// The security settings of one Kafka client section, borrowed from its fields (the source
/// and the sink sections hold the same fields).
pub(crate) struct KafkaSecurityFields<'a> {
    pub security_protocol: KafkaSecurityProtocol,
    pub sasl_mechanism: Option<KafkaSaslMechanism>,
    pub sasl_username: Option<&'a str>,
    pub sasl_password_env: Option<&'a str>,
    pub ssl_ca_location: Option<&'a Path>,
    pub properties: &'a BTreeMap<String, String>,
}

/// Properties the typed fields set, with the field to use instead.
const TYPED_PROPERTIES: &[(&str, &str)] = &[
    ("security.protocol", "security_protocol"),
    ("sasl.mechanism", "sasl_mechanism"),
    ("sasl.mechanisms", "sasl_mechanism"),
    ("sasl.username", "sasl_username"),
    ("sasl.password", "sasl_password_env"),
    ("ssl.ca.location", "ssl_ca_location"),
];

/// Properties the pipeline sets itself: its offsets are committed only once outputs are
/// durable, and each worker reads an assigned share of partitions.
const PIPELINE_PROPERTIES: &[&str] = &[
    "bootstrap.servers",
    "metadata.broker.list",
    "group.id",
    "enable.auto.commit",
    "enable.auto.offset.store",
    "auto.offset.reset",
    "enable.partition.eof",
];

/// Whether a librdkafka property carries a secret (a password, a private key, a token):
/// such values never belong in a config file, which the manifest copies.
pub fn is_secret_property(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.contains("password")
        || key.contains("secret")
        || key == "ssl.key.pem"
        || key == "ssl_key"
        || key == "sasl.oauthbearer.config"
        || key == "sasl.jaas.config"
}

/// Check one section's security settings and read its password from the environment
/// (`env` looks a variable up). `Err` is (field, message), the field relative to the section.
pub(crate) fn check_security(
    s: &KafkaSecurityFields<'_>,
    base: &Path,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Option<KafkaSecret>, (String, String)> {
    let protocol = s.security_protocol.librdkafka_name();
    if s.security_protocol.uses_sasl() {
        if s.sasl_mechanism.is_none() {
            return Err((
                "sasl_mechanism".into(),
                format!(
                    "security_protocol `{protocol}` needs sasl_mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)"
                ),
            ));
        }
        if s.sasl_username.is_none_or(|u| u.trim().is_empty()) {
            return Err((
                "sasl_username".into(),
                format!("security_protocol `{protocol}` needs sasl_username"),
            ));
        }
        if s.sasl_password_env.is_none() {
            return Err((
                "sasl_password_env".into(),
                format!(
                    "security_protocol `{protocol}` needs sasl_password_env: the name of the environment variable that holds the password"
                ),
            ));
        }
    } else {
        for (field, set) in [
            ("sasl_mechanism", s.sasl_mechanism.is_some()),
            ("sasl_username", s.sasl_username.is_some()),
            ("sasl_password_env", s.sasl_password_env.is_some()),
        ] {
            if set {
                return Err((
                    field.into(),
                    format!(
                        "is set but security_protocol is `{protocol}`: SASL settings need sasl_plaintext or sasl_ssl"
                    ),
                ));
            }
        }
    }
    if let Some(ca) = s.ssl_ca_location {
        if !s.security_protocol.uses_tls() {
            return Err((
                "ssl_ca_location".into(),
                format!("is set but security_protocol is `{protocol}`: TLS needs ssl or sasl_ssl"),
            ));
        }
        if !base.join(ca).exists() {
            return Err((
                "ssl_ca_location".into(),
                format!("{} does not exist", ca.display()),
            ));
        }
    }
    for key in s.properties.keys() {
        let field = format!("properties.\"{key}\"");
        if key.trim().is_empty() {
            return Err((field, "an empty property name".into()));
        }
        if let Some((_, typed)) = TYPED_PROPERTIES.iter().find(|(p, _)| p == key) {
            let message = if *typed == "sasl_password_env" {
                "would put the password in the config file (and the manifest): set sasl_password_env to the name of the environment variable that holds it".to_string()
            } else {
                format!("is set by the typed field `{typed}`: set that instead")
            };
            return Err((field, message));
        }
        if is_secret_property(key) {
            return Err((
                field,
                "looks like a secret, which would be written to the config file and the manifest: secrets are not accepted in properties (only the SASL password, through sasl_password_env)".into(),
            ));
        }
        if PIPELINE_PROPERTIES.contains(&key.as_str()) {
            return Err((
                field,
                "is set by the pipeline (brokers, the consumer group and offsets committed once outputs are durable): it cannot be overridden".into(),
            ));
        }
    }
    let Some(var) = s.sasl_password_env else {
        return Ok(None);
    };
    if var.is_empty() || var.contains('=') || var.contains('\0') {
        return Err((
            "sasl_password_env".into(),
            format!("`{var}` is not an environment variable name"),
        ));
    }
    match env(var) {
        None => Err((
            "sasl_password_env".into(),
            format!("the environment variable `{var}` is not set (it must hold the SASL password)"),
        )),
        Some(value) => match value.into_string() {
            Ok(v) if v.is_empty() => Err((
                "sasl_password_env".into(),
                format!("the environment variable `{var}` is empty"),
            )),
            Ok(v) => Ok(Some(KafkaSecret(v))),
            Err(_) => Err((
                "sasl_password_env".into(),
                format!("the environment variable `{var}` is not valid UTF-8"),
            )),
        },
    }
}

/// The librdkafka properties of a checked section, in the order they are set: the typed
/// settings, then `properties`. The password is among them: hand them to a Kafka client only.
pub(crate) fn librdkafka_properties(
    s: &KafkaSecurityFields<'_>,
    password: Option<&KafkaSecret>,
) -> Vec<(String, String)> {
    let mut out = vec![(
        "security.protocol".to_string(),
        s.security_protocol.librdkafka_name().to_string(),
    )];
    if let Some(m) = s.sasl_mechanism {
        out.push(("sasl.mechanism".into(), m.librdkafka_name().into()));
    }
    if let Some(u) = s.sasl_username {
        out.push(("sasl.username".into(), u.into()));
    }
    if let Some(p) = password {
        out.push(("sasl.password".into(), p.expose().into()));
    }
    if let Some(ca) = s.ssl_ca_location {
        out.push(("ssl.ca.location".into(), ca.display().to_string()));
    }
    out.extend(s.properties.iter().map(|(k, v)| (k.clone(), v.clone())));
    out
}

/// A Kafka client's cluster: the bootstrap brokers and the librdkafka properties of its
/// security settings and `properties` (the password included). `Debug` shows the property
/// names only.
#[derive(Clone, PartialEq, Eq)]
pub struct KafkaClientSettings {
    /// Bootstrap brokers, `host:port[,host:port]` (librdkafka's `bootstrap.servers`).
    pub brokers: String,
    /// librdkafka properties as (key, value), in the order they are set: the typed security
    /// settings (the password included), then the section's `properties`.
    pub properties: Vec<(String, String)>,
}

impl std::fmt::Debug for KafkaClientSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaClientSettings")
            .field("brokers", &self.brokers)
            .field(
                "properties",
                &self.properties.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}
