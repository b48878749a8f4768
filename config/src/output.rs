//! `[output]`: Parquet parts, the optional Kafka publication, and `[copy_plans]` (the
//! supplied plans IncorrectCopy arms copy).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{key_span, ConfigError, ConfigText, Span};
use crate::kafka::{
    self, KafkaClientSettings, KafkaSaslMechanism, KafkaSecret, KafkaSecurityProtocol,
};

/// `[output.kafka]`: optional publication of outcomes and metric snapshots.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct KafkaSink {
    /// `host:port[,host:port]`; must not be empty.
    pub brokers: String,
    /// Topic of the outcome rows; must not be empty.
    pub outcomes_topic: String,
    /// Topic of the metric snapshots; must not be empty nor the outcomes topic.
    pub metrics_topic: String,
    /// Security settings as for a Kafka source ([`kafka`]).
    #[serde(default)]
    pub security_protocol: KafkaSecurityProtocol,
    /// `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512`; required by the SASL protocols, refused by
    /// the others.
    #[serde(default)]
    pub sasl_mechanism: Option<KafkaSaslMechanism>,
    /// SASL user name; required by the SASL protocols, refused by the others.
    #[serde(default)]
    pub sasl_username: Option<String>,
    /// Name of the environment variable that holds the SASL password (never the password).
    #[serde(default)]
    pub sasl_password_env: Option<String>,
    /// CA certificate(s) (PEM file or directory) that verify the brokers (TLS protocols).
    #[serde(default)]
    pub ssl_ca_location: Option<PathBuf>,
    /// Any other librdkafka property (no secrets, nothing the typed fields or the pipeline
    /// set).
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
    /// While outputs cannot be written, the rows they hold are capped at this many MiB: above
    /// it no model request is sent (the items in flight wait too) until writing works again.
    pub max_buffered_mb: f64,
    /// `[output.kafka]`: publish outcomes and metric snapshots to Kafka too (default: off).
    pub kafka: Option<KafkaSink>,
}

impl Default for OutputSection {
    fn default() -> Self {
        OutputSection {
            dir: None,
            part_rows: 2000,
            part_seconds: 5.0,
            max_write_wait_seconds: 600.0,
            max_buffered_mb: 256.0,
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

impl OutputSection {
    /// Check `[output]` and its Kafka publication (security, and the password from `env`).
    pub(crate) fn check(
        &mut self,
        at: &ConfigText<'_>,
        span: &Option<Span>,
        base: &Path,
        env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<(), ConfigError> {
        if self.part_rows == 0 || self.part_seconds.is_nan() || self.part_seconds <= 0.0 {
            return Err(at.error(
                span.clone(),
                "output.part_rows",
                "part_rows and part_seconds must be positive",
            ));
        }
        if !(self.max_write_wait_seconds.is_finite() && self.max_write_wait_seconds >= 0.0) {
            return Err(at.error(
                span.clone(),
                "output.max_write_wait_seconds",
                format!(
                    "must be a finite, non-negative number of seconds, got {}",
                    self.max_write_wait_seconds
                ),
            ));
        }
        if !(self.max_buffered_mb.is_finite() && self.max_buffered_mb > 0.0) {
            return Err(at.error(
                span.clone(),
                "output.max_buffered_mb",
                format!(
                    "must be a finite, positive number of MiB, got {}",
                    self.max_buffered_mb
                ),
            ));
        }
        let Some(k) = &mut self.kafka else {
            return Ok(());
        };
        for (field, value) in [
            ("brokers", &k.brokers),
            ("outcomes_topic", &k.outcomes_topic),
            ("metrics_topic", &k.metrics_topic),
        ] {
            if value.trim().is_empty() {
                return Err(at.error(
                    span.clone(),
                    format!("output.kafka.{field}"),
                    "must not be empty",
                ));
            }
        }
        if k.outcomes_topic == k.metrics_topic {
            return Err(at.error(
                span.clone(),
                "output.kafka.metrics_topic",
                "outcomes and metrics need topics of their own",
            ));
        }
        k.sasl_password = kafka::check_security(&k.security_fields(), base, env).map_err(
            |(field, message)| {
                // The line of the field in `[output.kafka]`, else of `[output]`.
                let key = field.split('.').next().unwrap_or(&field);
                let line = at
                    .text
                    .find("[output.kafka]")
                    .map(|start| key_span(at.text, &(start..start + 1), key))
                    .or(span.clone());
                at.error(line, format!("output.kafka.{field}"), message)
            },
        )?;
        Ok(())
    }
}

impl CopyPlansSection {
    /// Read the plan file (relative to `base`); it must hold at least one plan.
    pub(crate) fn read(
        mut self,
        at: &ConfigText<'_>,
        span: Option<Span>,
        base: &Path,
    ) -> Result<Self, ConfigError> {
        let shown = self.path.display().to_string();
        let text = std::fs::read_to_string(base.join(&self.path)).map_err(|e| {
            at.error(
                span.clone(),
                "copy_plans.path",
                format!("cannot read {shown}: {e}"),
            )
        })?;
        self.plans = c2s_records::parse_plan_file(&text).map_err(|e| {
            at.error(
                span.clone(),
                "copy_plans.path",
                format!("{shown}:{}: {}", e.line, e.message),
            )
        })?;
        if self.plans.is_empty() {
            return Err(at.error(span, "copy_plans.path", format!("{shown} holds no plan")));
        }
        Ok(self)
    }
}
