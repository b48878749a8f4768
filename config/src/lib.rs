//! Typed run configuration (TOML), validated before any work. Every error names the file, the
//! line and the field; the CLI exits with status 2 on them.
//!
//! The reference of every field is `config/reference.toml`; `config/quickstart.toml` and
//! `config/paper-main.toml` are runnable examples.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;
use toml::Spanned;

mod kafka;
mod paper_families;
mod serve;
pub use kafka::{
    is_secret_property, KafkaClientSettings, KafkaSaslMechanism, KafkaSecret,
    KafkaSecurityProtocol, REDACTED,
};
pub use paper_families::{primary_paper_family, PaperFamilyEntry};
pub use serve::{parse_serve_address, ServeSection};

use c2s_records::{
    Arm, ArmSpec, Contract, CopyControl, Draft, Evidence, InterventionReadout, ItemPolicy,
    LocalAlphabet, OptionNames, OptionOrder, PromptVariant, QueryPositions, RequestLayout, Support,
    Template,
};

/// A configuration error: file, line (1-based, when known), field path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}{}: {field}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub field: String,
    pub message: String,
}

/// `[run]`: identity and seeds of the run.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Free-form name, recorded in the manifest.
    pub name: String,
    /// Seed of option display orders and code bindings.
    pub option_seed: u64,
    /// Shortest and longest accepted target length.
    pub min_length: usize,
    pub max_length: usize,
    /// Key order of the user JSON of every request: `paper` (state first, E.2/E.5; the
    /// default) or `state_last` (not the paper's; labelled `/state-last` in every arm label).
    pub request_layout: RequestLayout,
    /// WordNet 3.0 `dict` directory whose index files classify lexical outputs (D.17: indexed
    /// noun / indexed word / unindexed). Without it those outputs are `outside` (a warning
    /// says so).
    pub wordnet_dir: PathBuf,
    /// Duplicate item ids are rejected against every id of the run (0, the default, exact)
    /// or, with N > 0, against the last N ids only (bounded memory for endless streams). A
    /// duplicate further apart is not rejected: it runs again, and its rows repeat the item
    /// (`choice2seq stats` then refuses the directory as holding a repeated item).
    pub duplicate_id_window: usize,
    /// The run fails (exit 3) when more than this share of its computed model requests
    /// failed (0 to 1; 1 never fails on the share alone).
    pub max_failed_share: f64,
    /// Stop early (exit 3) once this many model requests in a row failed with the same error
    /// before any request was answered (0: never stop early).
    pub stop_after_identical_failures: u64,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            name: "run".into(),
            option_seed: 20261005,
            min_length: 3,
            max_length: 8,
            request_layout: RequestLayout::Paper,
            wordnet_dir: PathBuf::from("/usr/share/wordnet"),
            duplicate_id_window: 0,
            max_failed_share: 0.5,
            stop_after_identical_failures: 32,
        }
    }
}

/// `[[sources]]`: where items come from.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SourceConfig {
    /// A JSONL bank file (one item per line).
    Jsonl {
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
        path: PathBuf,
        #[serde(default)]
        limit: Option<usize>,
        #[serde(default)]
        select: Option<Selection>,
    },
    /// A Kafka topic of JSON item messages.
    Kafka {
        /// `host:port[,host:port]`.
        brokers: String,
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

fn yes() -> bool {
    true
}

/// `[model]`: the model and its engine.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// GGUF file, or a local Hugging Face directory (`config.json`, `*.safetensors`,
    /// `tokenizer.json`, `tokenizer_config.json`) for the prefix engine. With the `openai`
    /// engine: the served model's tokenizer and chat template (a GGUF or a directory with
    /// `tokenizer.json` and `tokenizer_config.json`), needed for scored contracts; may be left
    /// out for generated contracts through chat completions.
    #[serde(default)]
    pub path: PathBuf,
    /// `prefix` (our batched forward with prefix reuse, the default), `mistralrs`, `openai`
    /// (a served model, `[model.openai]`), or `simulated` (a seeded test double, for tests
    /// only).
    #[serde(default = "default_engine")]
    pub engine: String,
    /// Prefix-cache budget in MiB (prefix engine).
    #[serde(default = "default_cache_mb")]
    pub cache_mb: usize,
    /// Reuse cached prompt prefixes (prefix engine; off: every prompt is computed in full,
    /// the one-at-a-time baseline of `bench inference`). Answers are the same either way.
    #[serde(default = "yes")]
    pub prefix_reuse: bool,
    /// `[model.mistralrs]`: how the mistral.rs engine runs the model.
    #[serde(default)]
    pub mistralrs: MistralRsSection,
    /// `[model.openai]`: the server of the `openai` engine.
    #[serde(default)]
    pub openai: Option<OpenAiSection>,
}

/// `[model.openai]`: a model served behind an OpenAI-compatible API.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OpenAiSection {
    /// API root with its version, e.g. `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    /// The served model name (as `GET /models` lists it).
    pub model: String,
    /// Name of the environment variable that holds the API key; the key itself is never
    /// written to outputs or the manifest.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Seconds before one request times out.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
    /// Requests in flight at once per timely worker (each worker owns an engine).
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Retries on 429, 5xx, timeouts and connection errors (exponential backoff).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// First backoff in milliseconds (doubled per retry, at most 30 s).
    #[serde(default = "default_backoff_ms")]
    pub retry_backoff_ms: u64,
    /// `chat` (`/chat/completions`, the server's chat template; default) or `completions`
    /// (our rendering of the chat template, as for scoring) for generated contracts.
    #[serde(default = "default_generation_endpoint")]
    pub generation_endpoint: String,
    /// Scored contracts: `echo` (default; one `/completions` request per option with prompt
    /// log-probabilities, exact for any option) or `top_logprobs` (one request per decision
    /// reading the first token's top `top_logprobs` log-probabilities, when every option is
    /// one token and all are returned; other decisions fall back to `echo`).
    #[serde(default = "default_scoring")]
    pub scoring: String,
    /// How many top log-probabilities `top_logprobs` scoring asks for (vLLM's default cap is
    /// 20).
    #[serde(default = "default_top_logprobs")]
    pub top_logprobs: u32,
    /// Sent as `chat_template_kwargs` with chat completions (vLLM, SGLang): e.g.
    /// `{ enable_thinking = false }` for Qwen3 servers, as the paper disables thinking and as
    /// our own rendering does. Unset: not sent (hosted APIs reject unknown parameters).
    #[serde(default)]
    pub chat_template_kwargs: Option<serde_json::Value>,
    /// Largest response body read, in bytes (a longer one is an error naming the URL).
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: u64,
    /// Accept any TLS certificate (self-signed, expired, another host's). Off by default; when
    /// on, a warning is logged and the manifest's model identity records it.
    #[serde(default)]
    pub insecure_skip_verify: bool,
}

fn default_max_response_bytes() -> u64 {
    16 * 1024 * 1024
}

fn default_scoring() -> String {
    "echo".into()
}
fn default_top_logprobs() -> u32 {
    20
}

fn default_timeout_s() -> f64 {
    120.0
}
fn default_concurrency() -> usize {
    4
}
fn default_retries() -> u32 {
    4
}
fn default_backoff_ms() -> u64 {
    500
}
fn default_generation_endpoint() -> String {
    "chat".into()
}

/// `[model.mistralrs]`: settings of the mistral.rs engine.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MistralRsSection {
    /// `reference`: exact f32 weights on the CPU, no caching (the CPU default);
    /// `native`: weights in their own format, PagedAttention (CUDA) and mistral.rs's prefix
    /// cache, batched scoring and generation (the default of a `cuda` build).
    /// Unset: chosen by the build.
    pub mode: Option<String>,
    /// PagedAttention on a CUDA device (native mode).
    pub paged_attention: bool,
    /// Tokens of KV cache PagedAttention reserves on the GPU.
    pub kv_cache_tokens: usize,
    /// Sequences mistral.rs schedules together.
    pub max_sequences: usize,
    /// Sequences whose KV caches mistral.rs's prefix cache keeps (native mode; 0: off).
    pub prefix_cache: usize,
    /// Weight/activation dtype of a Hugging Face directory in native mode: `auto` (mistral.rs's
    /// choice: bf16 where the device computes it), `bf16`, `f16` or `f32`. GGUF weights keep
    /// their quantized format.
    pub dtype: String,
}

