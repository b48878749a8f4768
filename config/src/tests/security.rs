//! Kafka security settings (`[[sources]]` of kind `kafka`, `[output.kafka]`) and the remote
//! engine's `max_response_bytes` / `insecure_skip_verify`.

use std::ffi::OsString;

use std::path::Path;

use super::*;

const SECRET: &str = "s3cr3t-Pa55word-that-must-not-leak";

/// The environment of these tests: only `KAFKA_PASSWORD` is set.
fn env(var: &str) -> Option<OsString> {
    (var == "KAFKA_PASSWORD").then(|| OsString::from(SECRET))
}

fn parse_env(text: &str) -> Result<RunConfig, ConfigError> {
    parse_with_env(text, Path::new("test.toml"), &root(), &env)
}

fn err_env(text: &str) -> ConfigError {
    parse_env(text).expect_err("must fail")
}

/// MINIMAL with a Kafka source of `settings` (extra lines of its table) added at the end.
fn with_source(settings: &str) -> String {
    format!(
        "{MINIMAL}\n[[sources]]\nkind = \"kafka\"\nbrokers = \"b1:9093,b2:9093\"\ntopic = \"items\"\n{settings}\n"
    )
}

const SASL_SSL: &str = r#"security_protocol = "sasl_ssl"
sasl_mechanism = "SCRAM-SHA-512"
sasl_username = "alice"
sasl_password_env = "KAFKA_PASSWORD"
ssl_ca_location = "config/reference.toml"
properties = { "client.rack" = "use1-az1", "socket.keepalive.enable" = true, "linger.ms" = 20 }"#;

#[test]
fn kafka_security_reaches_the_client_properties() {
    let cfg = parse_env(&with_source(SASL_SSL)).unwrap_or_else(|e| panic!("{e}"));
    let client = cfg.sources[1].kafka_client().expect("a kafka source");
    assert_eq!(client.brokers, "b1:9093,b2:9093");
    let props: std::collections::BTreeMap<&str, &str> = client
        .properties
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(props["security.protocol"], "sasl_ssl");
    assert_eq!(props["sasl.mechanism"], "SCRAM-SHA-512");
    assert_eq!(props["sasl.username"], "alice");
    assert_eq!(props["sasl.password"], SECRET);
    assert_eq!(props["ssl.ca.location"], "config/reference.toml");
    assert_eq!(props["client.rack"], "use1-az1");
    assert_eq!(props["socket.keepalive.enable"], "true");
    assert_eq!(props["linger.ms"], "20");
    assert!(cfg.sources[0].kafka_client().is_none(), "a file source");
    // A source without security settings is plaintext.
    let cfg = parse_env(&with_source("")).unwrap();
    let client = cfg.sources[1].kafka_client().unwrap();
    assert_eq!(
        client.properties,
        vec![("security.protocol".to_string(), "plaintext".to_string())]
    );
}

/// The password is in no serialization of the config (the manifest writes `config` as JSON)
/// and in no debug output; the manifest shows where it came from and that it was redacted.
#[test]
fn the_kafka_password_is_never_written() {
    let sink = "\n[output.kafka]\nbrokers = \"b:9093\"\noutcomes_topic = \"o\"\nmetrics_topic = \"m\"\nsecurity_protocol = \"sasl_plaintext\"\nsasl_mechanism = \"PLAIN\"\nsasl_username = \"u\"\nsasl_password_env = \"KAFKA_PASSWORD\"\n";
    let cfg = parse_env(&format!("{}{sink}", with_source(SASL_SSL))).unwrap();
    let json = serde_json::to_string(&cfg).unwrap();
    let debug = format!("{cfg:?}");
    for shown in [&json, &debug] {
        assert!(!shown.contains(SECRET), "the password leaked: {shown}");
        assert!(shown.contains(REDACTED));
        assert!(shown.contains("KAFKA_PASSWORD"));
    }
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["sources"][1]["sasl_password"], REDACTED);
    assert_eq!(value["sources"][1]["sasl_password_env"], "KAFKA_PASSWORD");
    assert_eq!(value["output"]["kafka"]["sasl_password"], REDACTED);
    let sink = cfg.output.kafka.as_ref().unwrap();
    assert!(!format!("{:?}", sink.client()).contains(SECRET));
    assert!(sink
        .client()
        .properties
        .contains(&("sasl.password".to_string(), SECRET.to_string())));
    // The password itself is no config field (and the error does not echo it).
    let e = err_env(&with_source("sasl_password = \"hunter2\""));
    assert!(e.message.contains("unknown field `sasl_password`"), "{e}");
    assert!(e.message.contains("sasl_password_env"), "{e}");
    assert!(!e.to_string().contains("hunter2"), "{e}");
    // No password at all: nothing is recorded.
    let cfg = parse_env(&with_source("")).unwrap();
    let value = serde_json::to_value(&cfg).unwrap();
    assert!(value["sources"][1].get("sasl_password").is_none());
}

