use super::*;

fn root() -> PathBuf {
    std::path::PathBuf::from(
        // Cargo's runtime value first: a target directory shared with a checkout at another
        // path may hold this build with that path compiled in.
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("..")
}

fn parse_text(text: &str) -> Result<RunConfig, ConfigError> {
    parse_in(text, Path::new("test.toml"), &root())
}

const MINIMAL: &str = r#"
[model]
path = "x.gguf"
engine = "simulated"

[[sources]]
kind = "jsonl"
path = "data/banks/arithmetic-dev.jsonl"

[[arms]]
arm = "Native"

[[arms]]
arm = "Serial"
support = "UnionFill"
"#;

#[test]
fn examples_and_reference_parse() {
    for f in [
        "quickstart.toml",
        "qwen-quickstart.toml",
        "paper-main.toml",
        "reference.toml",
    ] {
        let path = root().join("config").join(f);
        let text = std::fs::read_to_string(&path).unwrap();
        let value: toml::Value = toml::from_str(&text).unwrap();
        let model = root().join(value["model"]["path"].as_str().unwrap());
        // The model may be absent in a checkout without set-up; the rest must validate.
        let text = if model.exists() {
            text
        } else {
            text.replace("[model]", "[model]\nengine = \"simulated\"")
        };
        let cfg = parse_in(&text, &path, &root()).unwrap_or_else(|e| panic!("{e}"));
        assert!(!cfg.arms.is_empty());
    }
}

#[test]
fn defaults_and_comparisons() {
    let cfg = parse_text(MINIMAL).unwrap();
    assert_eq!(cfg.arms.len(), 2);
    assert_eq!(cfg.arms[1].support, Support::UNION_FILL);
    assert_eq!(
        cfg.comparisons,
        vec![(
            "Native/code".to_string(),
            "Serial/UnionFill/code".to_string()
        )]
    );
    assert_eq!(cfg.stats.bootstrap_draws, 9999);
    assert_eq!(cfg.inference.max_batch, 32);
}

fn error_of(text: &str) -> ConfigError {
    parse_text(text).expect_err("must fail")
}

#[test]
fn unknown_field_names_line_and_field() {
    let e = error_of(&MINIMAL.replace("support = \"UnionFill\"", "suport = \"UnionFill\""));
    assert_eq!(e.line, Some(15));
    assert_eq!(e.field, "suport");
    assert!(e.to_string().starts_with("test.toml:15: suport:"), "{e}");
}

#[test]
fn bad_values_name_the_field() {
    let e = error_of(&MINIMAL.replace("support = \"UnionFill\"", "support = \"Bogus\""));
    assert_eq!(e.field, "arms[1].support");
    assert_eq!(e.line, Some(15));
    let e = error_of(&MINIMAL.replace("arm = \"Serial\"", "arm = \"Serail\""));
    assert_eq!(e.field, "arms[1].arm");
    let e = error_of(&MINIMAL.replace(
        "arm = \"Serial\"\nsupport = \"UnionFill\"",
        "arm = \"Independent\"\nsupport = \"TrieCall\"",
    ));
    assert_eq!(e.field, "arms[1]");
    assert!(e.message.contains("Trie"), "{e}");
    let e = error_of(&MINIMAL.replace("engine = \"simulated\"", "engine = \"prefix\""));
    assert_eq!(e.field, "model.path");
    let kafka = "\n[output.kafka]\nbrokers = \"127.0.0.1:9092\"\noutcomes_topic = \"o\"\nmetrics_topic = \"m\"\n";
    assert!(parse_text(&format!("{MINIMAL}{kafka}")).is_ok());
    let e = error_of(&format!("{MINIMAL}{}", kafka.replace("\"o\"", "\" \"")));
    assert_eq!(e.field, "output.kafka.outcomes_topic");
    let e = error_of(&format!("{MINIMAL}{}", kafka.replace("\"o\"", "\"m\"")));
    assert_eq!(e.field, "output.kafka.metrics_topic");
    // `[model.mistralrs]`: known modes and dtypes only.
    let e = error_of(&MINIMAL.replace(
        "engine = \"simulated\"",
        "engine = \"simulated\"\n[model.mistralrs]\nmode = \"turbo\"",
    ));
    assert_eq!(e.field, "model.mistralrs.mode");
    assert!(e.message.contains("`turbo`"), "{e}");
    let e = error_of(&MINIMAL.replace(
        "engine = \"simulated\"",
        "engine = \"simulated\"\n[model.mistralrs]\ndtype = \"q4\"",
    ));
    assert_eq!(e.field, "model.mistralrs.dtype");
    let e = error_of(&MINIMAL.replace("arithmetic-dev", "nope"));
    assert_eq!(e.field, "sources[0].path");
    let e = error_of(&format!("{MINIMAL}\n[stats]\nlevel = 1.5\n"));
    assert_eq!(e.field, "stats.level");
    let e = error_of(&format!(
        "{MINIMAL}\n[[comparisons]]\nnative = \"Native/code\"\nserial = \"Serial/Full/code\"\n"
    ));
    assert_eq!(e.field, "comparisons[0].serial");
    let e = error_of(&format!("{MINIMAL}\n[inference]\nmax_batch = 0\n"));
    assert_eq!(e.field, "inference.max_batch");
    let e = error_of("[model\n");
    assert_eq!(e.line, Some(1));
    let e = error_of(&MINIMAL.replace(
        "[[arms]]\narm = \"Native\"\n",
        "[[arms]]\narm = \"Native\"\ncontract = \"char\"\n",
    ));
    assert_eq!(e.field, "arms[0]");
    let e = error_of(&format!("{MINIMAL}\n[[arms]]\narm = \"Native\"\n"));
    assert!(e.message.contains("twice"), "{e}");
}