impl Default for MistralRsSection {
    fn default() -> Self {
        MistralRsSection {
            mode: None,
            paged_attention: true,
            kv_cache_tokens: 65536,
            max_sequences: 64,
            prefix_cache: 64,
            dtype: "auto".into(),
        }
    }
}

fn default_engine() -> String {
    "prefix".into()
}

fn default_cache_mb() -> usize {
    1024
}

/// `[[arms]]`: one interface or control to run on every item.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ArmEntry {
    /// Native, NativeControl, Independent, Serial, TeacherForced, GoldCopy, IncorrectCopy,
    /// SelfPlanSpell, SerialStop, WholeGenerate, PrefixContinue, PrefixIntervention.
    pub arm: String,
    /// Full, FullFill, UnionCall, UnionFill, TrieCall, TrieFill (local arms; default Full).
    #[serde(default)]
    pub support: Option<String>,
    /// `code` (scored codes, default), `gencode`, `char` or `string` (generated).
    #[serde(default)]
    pub contract: Option<String>,
    /// Prompt variant v1, v2, v3 (default v1).
    #[serde(default)]
    pub variant: Option<String>,
    /// Readout template T0, T1, T2 (copy arms).
    #[serde(default)]
    pub template: Option<String>,
    /// Copy evidence raw, indexed, direct, padded or padded-tokens (copy arms; default raw).
    #[serde(default)]
    pub evidence: Option<String>,
    /// Copy control independent or serial (copy arms; default serial).
    #[serde(default)]
    pub copy_control: Option<String>,
    /// Option order: 0 = reference, k > 0 = seeded permutation Ok.
    #[serde(default)]
    pub order: Option<u32>,
    /// Readout option names (B.5): `opaque` (default), `opaque_remapped`, `readable_aligned`,
    /// `readable_conflicting`.
    #[serde(default)]
    pub names: Option<String>,
    /// Greedy budget in new tokens (generated contracts); default 8 per character, 32 per
    /// complete string. B.3's whole-answer panel uses 64.
    #[serde(default)]
    pub max_new_tokens: Option<u32>,
    /// Full support's alphabet: `domain` (default) or `lowercase` (all 26 letters; D.7's a–z
    /// factor on a–j sources). Local arms with support Full or FullFill.
    #[serde(default)]
    pub alphabet: Option<String>,
    /// One-based positions a Fill support queries all the same (D.7's six-query
    /// controllers: `also_query = [1, 4, 8, 12]`).
    #[serde(default)]
    pub also_query: Option<Vec<u32>>,
    /// PrefixIntervention (A.4): `correct` (default) or `error` draft.
    #[serde(default)]
    pub draft: Option<String>,
    /// PrefixIntervention (A.4): `character` (default) or `whole` readout.
    #[serde(default)]
    pub readout: Option<String>,
    /// D.2's repeated observations: 0 (default) the setting's first request, k > 0 its k-th
    /// identical repeat (label suffix `/rk`).
    #[serde(default)]
    pub repeat: Option<u32>,
}

/// `[[comparisons]]`: a paired comparison of two configured arms (labels), in an explicit
/// direction: `native` is the reference side whose correct items are SCR's denominator,
/// `serial` the side compared with it. Any two distinct arms may be paired — the main tables
/// pair Native with a local arm; Table 3 and B.1 pair Native with WholeGenerate ("The same
/// checkpoint and items are used in Native and legal-code Serial … Joint, lost and gained
/// counts below retain this pairing", B.3).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ComparisonEntry {
    /// Label of the reference arm, e.g. `Native/code`.
    #[serde(alias = "reference")]
    pub native: String,
    /// Label of the compared arm, e.g. `Serial/Full/code` or `WholeGenerate/string/max64`.
    #[serde(alias = "compared")]
    pub serial: String,
}

/// `[inference]`: batching and flow control.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct InferenceSection {
    /// Most requests per engine batch.
    pub max_batch: usize,
    /// Most distinct requests queued or computing (backpressure).
    pub max_in_flight: usize,
    /// Milliseconds the engine waits to fill a batch.
    pub linger_ms: u64,
    /// Most items whose trajectories are in progress at once.
    pub max_active_items: usize,
    /// Answer identical requests once per run (off only for baseline measurements).
    pub dedup: bool,
    /// How the batching service drives an engine that can batch continuously.
    pub batching: Batching,
}

/// `[inference] batching`: how requests reach an engine that batches continuously (the
/// prefix engine, mistral.rs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Batching {
    /// Each request joins as it comes and leaves once answered (the default).
    #[default]
    Continuous,
    /// A batch at a time: what is queued runs together and the next batch waits for the
    /// whole batch (the baseline of measurements).
    Batch,
}

impl Default for InferenceSection {
    fn default() -> Self {
        InferenceSection {
            max_batch: 32,
            max_in_flight: 256,
            linger_ms: 2,
            max_active_items: 64,
            dedup: true,
            batching: Batching::Continuous,
        }
    }
}

/// A Holm family: comparisons corrected together.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FamilyEntry {
    pub name: String,
    /// Comparison labels `"<native> vs <serial>"`.
    pub comparisons: Vec<String>,
    /// `per_model_domain` (default), `per_model`, `per_domain` or `global`; any other string
    /// is a config error.
    #[serde(default = "default_scope")]
    pub scope: String,
}

fn default_scope() -> String {
    "per_model_domain".into()
}

/// The scopes a Holm family may name.
pub const FAMILY_SCOPES: [&str; 4] = ["per_model_domain", "per_model", "per_domain", "global"];

/// The paper's primary Holm family: "The primary six Native/Serial exact McNemar tests share a
/// Holm correction at 0.05" (A.6) — Native against Serial under the code contract (Table 1's
/// code rows), across models and domains. `None` when `comparisons` lacks that comparison.
pub fn primary_family(comparison_labels: &[String]) -> Option<FamilyEntry> {
    let primary = comparison_label(
        &ArmSpec::new(Arm::Native).label(),
        &ArmSpec::new(Arm::Serial).label(),
    );
    comparison_labels
        .iter()
        .find(|c| **c == primary)
        .map(|c| FamilyEntry {
            name: "primary".into(),
            comparisons: vec![c.clone()],
            scope: "global".into(),
        })
}

/// The label of a comparison in `[[stats.families]]` and in outputs: `"<whole> vs <local>"`.
pub fn comparison_label(whole: &str, local: &str) -> String {
    format!("{whole} vs {local}")
}

/// `[stats]`: statistics and snapshots.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatsSection {
    /// Bootstrap draws per snapshot (9,999; 99,999 for final tables).
    pub bootstrap_draws: u32,
    /// Bootstrap seed.
    pub seed: u64,
    /// Interval level.
    pub level: f64,
    /// Write a metric snapshot every this many new outcomes…
    pub snapshot_every: u64,
    /// …or every this many seconds (and always at the end).
    pub snapshot_seconds: f64,
    /// Confidence-calibration metrics (default true). `false`: no calibration rows, and a live
    /// run keeps no per-string confidence keys (bounded statistics state for endless streams).
    pub calibration: bool,
    /// Holm families. Default: the paper's primary family (A.6), Native/code vs
    /// Serial/Full/code across models and domains, when the run has that comparison; the
    /// resolved families are what the manifest records.
    pub families: Vec<FamilyEntry>,
    /// Unit contrasts (`choice2seq contrasts`, the report): mean within-unit differences
    /// between two sets of cells, e.g. B.4's letter-minus-digit Serial EM or D.7's factor
    /// contrasts.
    pub contrasts: Vec<ContrastEntry>,
    /// Cell summaries beside the contrasts: one arm's correct count on the selected items,
    /// and with `native` its joint/Native counts (D.7's Table D8).
    pub cells: Vec<CellEntry>,
    /// The Holm families the paper declares for this panel, with the paper's number of tests
    /// (`paper_families.rs`); the report sets each beside the family this run computed.
    pub paper_families: Vec<PaperFamilyEntry>,
}