#[test]
fn a_missing_password_variable_is_named_not_read() {
    let text = with_source(&SASL_SSL.replace("KAFKA_PASSWORD", "C2S_ABSENT_VARIABLE"));
    let e = err_env(&text);
    assert_eq!(e.field, "sources[1].sasl_password_env");
    assert!(
        e.message.contains("`C2S_ABSENT_VARIABLE` is not set"),
        "{e}"
    );
    // The line of the field itself.
    let line = text
        .lines()
        .position(|l| l.starts_with("sasl_password_env"))
        .unwrap()
        + 1;
    assert_eq!(e.line, Some(line), "{e}");
    let empty = |var: &str| (var == "EMPTY").then(OsString::new);
    let e = parse_with_env(
        &with_source(&SASL_SSL.replace("KAFKA_PASSWORD", "EMPTY")),
        Path::new("test.toml"),
        &root(),
        &empty,
    )
    .unwrap_err();
    assert!(e.message.contains("`EMPTY` is empty"), "{e}");
}

#[test]
fn unknown_kafka_keys_are_config_errors() {
    let text = with_source("sasl_pasword_env = \"KAFKA_PASSWORD\"");
    let e = err_env(&text);
    assert!(e.message.contains("sasl_pasword_env"), "{e}");
    assert!(e.line.is_some(), "{e}");
    let e = err_env(&with_source("security_protocol = \"tls\""));
    assert!(e.message.contains("tls"), "{e}");
    assert!(e.message.contains("sasl_ssl"), "{e}");
    let e = err_env(&with_source(
        "security_protocol = \"sasl_ssl\"\nsasl_mechanism = \"GSSAPI\"",
    ));
    assert!(e.message.contains("GSSAPI"), "{e}");
    assert!(e.message.contains("SCRAM-SHA-512"), "{e}");
    let e = err_env(&with_source("properties = { \"linger.ms\" = [1, 2] }"));
    assert!(e.message.contains("librdkafka property value"), "{e}");
    let sink = "\n[output.kafka]\nbrokers = \"b:9093\"\noutcomes_topic = \"o\"\nmetrics_topic = \"m\"\nsasl_user = \"u\"\n";
    let e = err_env(&format!("{MINIMAL}{sink}"));
    assert!(e.message.contains("sasl_user"), "{e}");
}

#[test]
fn inconsistent_security_settings_are_refused() {
    let cases: [(&str, &str, &str); 6] = [
        (
            "security_protocol = \"sasl_ssl\"\nsasl_username = \"u\"\nsasl_password_env = \"KAFKA_PASSWORD\"",
            "sources[1].sasl_mechanism",
            "needs sasl_mechanism",
        ),
        (
            "security_protocol = \"sasl_plaintext\"\nsasl_mechanism = \"PLAIN\"\nsasl_password_env = \"KAFKA_PASSWORD\"",
            "sources[1].sasl_username",
            "needs sasl_username",
        ),
        (
            "security_protocol = \"sasl_plaintext\"\nsasl_mechanism = \"PLAIN\"\nsasl_username = \"u\"",
            "sources[1].sasl_password_env",
            "needs sasl_password_env",
        ),
        (
            "sasl_username = \"u\"",
            "sources[1].sasl_username",
            "security_protocol is `plaintext`",
        ),
        (
            "security_protocol = \"sasl_plaintext\"\nsasl_mechanism = \"PLAIN\"\nsasl_username = \"u\"\nsasl_password_env = \"KAFKA_PASSWORD\"\nssl_ca_location = \"config/reference.toml\"",
            "sources[1].ssl_ca_location",
            "TLS needs ssl or sasl_ssl",
        ),
        (
            "security_protocol = \"ssl\"\nssl_ca_location = \"no/such/ca.pem\"",
            "sources[1].ssl_ca_location",
            "no/such/ca.pem does not exist",
        ),
    ];
    for (settings, field, message) in cases {
        let e = err_env(&with_source(settings));
        assert_eq!(e.field, field, "{settings}: {e}");
        assert!(e.message.contains(message), "{settings}: {e}");
    }
    // TLS without SASL, with the system's CAs.
    parse_env(&with_source("security_protocol = \"ssl\"")).unwrap();
}

