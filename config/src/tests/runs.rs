//! The protocols other than items: `[coverage]` and `[dialogue]` runs parse, load what they
//! need, and refuse what they cannot run.

use std::path::Path;

use super::*;

/// The shipped coverage configs validate and read their catalogues.
#[test]
fn coverage_configs_parse_and_load_their_catalogues() {
    for (f, labels) in [
        ("coverage-smoke.toml", 77),
        ("coverage-banking77.toml", 77),
        ("coverage-clinc150.toml", 150),
        ("coverage-dbpedia219.toml", 219),
    ] {
        let path = root().join("config").join(f);
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("[model]", "[model]\nengine = \"simulated\"");
        let cfg = parse_in(&text, &path, &root()).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(cfg.arms.is_empty());
        let c = cfg.coverage.expect("a [coverage] section");
        assert_eq!(c.loaded.len(), 1);
        assert_eq!(c.loaded[0].labels.len(), labels, "{f}");
        assert!(c.none.contains(&true) && c.none.contains(&false));
    }
}

/// Coverage cases are selected by id only; item selectors are refused.
#[test]
fn coverage_refuses_item_selectors() {
    let text = r#"
[model]
engine = "simulated"
[[sources]]
kind = "jsonl"
path = "data/banks/coverage-banking77.jsonl"
select = { lengths = [3] }
[coverage]
catalogues = ["data/banks/coverage-banking77.catalogue.json"]
"#;
    let e = parse_in(text, Path::new("x.toml"), &root()).unwrap_err();
    assert_eq!(e.field, "sources[0].select");
}

/// Sizes below 2 and repeated sizes are refused, naming `coverage.ks`.
#[test]
fn coverage_refuses_bad_sizes() {
    for ks in ["[1]", "[4, 4]", "[76, \"all_but_reference\"]"] {
        let text = format!(
            r#"
[model]
engine = "simulated"
[[sources]]
kind = "jsonl"
path = "data/banks/coverage-banking77.jsonl"
[coverage]
catalogues = ["data/banks/coverage-banking77.catalogue.json"]
ks = {ks}
"#
        );
        let e = parse_in(&text, Path::new("x.toml"), &root()).unwrap_err();
        assert_eq!(e.field, "coverage.ks", "{ks}");
    }
}

/// A repeated name variant or none choice would make two identical requests per case.
#[test]
fn coverage_refuses_repeated_variants() {
    for extra in ["names = [\"natural\", \"natural\"]", "none = [true, true]"] {
        let text = format!(
            r#"
[model]
engine = "simulated"
[[sources]]
kind = "jsonl"
path = "data/banks/coverage-banking77.jsonl"
[coverage]
catalogues = ["data/banks/coverage-banking77.catalogue.json"]
{extra}
"#
        );
        let e = parse_in(&text, Path::new("x.toml"), &root()).unwrap_err();
        assert!(
            e.field == "coverage.names" || e.field == "coverage.none",
            "{e}"
        );
    }
}

/// The shipped dialogue configs validate; the main ones hold C.2's 3 arms × C.1's 3 modes
/// and the 114-id test panel (96 prefixes + 12 paraphrases + 6 value permutations).
#[test]
fn dialogue_configs_parse_with_every_arm_and_mode() {
    for (f, contract, ids) in [
        ("dialogue.toml", c2s_records::DialogueContract::Scored, 114),
        (
            "dialogue-generated.toml",
            c2s_records::DialogueContract::Generated,
            114,
        ),
        (
            "dialogue-smoke.toml",
            c2s_records::DialogueContract::Scored,
            2,
        ),
    ] {
        let path = root().join("config").join(f);
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("[model]", "[model]\nengine = \"simulated\"");
        let cfg = parse_in(&text, &path, &root()).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(cfg.arms.is_empty() && cfg.coverage.is_none());
        let d = cfg.dialogue.expect("a [dialogue] section");
        assert_eq!(d.specs().len(), 9, "{f}");
        assert_eq!(d.contract, contract);
        assert_eq!(
            d.sign_test_draws,
            if f.contains("smoke") { 999 } else { 99_999 }
        );
        let selected = match &cfg.sources[0] {
            crate::SourceConfig::Jsonl {
                select: Some(sel), ..
            } => sel.ids.as_ref().map(Vec::len),
            _ => None,
        };
        assert_eq!(selected, Some(ids), "{f}");
    }
}

/// Dialogues are selected by id only, and a [dialogue] run has no [[arms]] or [coverage].
#[test]
fn dialogue_refuses_item_selectors_and_arms() {
    let base = r#"
[model]
engine = "simulated"
[[sources]]
kind = "jsonl"
path = "data/banks/dialogue-synthetic.jsonl"
"#;
    let e = parse_text(&format!(
        "{}\n[dialogue]\n",
        base.replace(".jsonl\"", ".jsonl\"\nselect = { lengths = [3] }")
    ))
    .unwrap_err();
    assert_eq!(e.field, "sources[0].select", "{e}");
    let e = parse_text(&format!("{base}\n[dialogue]\nmodes = []\n")).unwrap_err();
    assert_eq!(e.field, "dialogue.modes", "{e}");
    let e = parse_text(&format!(
        "{base}\n[dialogue]\narms = [\"joint\", \"batch\"]\n"
    ))
    .unwrap_err();
    assert_eq!(e.field, "dialogue.arms", "{e}");
    assert!(e.to_string().contains("`batch`"), "{e}");
    // Without sign_test_mode, a run without HistoryRecompute tests under its first mode.
    let cfg = parse_text(&format!(
        "{base}\n[dialogue]\nmodes = [\"rollout\", \"oracle\"]\n"
    ))
    .unwrap();
    let d = cfg.dialogue.unwrap();
    assert_eq!(d.sign_test_mode(), c2s_records::PriorMode::Rollout);
}