/// Which trajectories a side of a contrast (or a cell) holds: one arm, optionally only on
/// items of one domain, placement or operation.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SelectorEntry {
    /// A configured arm label.
    pub arm: String,
    #[serde(default)]
    pub domain: Option<String>,
    /// `early` or `late` (symbolic items).
    #[serde(default)]
    pub placement: Option<String>,
    /// `copy` or `reverse` (symbolic items).
    #[serde(default)]
    pub operation: Option<String>,
}

/// `[[stats.contrasts]]`: compared − reference, averaged within each unit (a symbolic item's
/// base or source, else the item) and then over units.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ContrastEntry {
    pub name: String,
    pub compared: Vec<SelectorEntry>,
    pub reference: Vec<SelectorEntry>,
    /// Contrasts naming the same family share a Holm correction over every model; without a
    /// family a contrast is corrected alone.
    #[serde(default)]
    pub family: Option<String>,
    /// A difference of differences `(a − b) − (c − d)`, written as `compared = [a, d]`,
    /// `reference = [b, c]` with one trajectory per arm in each unit: the sides' mean
    /// difference is half of it, so the estimate and interval are doubled (the sign test is
    /// unchanged). B.5's extra conflict loss, D.13's template interactions.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub difference_of_differences: bool,
    /// What each trajectory is scored on: `correct` (gold EM, the default) or `fidelity` (the
    /// output equals the supplied plan; copy arms only, A.5's fresh-plan indexing contrasts).
    #[serde(default, skip_serializing_if = "c2s_records::Endpoint::is_correct")]
    pub endpoint: c2s_records::Endpoint,
}

/// `[[stats.cells]]`: one arm's correct count on selected items, with `native` also the items
/// both arms got right over those the Native arm got right.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CellEntry {
    pub name: String,
    pub arm: String,
    #[serde(default)]
    pub native: Option<String>,
    #[serde(default)]
    pub domain: Option<String>,
    #[serde(default)]
    pub placement: Option<String>,
    #[serde(default)]
    pub operation: Option<String>,
}

impl Default for StatsSection {
    fn default() -> Self {
        StatsSection {
            bootstrap_draws: 9999,
            seed: 20261005,
            level: 0.95,
            snapshot_every: 100,
            snapshot_seconds: 30.0,
            calibration: true,
            families: vec![],
            contrasts: vec![],
            cells: vec![],
            paper_families: vec![],
        }
    }
}

/// `[output.kafka]`: optional publication of outcomes and metric snapshots.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct KafkaSink {
    pub brokers: String,
    pub outcomes_topic: String,
    pub metrics_topic: String,
    /// Security settings as for a Kafka source ([`kafka`]).
    #[serde(default)]
    pub security_protocol: KafkaSecurityProtocol,
    #[serde(default)]
    pub sasl_mechanism: Option<KafkaSaslMechanism>,
    #[serde(default)]
    pub sasl_username: Option<String>,
    #[serde(default)]
    pub sasl_password_env: Option<String>,
    #[serde(default)]
    pub ssl_ca_location: Option<PathBuf>,
    #[serde(default, deserialize_with = "kafka::property_table")]
    pub properties: std::collections::BTreeMap<String, String>,
    /// The password read from `sasl_password_env` when the config is loaded.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub sasl_password: Option<KafkaSecret>,
}

impl KafkaSink {
    fn security_fields(&self) -> kafka::KafkaSecurityFields<'_> {
        kafka::KafkaSecurityFields {
            security_protocol: self.security_protocol,
            sasl_mechanism: self.sasl_mechanism,
            sasl_username: self.sasl_username.as_deref(),
            sasl_password_env: self.sasl_password_env.as_deref(),
            ssl_ca_location: self.ssl_ca_location.as_deref(),
            properties: &self.properties,
        }
    }

    /// The sink's cluster settings (brokers and librdkafka properties, the password included).
    pub fn client(&self) -> KafkaClientSettings {
        KafkaClientSettings {
            brokers: self.brokers.clone(),
            properties: kafka::librdkafka_properties(
                &self.security_fields(),
                self.sasl_password.as_ref(),
            ),
        }
    }
}

/// `[output]`: Parquet parts.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputSection {
    /// Run directory (the CLI's --run-dir overrides it).
    pub dir: Option<PathBuf>,
    /// Roll a part file after this many rows…
    pub part_rows: usize,
    /// …or after this many seconds.
    pub part_seconds: f64,
    /// How long a part that cannot be written (a full disk) is retried, with feeding paused,
    /// before the run stops with an error.
    pub max_write_wait_seconds: f64,
    pub kafka: Option<KafkaSink>,
}

impl Default for OutputSection {
    fn default() -> Self {
        OutputSection {
            dir: None,
            part_rows: 2000,
            part_seconds: 5.0,
            max_write_wait_seconds: 600.0,
            kafka: None,
        }
    }
}

/// `[copy_plans]`: the supplied targets that IncorrectCopy arms copy (D.12: "Ninety-six
/// parents … each receive matched correct/incorrect targets under Raw and Indexed").
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CopyPlansSection {
    /// A plan file (JSON lines `{item_id, plan, origin, source}`), relative to the directory
    /// the run starts in.
    pub path: PathBuf,
    /// The plans, read from `path` when the config is loaded.
    #[serde(skip)]
    pub plans: std::collections::BTreeMap<String, c2s_records::SuppliedPlan>,
}

/// The file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    run: RunSection,
    model: Spanned<ModelSection>,
    #[serde(default)]
    sources: Vec<Spanned<SourceConfig>>,
    #[serde(default)]
    arms: Vec<Spanned<ArmEntry>>,
    #[serde(default)]
    coverage: Option<Spanned<CoverageSection>>,
    #[serde(default)]
    dialogue: Option<Spanned<DialogueSection>>,
    #[serde(default)]
    comparisons: Vec<Spanned<ComparisonEntry>>,
    #[serde(default)]
    inference: Option<Spanned<InferenceSection>>,
    #[serde(default)]
    stats: Option<Spanned<StatsSection>>,
    #[serde(default)]
    output: Option<Spanned<OutputSection>>,
    #[serde(default)]
    copy_plans: Option<Spanned<CopyPlansSection>>,
    #[serde(default)]
    serve: Option<ServeSection>,
}

/// A validated configuration.
#[derive(Debug, Clone, Serialize)]
pub struct RunConfig {
    pub run: RunSection,
    pub model: ModelSection,
    pub sources: Vec<SourceConfig>,
    /// Arms in file order, parsed.
    pub arms: Vec<ArmSpec>,
    /// Comparisons as (whole-answer label, local label).
    pub comparisons: Vec<(String, String)>,
    pub inference: InferenceSection,
    pub stats: StatsSection,
    pub output: OutputSection,
    /// Supplied copy plans (IncorrectCopy arms).
    pub copy_plans: Option<CopyPlansSection>,
    /// A candidate-coverage run (the second protocol): its cases replace items and arms.
    pub coverage: Option<CoverageSection>,
    /// A dialogue-state run (Appendix C): its dialogues replace items and arms.
    pub dialogue: Option<DialogueSection>,
    /// `[serve]`: the live monitor (`--serve` overrides it).
    pub serve: Option<ServeSection>,
    /// Where the config was read from.
    pub file: PathBuf,
}

impl RunConfig {
    pub fn item_policy(&self) -> ItemPolicy {
        ItemPolicy {
            min_length: self.run.min_length,
            max_length: self.run.max_length,
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// The line where `key` is assigned in the table whose header starts at `span` (toml spans a
/// table of an array of tables by its header only), or `span` itself.
fn key_span(text: &str, span: &std::ops::Range<usize>, key: &str) -> std::ops::Range<usize> {
    let start = span.start.min(text.len());
    let mut offset = start;
    for (n, line) in text[start..].split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if n > 0 && trimmed.starts_with('[') {
            break;
        }
        if let Some(rest) = trimmed.strip_prefix(key) {
            if rest.trim_start().starts_with('=') {
                return offset..offset + line.len();
            }
        }
        offset += line.len();
    }
    span.clone()
}

/// Read and validate a config file.
pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: None,
        field: "-".into(),
        message: format!("cannot read: {e}"),
    })?;
    parse(&text, path)
}