#[test]
fn properties_cannot_override_typed_fields_or_carry_secrets() {
    let cases: [(&str, &str); 7] = [
        ("security.protocol", "typed field `security_protocol`"),
        ("sasl.mechanisms", "typed field `sasl_mechanism`"),
        ("ssl.ca.location", "typed field `ssl_ca_location`"),
        ("sasl.password", "set sasl_password_env to the name"),
        ("ssl.key.password", "looks like a secret"),
        ("sasl.oauthbearer.client.secret", "looks like a secret"),
        ("enable.auto.commit", "set by the pipeline"),
    ];
    for (key, message) in cases {
        let text = with_source(&format!("properties = {{ \"{key}\" = \"x\" }}"));
        let e = err_env(&text);
        assert_eq!(e.field, format!("sources[1].properties.\"{key}\""), "{e}");
        assert!(e.message.contains(message), "{key}: {e}");
        assert!(!e.to_string().contains(SECRET));
        let line = text
            .lines()
            .position(|l| l.starts_with("properties"))
            .unwrap()
            + 1;
        assert_eq!(e.line, Some(line), "{e}");
    }
    // The sink's properties are checked alike, and its errors name its section.
    let sink = "\n[output.kafka]\nbrokers = \"b:9093\"\noutcomes_topic = \"o\"\nmetrics_topic = \"m\"\nproperties = { \"sasl.password\" = \"hunter2\" }\n";
    let e = err_env(&format!("{MINIMAL}{sink}"));
    assert_eq!(e.field, "output.kafka.properties.\"sasl.password\"");
    assert!(!e.to_string().contains("hunter2"), "{e}");
    let sink = "\n[output.kafka]\nbrokers = \"b:9093\"\noutcomes_topic = \"o\"\nmetrics_topic = \"m\"\nsecurity_protocol = \"sasl_ssl\"\nsasl_mechanism = \"PLAIN\"\nsasl_username = \"key\"\nsasl_password_env = \"C2S_NOT_SET\"\n";
    let text = format!("{MINIMAL}{sink}");
    let e = err_env(&text);
    assert_eq!(e.field, "output.kafka.sasl_password_env");
    assert!(e.message.contains("`C2S_NOT_SET` is not set"), "{e}");
    let line = text
        .lines()
        .position(|l| l.starts_with("sasl_password_env"))
        .unwrap()
        + 1;
    assert_eq!(e.line, Some(line), "{e}");
}

const REMOTE: &str = r#"
[model]
engine = "openai"

[model.openai]
base_url = "https://models.example/v1"
model = "m"

[[sources]]
kind = "jsonl"
path = "data/banks/arithmetic-dev.jsonl"

[[arms]]
arm = "Serial"
contract = "char"
"#;

#[test]
fn remote_response_cap_and_tls_verification() {
    let cfg = parse_text(REMOTE).unwrap_or_else(|e| panic!("{e}"));
    let o = cfg.model.openai.unwrap();
    assert_eq!(o.max_response_bytes, 16 * 1024 * 1024);
    assert!(!o.insecure_skip_verify, "TLS is verified by default");
    let text = REMOTE.replace(
        "model = \"m\"",
        "model = \"m\"\nmax_response_bytes = 4096\ninsecure_skip_verify = true",
    );
    let o = parse_text(&text).unwrap().model.openai.unwrap();
    assert_eq!(o.max_response_bytes, 4096);
    assert!(o.insecure_skip_verify);
    let e = error_of(&REMOTE.replace("model = \"m\"", "model = \"m\"\nmax_response_bytes = 0"));
    assert_eq!(e.field, "model.openai.max_response_bytes");
    let e = error_of(&REMOTE.replace(
        "model = \"m\"",
        "model = \"m\"\ninsecure_skip_verify = \"yes\"",
    ));
    assert!(e.message.contains("bool"), "{e}");
}

/// `[serve] token_env`: the name of the variable holding the monitor's bearer token.
#[test]
fn serve_token_env_names_a_variable_and_the_manifest_records_auth() {
    let cfg = parse_env(&format!(
        "{MINIMAL}\n[serve]\naddress = \"0.0.0.0:9100\"\ntoken_env = \"C2S_MONITOR_TOKEN\"\n"
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let serve = cfg.serve.clone().unwrap();
    assert_eq!(serve.token_env.as_deref(), Some("C2S_MONITOR_TOKEN"));
    assert_eq!(serve.auth(), crate::ServeAuth::Bearer);
    let value = serde_json::to_value(&cfg).unwrap();
    assert_eq!(value["serve"]["auth"], "bearer");
    assert_eq!(value["serve"]["token_env"], "C2S_MONITOR_TOKEN");
    // Without it: `auth = "none"`, and the section reads as before.
    let cfg = parse_env(&format!(
        "{MINIMAL}\n[serve]\naddress = \"127.0.0.1:9100\"\n"
    ))
    .unwrap();
    assert_eq!(cfg.serve.as_ref().unwrap().token_env, None);
    assert_eq!(serde_json::to_value(&cfg).unwrap()["serve"]["auth"], "none");
    // Not a variable name, the token itself under another key, a token of the wrong type.
    let e = err_env(&format!(
        "{MINIMAL}\n[serve]\naddress = \"127.0.0.1:9100\"\ntoken_env = \"A=B\"\n"
    ));
    assert_eq!(e.field, "serve.token_env");
    assert!(e.message.contains("`A=B`"), "{e}");
    let e = err_env(&format!(
        "{MINIMAL}\n[serve]\naddress = \"127.0.0.1:9100\"\ntoken = \"s3cret\"\n"
    ));
    assert!(e.message.contains("token"), "{e}");
    let e = err_env(&format!(
        "{MINIMAL}\n[serve]\naddress = \"127.0.0.1:9100\"\ntoken_env = 5\n"
    ));
    assert!(e.message.contains("string"), "{e}");
}