/// Validate config `text` (read from `file`, for messages); relative paths resolve against the
/// current directory.
pub fn parse(text: &str, file: &Path) -> Result<RunConfig, ConfigError> {
    parse_in(text, file, Path::new("."))
}

/// Validate config `text`, resolving relative paths against `base` for existence checks.
pub fn parse_in(text: &str, file: &Path, base: &Path) -> Result<RunConfig, ConfigError> {
    parse_with_env(text, file, base, &|var| std::env::var_os(var))
}

/// [`parse_in`], with `env` looking up environment variables (the Kafka sections'
/// `sasl_password_env`).
pub fn parse_with_env(
    text: &str,
    file: &Path,
    base: &Path,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<RunConfig, ConfigError> {
    let raw: RawConfig = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        let message = e.message().to_string();
        let field = message
            .split('`')
            .nth(1)
            .map(str::to_string)
            .unwrap_or_else(|| "-".into());
        ConfigError {
            file: file.to_path_buf(),
            line,
            field,
            message,
        }
    })?;
    // A span of None (a section left out, so defaulted) gives no line.
    let err = |span: Option<std::ops::Range<usize>>, field: String, message: String| ConfigError {
        file: file.to_path_buf(),
        line: span.map(|s| line_of(text, s.start)),
        field,
        message,
    };
    fn split<T: Default>(s: Option<Spanned<T>>) -> (T, Option<std::ops::Range<usize>>) {
        match s {
            Some(s) => {
                let span = s.span();
                (s.into_inner(), Some(span))
            }
            None => (T::default(), None),
        }
    }
    if raw.run.min_length == 0 || raw.run.min_length > raw.run.max_length {
        return Err(ConfigError {
            file: file.to_path_buf(),
            line: None,
            field: "run.min_length".into(),
            message: format!(
                "min_length {} must be at least 1 and at most max_length {}",
                raw.run.min_length, raw.run.max_length
            ),
        });
    }
    if !(0.0..=1.0).contains(&raw.run.max_failed_share) {
        return Err(ConfigError {
            file: file.to_path_buf(),
            line: None,
            field: "run.max_failed_share".into(),
            message: format!(
                "max_failed_share {} must be between 0 and 1",
                raw.run.max_failed_share
            ),
        });
    }
    let model_span = Some(raw.model.span());
    let model = raw.model.into_inner();
    if !matches!(
        model.engine.as_str(),
        "prefix" | "mistralrs" | "openai" | "simulated"
    ) {
        return Err(err(
            model_span,
            "model.engine".into(),
            format!(
                "unknown engine `{}` (prefix, mistralrs, openai or simulated)",
                model.engine
            ),
        ));
    }
    let remote = model.engine == "openai";
    match (&model.openai, remote) {
        (None, true) => {
            return Err(err(
                model_span,
                "model.openai".into(),
                "the openai engine needs [model.openai] with base_url and model".into(),
            ))
        }
        (Some(_), false) => {
            return Err(err(
                model_span,
                "model.openai".into(),
                format!(
                    "[model.openai] is set but the engine is `{}` (set engine = \"openai\")",
                    model.engine
                ),
            ))
        }
        (Some(o), true) => {
            let problem =
                if !(o.base_url.starts_with("http://") || o.base_url.starts_with("https://")) {
                    Some((
                        "model.openai.base_url",
                        format!("`{}` is not an http(s) URL", o.base_url),
                    ))
                } else if o.model.is_empty() {
                    Some(("model.openai.model", "is empty".to_string()))
                } else if o.concurrency == 0 {
                    Some(("model.openai.concurrency", "must be at least 1".to_string()))
                } else if o.timeout_s.is_nan() || o.timeout_s <= 0.0 {
                    Some(("model.openai.timeout_s", "must be positive".to_string()))
                } else if !matches!(o.scoring.as_str(), "echo" | "top_logprobs") {
                    Some((
                        "model.openai.scoring",
                        format!("unknown scoring `{}` (echo, top_logprobs)", o.scoring),
                    ))
                } else if o.max_response_bytes == 0 {
                    Some((
                        "model.openai.max_response_bytes",
                        "must be at least 1".to_string(),
                    ))
                } else if o.top_logprobs == 0 {
                    Some((
                        "model.openai.top_logprobs",
                        "must be at least 1".to_string(),
                    ))
                } else if !matches!(o.generation_endpoint.as_str(), "chat" | "completions") {
                    Some((
                        "model.openai.generation_endpoint",
                        format!(
                            "unknown endpoint `{}` (chat, completions)",
                            o.generation_endpoint
                        ),
                    ))
                } else {
                    None
                };
            if let Some((field, message)) = problem {
                return Err(err(model_span, field.into(), message));
            }
        }
        (None, false) => {}
    }
    let no_path = model.path.as_os_str().is_empty();
    if no_path && !remote && model.engine != "simulated" {
        return Err(err(model_span, "model.path".into(), "missing".into()));
    }
    if model.engine != "simulated" && !no_path && !base.join(&model.path).exists() {
        return Err(err(
            model_span,
            "model.path".into(),
            format!(
                "{} does not exist (scripts/fetch-model.sh installs the default model)",
                model.path.display()
            ),
        ));
    }
    let m = &model.mistralrs;
    if let Some(mode) = m
        .mode
        .as_deref()
        .filter(|m| !matches!(*m, "reference" | "native"))
    {
        return Err(err(
            model_span,
            "model.mistralrs.mode".into(),
            format!("unknown mode `{mode}` (reference or native)"),
        ));
    }
    if !matches!(m.dtype.as_str(), "auto" | "bf16" | "f16" | "f32") {
        return Err(err(
            model_span,
            "model.mistralrs.dtype".into(),
            format!("unknown dtype `{}` (auto, bf16, f16 or f32)", m.dtype),
        ));
    }
    if m.max_sequences == 0 || m.kv_cache_tokens == 0 {
        return Err(err(
            model_span,
            "model.mistralrs".into(),
            "max_sequences and kv_cache_tokens must be at least 1".into(),
        ));
    }
    let mut sources = Vec::new();
    for (i, s) in raw.sources.into_iter().enumerate() {
        let span = Some(s.span());
        let s = s.into_inner();
        let mut s = s;
        match &mut s {
            SourceConfig::Jsonl { path, select, .. }
            | SourceConfig::Parquet { path, select, .. } => {
                if !base.join(&*path).exists() {
                    return Err(err(
                        span,
                        format!("sources[{i}].path"),
                        format!("{} does not exist", path.display()),
                    ));
                }
                if let Some(sel) = select {
                    resolve_selection(sel, base).map_err(|(field, message)| {
                        err(
                            span.clone(),
                            format!("sources[{i}].select.{field}"),
                            message,
                        )
                    })?;
                }
            }
            SourceConfig::Kafka { brokers, topic, .. } => {
                if brokers.trim().is_empty() || topic.trim().is_empty() {
                    return Err(err(
                        span,
                        format!("sources[{i}]"),
                        "a Kafka source needs brokers and topic".into(),
                    ));
                }
            }
        }
        if let Some((fields, _)) = s.kafka_security() {
            let password =
                kafka::check_security(&fields, base, env).map_err(|(field, message)| {
                    let key = field.split('.').next().unwrap_or(&field);
                    let line = span.as_ref().map(|sp| key_span(text, sp, key));
                    err(line, format!("sources[{i}].{field}"), message)
                })?;
            if let SourceConfig::Kafka { sasl_password, .. } = &mut s {
                *sasl_password = password;
            }
        }
        sources.push(s);
    }
    if sources.is_empty() {
        return Err(ConfigError {
            file: file.to_path_buf(),
            line: None,
            field: "sources".into(),
            message: "at least one [[sources]] entry is needed".into(),
        });
    }
    let coverage = match raw.coverage {
        None => None,
        Some(section) => {
            let span = Some(section.span());
            let mut section = section.into_inner();
            resolve_coverage(&mut section, base).map_err(|(field, message)| {
                err(span.clone(), format!("coverage.{field}"), message)
            })?;
            if !raw.arms.is_empty() {
                return Err(err(
                    span,
                    "arms".into(),
                    "a [coverage] run has no [[arms]]: its decisions are set in [coverage]".into(),
                ));
            }
            if let Some(i) = item_selector_source(&sources) {
                return Err(err(
                    None,
                    format!("sources[{i}].select"),
                    "coverage cases are selected by ids or ids_file only".into(),
                ));
            }
            Some(section)
        }
    };
    let dialogue = match raw.dialogue {
        None => None,
        Some(section) => {
            let span = Some(section.span());
            let mut section = section.into_inner();
            resolve_dialogue(&mut section).map_err(|(field, message)| {
                err(span.clone(), format!("dialogue.{field}"), message)
            })?;
            if !raw.arms.is_empty() || coverage.is_some() {
                return Err(err(
                    span,
                    "dialogue".into(),
                    "a [dialogue] run has no [[arms]] and no [coverage]: its arms are set in [dialogue]".into(),
                ));
            }
            if let Some(i) = item_selector_source(&sources) {
                return Err(err(
                    None,
                    format!("sources[{i}].select"),
                    "dialogues are selected by ids or ids_file only".into(),
                ));
            }
            Some(section)
        }
    };
    if raw.arms.is_empty() && coverage.is_none() && dialogue.is_none() {
        return Err(ConfigError {
            file: file.to_path_buf(),
            line: None,
            field: "arms".into(),
            message:
                "at least one [[arms]] entry is needed (or a [coverage] or [dialogue] section)"
                    .into(),
        });
    }
    let mut arms: Vec<ArmSpec> = Vec::new();
    for (i, a) in raw.arms.into_iter().enumerate() {
        let span = Some(a.span());
        let spec = arm_spec(a.get_ref()).map_err(|(field, message)| {
            let at = span.as_ref().map(|s| key_span(text, s, &field));
            err(at, format!("arms[{i}].{field}"), message)
        })?;
        c2s_protocol::validate_spec(&spec)
            .map_err(|message| err(span.clone(), format!("arms[{i}]"), message))?;
        // D.9's token control matches "the pinned tokenizer's full rendered Indexed request":
        // the run's model must bring its tokenizer and chat template.
        if spec.evidence == Evidence::PaddedTokens
            && (model.engine == "simulated" || model.path.as_os_str().is_empty())
        {
            let at = span.as_ref().map(|s| key_span(text, s, "evidence"));
            return Err(err(
                at,
                format!("arms[{i}].evidence"),
                format!(
                    "padded-tokens matches the model's tokenizer, but the `{}` engine has none (set [model] path to the model's GGUF or tokenizer directory)",
                    model.engine
                ),
            ));
        }
        if arms.contains(&spec) {
            return Err(err(
                span,
                format!("arms[{i}]"),
                format!("arm {} is listed twice", spec.label()),
            ));
        }
        arms.push(spec);
    }
    let labels: Vec<String> = arms.iter().map(ArmSpec::label).collect();
    let mut comparisons = Vec::new();
    for (i, c) in raw.comparisons.iter().enumerate() {
        let span = Some(c.span());
        let c = c.get_ref();
        for (field, label) in [("native", &c.native), ("serial", &c.serial)] {
            let at = span.as_ref().map(|s| key_span(text, s, field));
            if !labels.contains(label) {
                return Err(err(
                    at,
                    format!("comparisons[{i}].{field}"),
                    format!(
                        "`{label}` is not one of the configured arms ({})",
                        labels.join(", ")
                    ),
                ));
            }
        }
        if c.native == c.serial {
            return Err(err(
                span.as_ref().map(|s| key_span(text, s, "serial")),
                format!("comparisons[{i}].serial"),
                format!("`{}` cannot be paired with itself", c.serial),
            ));
        }
        comparisons.push((c.native.clone(), c.serial.clone()));
    }
    if raw.comparisons.is_empty() {
        for w in arms.iter().filter(|a| a.arm.is_whole_answer()) {
            for l in arms.iter().filter(|a| a.arm.is_local()) {
                comparisons.push((w.label(), l.label()));
            }
        }
    }
    let (inference, inference_span) = split(raw.inference);
    for (field, v) in [
        ("max_batch", inference.max_batch),
        ("max_in_flight", inference.max_in_flight),
        ("max_active_items", inference.max_active_items),
    ] {
        if v == 0 {
            return Err(err(
                inference_span.clone(),
                format!("inference.{field}"),
                "must be at least 1".into(),
            ));
        }
    }
    let (stats, stats_span) = split(raw.stats);
    if !(stats.level > 0.0 && stats.level < 1.0) {
        return Err(err(
            stats_span.clone(),
            "stats.level".into(),
            format!("{} is not in (0, 1)", stats.level),
        ));
    }
    if stats.bootstrap_draws == 0 {
        return Err(err(
            stats_span.clone(),
            "stats.bootstrap_draws".into(),
            "must be at least 1".into(),
        ));
    }
    if stats.snapshot_every == 0 || stats.snapshot_seconds.is_nan() || stats.snapshot_seconds <= 0.0
    {
        return Err(err(
            stats_span.clone(),
            "stats.snapshot_every".into(),
            "snapshot_every and snapshot_seconds must be positive".into(),
        ));
    }
    let comparison_labels: Vec<String> = comparisons
        .iter()
        .map(|(a, b)| comparison_label(a, b))
        .collect();
    for (i, f) in stats.families.iter().enumerate() {
        if !FAMILY_SCOPES.contains(&f.scope.as_str()) {
            let at = stats_span
                .as_ref()
                .map(|s| key_span(text, s, "scope"))
                .or(stats_span.clone());
            return Err(err(
                at,
                format!("stats.families[{i}].scope"),
                format!("unknown scope `{}` ({})", f.scope, FAMILY_SCOPES.join(", ")),
            ));
        }
        for c in &f.comparisons {
            if !comparison_labels.contains(c) {
                return Err(err(
                    stats_span.clone(),
                    format!("stats.families[{i}].comparisons"),
                    format!(
                        "`{c}` is not a configured comparison ({})",
                        comparison_labels.join("; ")
                    ),
                ));
            }
        }
    }
    let copy_labels: Vec<String> = arms
        .iter()
        .filter(|a| a.arm.is_copy())
        .map(ArmSpec::label)
        .collect();
    check_contrasts(&stats, &labels, &copy_labels)
        .map_err(|(field, message)| err(stats_span.clone(), field, message))?;
    paper_families::check_paper_families(&stats)
        .map_err(|(field, message)| err(stats_span.clone(), field, message))?;
    // Arms, comparisons and families above are written and checked with the paper-layout
    // labels; a non-paper layout then applies to every arm and its label suffix to every name.
    let layout = raw.run.request_layout;
    let relabel = |label: &str| format!("{label}{}", layout.label_suffix());
    for spec in &mut arms {
        spec.layout = layout;
    }
    let comparisons: Vec<(String, String)> = comparisons
        .iter()
        .map(|(a, b)| (relabel(a), relabel(b)))
        .collect();
    let mut stats = stats;
    for f in &mut stats.families {
        f.comparisons = f
            .comparisons
            .iter()
            .map(|c| {
                comparisons
                    .iter()
                    .zip(&comparison_labels)
                    .find(|(_, plain)| *plain == c)
                    .map(|((a, b), _)| comparison_label(a, b))
                    .unwrap_or_else(|| c.clone())
            })
            .collect();
    }
    for c in &mut stats.contrasts {
        for sel in c.compared.iter_mut().chain(c.reference.iter_mut()) {
            sel.arm = relabel(&sel.arm);
        }
    }
    for c in &mut stats.cells {
        c.arm = relabel(&c.arm);
        c.native = c.native.as_deref().map(relabel);
    }
    if stats.families.is_empty() {
        let labels: Vec<String> = comparisons
            .iter()
            .map(|(a, b)| comparison_label(a, b))
            .collect();
        if let Some(mut family) = primary_family(&comparison_labels) {
            // The primary comparison under this run's layout.
            if let Some(k) = comparison_labels
                .iter()
                .position(|l| family.comparisons.contains(l))
            {
                family.comparisons = vec![labels[k].clone()];
            }
            stats.families.push(family);
        }
    }
    paper_families::add_primary_size(&stats.families, &mut stats.paper_families);
    let (mut output, output_span) = split(raw.output);
    if output.part_rows == 0 || output.part_seconds.is_nan() || output.part_seconds <= 0.0 {
        return Err(err(
            output_span,
            "output.part_rows".into(),
            "part_rows and part_seconds must be positive".into(),
        ));
    }
    if !(output.max_write_wait_seconds.is_finite() && output.max_write_wait_seconds >= 0.0) {
        return Err(err(
            output_span,
            "output.max_write_wait_seconds".into(),
            format!(
                "must be a finite, non-negative number of seconds, got {}",
                output.max_write_wait_seconds
            ),
        ));
    }
    if let Some(k) = &output.kafka {
        for (field, value) in [
            ("brokers", &k.brokers),
            ("outcomes_topic", &k.outcomes_topic),
            ("metrics_topic", &k.metrics_topic),
        ] {
            if value.trim().is_empty() {
                return Err(err(
                    output_span,
                    format!("output.kafka.{field}"),
                    "must not be empty".into(),
                ));
            }
        }
        if k.outcomes_topic == k.metrics_topic {
            return Err(err(
                output_span,
                "output.kafka.metrics_topic".into(),
                "outcomes and metrics need topics of their own".into(),
            ));
        }
    }
    if let Some(k) = &mut output.kafka {
        k.sasl_password = kafka::check_security(&k.security_fields(), base, env).map_err(
            |(field, message)| {
                // The line of the field in `[output.kafka]`, else of `[output]`.
                let key = field.split('.').next().unwrap_or(&field);
                let line = text
                    .find("[output.kafka]")
                    .map(|start| key_span(text, &(start..start + 1), key))
                    .or(output_span.clone());
                err(line, format!("output.kafka.{field}"), message)
            },
        )?;
    }
    let copy_plans = match raw.copy_plans {
        None => None,
        Some(section) => {
            let span = Some(section.span());
            let mut section = section.into_inner();
            let shown = section.path.display().to_string();
            let text = std::fs::read_to_string(base.join(&section.path)).map_err(|e| {
                err(
                    span.clone(),
                    "copy_plans.path".into(),
                    format!("cannot read {shown}: {e}"),
                )
            })?;
            section.plans = c2s_records::parse_plan_file(&text).map_err(|e| {
                err(
                    span.clone(),
                    "copy_plans.path".into(),
                    format!("{shown}:{}: {}", e.line, e.message),
                )
            })?;
            if section.plans.is_empty() {
                return Err(err(
                    span,
                    "copy_plans.path".into(),
                    format!("{shown} holds no plan"),
                ));
            }
            Some(section)
        }
    };
    if let Some(o) = &model.openai {
        // Scoring and our own rendering need the served model's tokenizer and template.
        let needs_template = arms.iter().find(|a| {
            a.contract == Contract::ScoredCode
                || a.arm == Arm::PrefixContinue
                || o.generation_endpoint == "completions"
        });
        if let (Some(a), true) = (needs_template, model.path.as_os_str().is_empty()) {
            return Err(err(
                model_span,
                "model.path".into(),
                format!(
                    "arm {} renders the chat template on our side (scored options, an assistant prefix or generation_endpoint = \"completions\"): set path to the served model's GGUF or tokenizer directory",
                    a.label()
                ),
            ));
        }
    }
    let copies_supplied = arms.iter().any(|a| a.arm == Arm::IncorrectCopy);
    if copies_supplied && copy_plans.is_none() {
        return Err(err(
            None,
            "copy_plans".into(),
            "IncorrectCopy arms copy supplied plans: name a plan file in [copy_plans] path".into(),
        ));
    }
    if !copies_supplied && copy_plans.is_some() {
        return Err(err(
            None,
            "copy_plans".into(),
            "[copy_plans] is set but no IncorrectCopy arm uses it".into(),
        ));
    }
    Ok(RunConfig {
        run: raw.run,
        model,
        sources,
        arms,
        comparisons,
        inference,
        stats,
        output,
        copy_plans,
        coverage,
        dialogue,
        serve: raw.serve,
        file: file.to_path_buf(),
    })
}

/// The first source that selects by an item property (length, domain, …): records that are
/// not items (coverage cases, dialogues) are selected by id only.
fn item_selector_source(sources: &[SourceConfig]) -> Option<usize> {
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

/// `[dialogue]`: a dialogue-state run (Appendix C). Every dialogue of the sources runs under
/// every arm × prior-state mode, answered under one contract.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DialogueSection {
    /// `joint`, `independent`, `serial` (C.2).
    #[serde(default = "default_dialogue_arms")]
    pub arms: Vec<String>,
    /// `history_recompute`, `oracle`, `rollout` (C.1).
    #[serde(default = "default_dialogue_modes")]
    pub modes: Vec<String>,
    /// `scored` (typed decisions over each field's legal values; a Joint request read once
    /// per field), `scored_sequential` (named alternative: a Joint answer decides its fields
    /// one after another) or `generated` (strict JSON, 256 new tokens, greedy: E.4).
    #[serde(default = "default_dialogue_contract")]
    pub contract: String,
    /// Draws of the Serial − Joint sign tests ("99,999 draws, plus-one correction", C.2).
    #[serde(default = "default_sign_test_draws")]
    pub sign_test_draws: u32,
    /// The prior-state mode of the Serial − Joint sign tests (default: history_recompute
    /// when the run has it, else its first mode).
    #[serde(default)]
    pub sign_test_mode: Option<String>,
}

fn default_dialogue_arms() -> Vec<String> {
    ["joint", "independent", "serial"]
        .map(String::from)
        .to_vec()
}
fn default_dialogue_modes() -> Vec<String> {
    ["history_recompute", "oracle", "rollout"]
        .map(String::from)
        .to_vec()
}
fn default_dialogue_contract() -> String {
    "scored".into()
}
fn default_sign_test_draws() -> u32 {
    99_999
}

impl DialogueSection {
    /// The specs of the run, arms outer, modes inner (validated at load).
    pub fn specs(&self) -> Vec<c2s_records::DialogueSpec> {
        let contract = c2s_records::DialogueContract::parse(&self.contract)
            .unwrap_or(c2s_records::DialogueContract::Scored);
        let mut out = Vec::new();
        for a in self
            .arms
            .iter()
            .filter_map(|a| c2s_records::DialogueArm::parse(a))
        {
            for m in self
                .modes
                .iter()
                .filter_map(|m| c2s_records::PriorMode::parse(m))
            {
                out.push(c2s_records::DialogueSpec {
                    arm: a,
                    mode: m,
                    contract,
                });
            }
        }
        out
    }

    pub fn sign_test_mode(&self) -> c2s_records::PriorMode {
        self.sign_test_mode
            .as_deref()
            .and_then(c2s_records::PriorMode::parse)
            .unwrap_or(c2s_records::PriorMode::HistoryRecompute)
    }
}

/// Check `[dialogue]`; errors are (field, message).
fn resolve_dialogue(d: &mut DialogueSection) -> Result<(), (String, String)> {
    fn distinct(field: &str, values: &[String], known: &[&str]) -> Result<(), (String, String)> {
        if values.is_empty() {
            return Err((field.into(), "names none".into()));
        }
        for (i, v) in values.iter().enumerate() {
            if !known.contains(&v.as_str()) {
                return Err((
                    field.into(),
                    format!("unknown value `{v}` ({})", known.join(", ")),
                ));
            }
            if values[..i].contains(v) {
                return Err((field.into(), format!("`{v}` is listed twice")));
            }
        }
        Ok(())
    }
    distinct("arms", &d.arms, &["joint", "independent", "serial"])?;
    distinct(
        "modes",
        &d.modes,
        &["history_recompute", "oracle", "rollout"],
    )?;
    if c2s_records::DialogueContract::parse(&d.contract).is_none() {
        return Err((
            "contract".into(),
            format!(
                "unknown contract `{}` (scored, scored_sequential, generated)",
                d.contract
            ),
        ));
    }
    let mode = match &d.sign_test_mode {
        Some(m) => m.clone(),
        None if d.modes.iter().any(|m| m == "history_recompute") => "history_recompute".into(),
        None => d.modes[0].clone(),
    };
    if c2s_records::PriorMode::parse(&mode).is_none() {
        return Err((
            "sign_test_mode".into(),
            format!("unknown mode `{mode}` (history_recompute, oracle, rollout)"),
        ));
    }
    if d.sign_test_draws == 0 {
        return Err(("sign_test_draws".into(), "must be positive".into()));
    }
    let tested = d.arms.iter().any(|a| a == "serial") && d.arms.iter().any(|a| a == "joint");
    if tested && !d.modes.contains(&mode) {
        return Err((
            "sign_test_mode".into(),
            format!(
                "`{mode}` is not among the run's modes ({}): the Serial − Joint sign test would have no pairs",
                d.modes.join(", ")
            ),
        ));
    }
    d.sign_test_mode = Some(mode);
    Ok(())
}

/// `[coverage]`: a candidate-coverage run (`candidate-coverage-typed-decisions.txt`). Every
/// case of the sources runs under each requested decision: the full label set (when
/// `full_set`) and the present/absent pair of every size in `ks`, each under every name
/// variant in `names` and every choice in `none` (with or without the none option, last).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoverageSection {
    /// Task catalogues (`data/banks/coverage-<task>.catalogue.json`): labels, their natural
    /// and neutral names, descriptions and the none option.
    pub catalogues: Vec<PathBuf>,
    /// Ordinary set sizes to run (each case holds one seeded pair per size of its bank): a
    /// number, or `"all_but_reference"` (L − 1 for a task of L labels).
    #[serde(default = "default_coverage_ks")]
    pub ks: Vec<c2s_records::CoverageSize>,
    /// Name variants: `natural`, `neutral`.
    #[serde(default = "default_coverage_names")]
    pub names: Vec<String>,
    /// Offer the none option: `false` (the k ordinary options), `true` (none last).
    #[serde(default = "default_coverage_none")]
    pub none: Vec<bool>,
    /// Also classify over the task's full label set (the full-set-correct subsets need it).
    #[serde(default = "yes")]
    pub full_set: bool,
    /// The calibration constraint: thresholds keep the calibration false-rejection rate at or
    /// below this.
    #[serde(default = "default_max_false_rejection")]
    pub max_false_rejection: f64,
    /// Decimals of the quantization audit ("quantizes Laya scores to two decimals").
    #[serde(default = "default_quantize_decimals")]
    pub quantize_decimals: u32,
    /// How an option's token log-probabilities become its score: `summed` (the whole name,
    /// the default), `mean_per_token` or `first_token`.
    #[serde(default)]
    pub scoring: c2s_records::ScoringRule,
    /// The catalogues, read.
    #[serde(skip)]
    pub loaded: Vec<c2s_records::CoverageCatalogue>,
}

fn default_coverage_ks() -> Vec<c2s_records::CoverageSize> {
    [2, 4, 8, 16]
        .into_iter()
        .map(c2s_records::CoverageSize::Fixed)
        .collect()
}
fn default_coverage_names() -> Vec<String> {
    vec!["natural".into(), "neutral".into()]
}
fn default_coverage_none() -> Vec<bool> {
    vec![false, true]
}
fn default_max_false_rejection() -> f64 {
    0.05
}
fn default_quantize_decimals() -> u32 {
    2
}

impl CoverageSection {
    /// Parsed name variants (validated at load).
    pub fn name_variants(&self) -> Vec<c2s_records::NameVariant> {
        self.names
            .iter()
            .filter_map(|n| c2s_records::NameVariant::parse(n))
            .collect()
    }

    /// The catalogue of `task`.
    pub fn catalogue(&self, task: &str) -> Option<&c2s_records::CoverageCatalogue> {
        self.loaded.iter().find(|c| c.task == task)
    }
}

/// Check `[coverage]` and read its catalogues; errors are (field, message).
fn resolve_coverage(c: &mut CoverageSection, base: &Path) -> Result<(), (String, String)> {
    if c.catalogues.is_empty() {
        return Err(("catalogues".into(), "names no catalogue".into()));
    }
    for path in &c.catalogues {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(base.join(path)).map_err(|e| {
            (
                "catalogues".to_string(),
                format!("cannot read {shown}: {e}"),
            )
        })?;
        let cat: c2s_records::CoverageCatalogue = serde_json::from_str(&text)
            .map_err(|e| ("catalogues".to_string(), format!("{shown}: {e}")))?;
        cat.validate()
            .map_err(|e| ("catalogues".to_string(), format!("{shown}: {e}")))?;
        if c.loaded.iter().any(|x| x.task == cat.task) {
            return Err((
                "catalogues".into(),
                format!("{shown}: task `{}` has two catalogues", cat.task),
            ));
        }
        c.loaded.push(cat);
    }
    if c.ks
        .iter()
        .any(|k| matches!(k, c2s_records::CoverageSize::Fixed(k) if *k < 2))
    {
        return Err(("ks".into(), "every size must be at least 2".into()));
    }
    let mut ks = c.ks.clone();
    ks.sort_unstable();
    ks.dedup();
    if ks.len() != c.ks.len() {
        return Err(("ks".into(), "a size is listed twice".into()));
    }
    // `all_but_reference` must not be a listed number for any task (the same decisions
    // twice), nor below 2.
    for cat in &c.loaded {
        let mut resolved: Vec<usize> = c.ks.iter().map(|k| k.resolve(cat.labels.len())).collect();
        resolved.sort_unstable();
        resolved.dedup();
        if resolved.len() != c.ks.len() {
            return Err((
                "ks".into(),
                format!(
                    "all_but_reference is {} for task `{}`, a size listed too",
                    cat.labels.len().saturating_sub(1),
                    cat.task
                ),
            ));
        }
    }
    if c.names.is_empty() {
        return Err(("names".into(), "names no variant".into()));
    }
    let mut names = c.names.clone();
    names.sort();
    names.dedup();
    if names.len() != c.names.len() {
        return Err(("names".into(), "a variant is listed twice".into()));
    }
    if c.none.len() == 2 && c.none[0] == c.none[1] || c.none.len() > 2 {
        return Err(("none".into(), "a choice is listed twice".into()));
    }
    if let Some(n) = c
        .names
        .iter()
        .find(|n| c2s_records::NameVariant::parse(n).is_none())
    {
        return Err((
            "names".into(),
            format!("unknown variant `{n}` (natural, neutral)"),
        ));
    }
    if c.none.is_empty() {
        return Err(("none".into(), "names no choice (false, true)".into()));
    }
    if c.ks.is_empty() && !c.full_set {
        return Err((
            "ks".into(),
            "no decision to make: empty ks and full_set = false".into(),
        ));
    }
    if !(c.max_false_rejection > 0.0 && c.max_false_rejection < 1.0) {
        return Err((
            "max_false_rejection".into(),
            format!("{} is not in (0, 1)", c.max_false_rejection),
        ));
    }
    if c.quantize_decimals > 6 {
        return Err(("quantize_decimals".into(), "at most 6".into()));
    }
    Ok(())
}

/// Check a selection and read its id file into `ids`; errors are (field, message).
fn resolve_selection(sel: &mut Selection, base: &Path) -> Result<(), (String, String)> {
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

/// Parse one `[[arms]]` entry; errors are (field, message).
pub fn arm_spec(a: &ArmEntry) -> Result<ArmSpec, (String, String)> {
    let arm = Arm::ALL
        .into_iter()
        .find(|x| x.as_str().eq_ignore_ascii_case(&a.arm))
        .ok_or_else(|| {
            let names: Vec<&str> = Arm::ALL.iter().map(|x| x.as_str()).collect();
            (
                "arm".to_string(),
                format!("unknown arm `{}` ({})", a.arm, names.join(", ")),
            )
        })?;
    let mut spec = ArmSpec::new(arm);
    if let Some(s) = &a.support {
        spec.support = Support::parse(s).ok_or_else(|| {
            (
                "support".to_string(),
                format!("unknown support `{s}` (Full, FullFill, UnionCall, UnionFill, TrieCall, TrieFill)"),
            )
        })?;
        if arm.is_whole_answer() {
            return Err((
                "support".into(),
                format!("{arm} selects a whole answer; it has no local support"),
            ));
        }
    }
    spec.contract = match a.contract.as_deref() {
        None => match arm {
            Arm::WholeGenerate | Arm::PrefixContinue => Contract::GeneratedString,
            _ => Contract::ScoredCode,
        },
        Some("code") => Contract::ScoredCode,
        Some("gencode") => Contract::GeneratedCode,
        Some("char") => Contract::GeneratedCharacter,
        Some("string") => Contract::GeneratedString,
        Some(other) => {
            return Err((
                "contract".into(),
                format!("unknown contract `{other}` (code, gencode, char, string)"),
            ))
        }
    };
    spec.variant = match a.variant.as_deref() {
        None | Some("v1") => PromptVariant::V1,
        Some("v2") => PromptVariant::V2,
        Some("v3") => PromptVariant::V3,
        Some(other) => {
            return Err((
                "variant".into(),
                format!("unknown variant `{other}` (v1, v2, v3)"),
            ))
        }
    };
    spec.template = match a.template.as_deref() {
        None => None,
        Some("T0") => Some(Template::T0),
        Some("T1") => Some(Template::T1),
        Some("T2") => Some(Template::T2),
        Some(other) => {
            return Err((
                "template".into(),
                format!("unknown template `{other}` (T0, T1, T2)"),
            ))
        }
    };
    spec.evidence = match a.evidence.as_deref() {
        None | Some("raw") => Evidence::Raw,
        Some("indexed") => Evidence::Indexed,
        Some("direct") => Evidence::Direct,
        Some("padded") => Evidence::Padded,
        Some("padded-tokens") => Evidence::PaddedTokens,
        Some(other) => {
            return Err((
                "evidence".into(),
                format!("unknown evidence `{other}` (raw, indexed, direct, padded, padded-tokens)"),
            ))
        }
    };
    spec.copy_control = match a.copy_control.as_deref() {
        None | Some("serial") => CopyControl::Serial,
        Some("independent") => CopyControl::Independent,
        Some("batch") => CopyControl::Batch,
        Some(other) => {
            return Err((
                "copy_control".into(),
                format!("unknown copy control `{other}` (independent, serial, batch)"),
            ))
        }
    };
    spec.order = match a.order {
        None | Some(0) => OptionOrder::Reference,
        Some(k) => OptionOrder::Permuted(k),
    };
    spec.max_new_tokens = a.max_new_tokens;
    spec.names = match a.names.as_deref() {
        None => OptionNames::Opaque,
        Some(n) => OptionNames::parse(n).ok_or_else(|| {
            let all: Vec<&str> = OptionNames::ALL.iter().map(|n| n.as_str()).collect();
            (
                "names".to_string(),
                format!("unknown option names `{n}` ({})", all.join(", ")),
            )
        })?,
    };
    spec.alphabet = match a.alphabet.as_deref() {
        None => LocalAlphabet::Domain,
        Some(n) => LocalAlphabet::parse(n).ok_or_else(|| {
            (
                "alphabet".to_string(),
                format!("unknown alphabet `{n}` (domain, lowercase)"),
            )
        })?,
    };
    spec.draft = match a.draft.as_deref() {
        None | Some("correct") => Draft::Correct,
        Some("error") => Draft::Error,
        Some(other) => {
            return Err((
                "draft".into(),
                format!("unknown draft `{other}` (correct, error)"),
            ))
        }
    };
    spec.readout = match a.readout.as_deref() {
        None | Some("character") => InterventionReadout::Character,
        Some("whole") => InterventionReadout::Whole,
        Some(other) => {
            return Err((
                "readout".into(),
                format!("unknown readout `{other}` (character, whole)"),
            ))
        }
    };
    spec.repeat = match a.repeat {
        None => 0,
        Some(k) => u8::try_from(k).map_err(|_| {
            (
                "repeat".to_string(),
                format!("repeat {k} is out of range (0 to 255)"),
            )
        })?,
    };
    if let Some(positions) = &a.also_query {
        spec.also_query = QueryPositions::from_positions(positions).ok_or_else(|| {
            (
                "also_query".to_string(),
                format!(
                    "positions must be between 1 and {}: {positions:?}",
                    QueryPositions::MAX
                ),
            )
        })?;
    }
    Ok(spec)
}

/// `[[stats.contrasts]]` and `[[stats.cells]]` name configured arms, known domains,
/// placements and operations, and distinct names; a fidelity contrast names copy arms only
/// (`copy_labels`: the arms with a supplied plan to be faithful to).
fn check_contrasts(
    stats: &StatsSection,
    labels: &[String],
    copy_labels: &[String],
) -> Result<(), (String, String)> {
    let check = |field: String,
                 arm: &str,
                 domain: &Option<String>,
                 placement: &Option<String>,
                 operation: &Option<String>|
     -> Result<(), (String, String)> {
        if !labels.iter().any(|l| l == arm) {
            return Err((
                format!("{field}.arm"),
                format!("`{arm}` is not a configured arm ({})", labels.join(", ")),
            ));
        }
        if let Some(d) = domain {
            if c2s_records::Domain::parse(d).is_none() {
                return Err((format!("{field}.domain"), format!("unknown domain `{d}`")));
            }
        }
        if let Some(p) = placement {
            if !["early", "late"].contains(&p.as_str()) {
                return Err((
                    format!("{field}.placement"),
                    format!("unknown placement `{p}` (early, late)"),
                ));
            }
        }
        if let Some(o) = operation {
            if !["copy", "reverse"].contains(&o.as_str()) {
                return Err((
                    format!("{field}.operation"),
                    format!("unknown operation `{o}` (copy, reverse)"),
                ));
            }
        }
        Ok(())
    };
    let mut names = std::collections::BTreeSet::new();
    for (i, c) in stats.contrasts.iter().enumerate() {
        if !names.insert(c.name.as_str()) {
            return Err((
                format!("stats.contrasts[{i}].name"),
                format!("contrast `{}` is declared twice", c.name),
            ));
        }
        for (side, sels) in [("compared", &c.compared), ("reference", &c.reference)] {
            if sels.is_empty() {
                return Err((
                    format!("stats.contrasts[{i}].{side}"),
                    "needs at least one selector".into(),
                ));
            }
            for (j, s) in sels.iter().enumerate() {
                let field = format!("stats.contrasts[{i}].{side}[{j}]");
                check(field.clone(), &s.arm, &s.domain, &s.placement, &s.operation)?;
                if c.endpoint == c2s_records::Endpoint::Fidelity && !copy_labels.contains(&s.arm) {
                    return Err((
                        format!("{field}.arm"),
                        format!(
                            "`{}` has no supplied plan, so a contrast with endpoint = \
                             \"fidelity\" cannot score it (copy arms: {})",
                            s.arm,
                            copy_labels.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, c) in stats.cells.iter().enumerate() {
        if !names.insert(c.name.as_str()) {
            return Err((
                format!("stats.cells[{i}].name"),
                format!("cell `{}` is declared twice", c.name),
            ));
        }
        let field = format!("stats.cells[{i}]");
        check(field.clone(), &c.arm, &c.domain, &c.placement, &c.operation)?;
        if let Some(n) = &c.native {
            check(format!("{field}.native"), n, &None, &None, &None)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
