use super::*;
use c2s_records::{RequestLayout, Support};
use std::path::{Path, PathBuf};

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
        "remote-example.toml",
    ] {
        let path = root().join("config").join(f);
        let text = std::fs::read_to_string(&path).unwrap();
        let value: toml::Value = toml::from_str(&text).unwrap();
        let model = root().join(value["model"]["path"].as_str().unwrap());
        // The model may be absent in a checkout without set-up; the rest must validate.
        let text = if model.exists() {
            text
        } else {
            on_simulated_engine(&text)
        };
        let cfg = parse_in(&text, &path, &root()).unwrap_or_else(|e| panic!("{e}"));
        assert!(!cfg.arms.is_empty());
    }
}

/// `text` with `[model] engine = "simulated"`, for a checkout without the model file (a
/// textual edit would also hit `[model]` in comments and a config's own `engine` key).
fn on_simulated_engine(text: &str) -> String {
    let mut value: toml::Value = toml::from_str(text).unwrap();
    value["model"]
        .as_table_mut()
        .unwrap()
        .insert("engine".into(), "simulated".into());
    toml::to_string(&value).unwrap()
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
    // An unknown engine names its key, its line and the engines there are.
    let e = error_of(&MINIMAL.replace("engine = \"simulated\"", "engine = \"vllm\""));
    assert_eq!(e.field, "model.engine");
    assert_eq!(
        e.line,
        MINIMAL
            .lines()
            .position(|l| l.starts_with("engine"))
            .map(|n| n + 1)
    );
    for name in [
        "`vllm`",
        "`prefix`",
        "`mistralrs`",
        "`openai`",
        "`simulated`",
    ] {
        assert!(e.message.contains(name), "{e}");
    }
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
    // `[model] dtype`: f32 or bf16, a mode of the prefix engine only.
    let e = error_of(&MINIMAL.replace(
        "engine = \"simulated\"",
        "engine = \"simulated\"\ndtype = \"f16\"",
    ));
    assert_eq!(e.field, "model.dtype");
    let e = error_of(&MINIMAL.replace(
        "engine = \"simulated\"",
        "engine = \"simulated\"\ndtype = \"bf16\"",
    ));
    assert_eq!(e.field, "model.dtype");
    assert!(e.message.contains("prefix engine"), "{e}");
    let ok = parse_text(&MINIMAL.replace(
        "engine = \"simulated\"",
        "engine = \"simulated\"\ndtype = \"f32\"",
    ));
    assert!(ok.is_ok_and(|c| c.model.dtype == c2s_records::WeightDtype::F32));
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
    let e = error_of(&format!(
        "{MINIMAL}\n[inference]\nmax_outage_seconds = -1\n"
    ));
    assert_eq!(e.field, "inference.max_outage_seconds");
    assert!(e.message.contains("non-negative"), "{e}");
    let e = error_of(&format!("{MINIMAL}\n[output]\nmax_buffered_mb = 0\n"));
    assert_eq!(e.field, "output.max_buffered_mb");
    assert!(e.message.contains("positive"), "{e}");
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

/// Paper A.6: "The primary six Native/Serial exact McNemar tests share a Holm correction at
/// 0.05. Later panels state their own seeds, draw counts and correction families." Without
/// declared families the run's Holm family is that primary family: Native/code vs
/// Serial/Full/code across models and domains (scope global); other comparisons are
/// supplementary and get a family only when one is declared.
#[test]
fn default_holm_family_is_the_papers_primary_family() {
    let text = MINIMAL.replace("support = \"UnionFill\"", "support = \"Full\"");
    let cfg = parse_text(&format!(
        "{text}\n[[arms]]\narm = \"Serial\"\nsupport = \"TrieCall\"\n"
    ))
    .unwrap();
    assert_eq!(cfg.comparisons.len(), 2);
    assert_eq!(
        cfg.stats.families,
        vec![FamilyEntry {
            name: "primary".into(),
            comparisons: vec!["Native/code vs Serial/Full/code".into()],
            scope: FamilyScope::Global,
        }]
    );
    // A run without the primary comparison has no default family.
    let cfg = parse_text(MINIMAL).unwrap();
    assert!(cfg.stats.families.is_empty());
    // Declared families replace the default.
    let declared = format!(
        "{MINIMAL}\n[[stats.families]]\nname = \"union\"\ncomparisons = [\"Native/code vs Serial/UnionFill/code\"]\n"
    );
    let cfg = parse_text(&declared).unwrap();
    assert_eq!(cfg.stats.families.len(), 1);
    assert_eq!(cfg.stats.families[0].name, "union");
}

/// The paper's size of the primary family comes with it ("The primary six Native/Serial exact
/// McNemar tests share a Holm correction at 0.05", A.6); a declared paper family must name a
/// family of the config, hold a test and quote its passage.
#[test]
fn paper_families_name_a_family_of_the_config() {
    let text = MINIMAL.replace("support = \"UnionFill\"", "support = \"Full\"");
    let cfg = parse_text(&text).unwrap();
    assert_eq!(
        cfg.stats.paper_families,
        vec![crate::primary_paper_family()]
    );
    assert_eq!(cfg.stats.paper_families[0].tests, 6);

    let family = "[[stats.families]]\nname = \"union\"\ncomparisons = [\"Native/code vs Serial/UnionFill/code\"]\n";
    let ok = format!(
        "{MINIMAL}\n{family}[[stats.paper_families]]\nname = \"union\"\ntests = 6\npassage = \"D.5\"\n"
    );
    let cfg = parse_text(&ok).unwrap();
    assert_eq!(
        cfg.stats.paper_families.len(),
        1,
        "no primary size without the primary family"
    );
    for (bad, field, says) in [
        (
            "name = \"unoin\"\ntests = 6\npassage = \"D.5\"",
            "stats.paper_families[0].name",
            "names no Holm family",
        ),
        (
            "name = \"union\"\ntests = 0\npassage = \"D.5\"",
            "stats.paper_families[0].tests",
            "at least one test",
        ),
        (
            "name = \"union\"\ntests = 6\npassage = \" \"",
            "stats.paper_families[0].passage",
            "quote",
        ),
    ] {
        let e = error_of(&format!(
            "{MINIMAL}\n{family}[[stats.paper_families]]\n{bad}\n"
        ));
        assert_eq!(e.field, field, "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
}

#[test]
fn unknown_family_scope_is_a_config_error() {
    let text = format!(
        "{MINIMAL}\n[[stats.families]]\nname = \"f\"\ncomparisons = [\"Native/code vs Serial/UnionFill/code\"]\nscope = \"per_modell\"\n"
    );
    let e = error_of(&text);
    assert_eq!(e.field, "stats.families[0].scope");
    assert!(e.message.contains("per_modell"), "{e}");
    assert!(e.line.is_some(), "{e:?}");
}

/// E.2 / E.5 list `state` first; the state-last order is a named, non-default layout that
/// applies to every arm and marks every arm label, comparison and family.
#[test]
fn request_layout_is_paper_by_default_and_state_last_is_named() {
    let cfg = parse_text(MINIMAL).unwrap();
    assert_eq!(cfg.run.request_layout, RequestLayout::Paper);
    assert!(cfg.arms.iter().all(|a| a.layout == RequestLayout::Paper));
    let text = format!("[run]\nrequest_layout = \"state_last\"\n{MINIMAL}")
        .replace("support = \"UnionFill\"", "support = \"Full\"");
    let cfg = parse_text(&format!(
        "{text}\n[[comparisons]]\nnative = \"Native/code\"\nserial = \"Serial/Full/code\"\n"
    ))
    .unwrap();
    assert!(cfg
        .arms
        .iter()
        .all(|a| a.layout == RequestLayout::StateLast));
    assert_eq!(
        cfg.comparisons,
        vec![(
            "Native/code/state-last".to_string(),
            "Serial/Full/code/state-last".to_string()
        )]
    );
    assert_eq!(
        cfg.stats.families[0].comparisons,
        ["Native/code/state-last vs Serial/Full/code/state-last"]
    );
    let e = error_of(&format!("[run]\nrequest_layout = \"last\"\n{MINIMAL}"));
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("last"), "{e}");
}

/// B.3: "emits the complete answer in one greedy response, with thinking disabled and 64 new
/// tokens. … The same checkpoint and items are used in Native and legal-code Serial; … Joint,
/// lost and gained counts below retain this pairing." E.3: "Both allow 32 new tokens".
#[test]
fn whole_answer_budget_and_explicit_pairings() {
    let text = format!(
        "{MINIMAL}\n[[arms]]\narm = \"WholeGenerate\"\nmax_new_tokens = 64\n\n[[arms]]\narm = \"WholeGenerate\"\n\n[[comparisons]]\nnative = \"Native/code\"\nserial = \"WholeGenerate/string/max64\"\n\n[[comparisons]]\nreference = \"WholeGenerate/string\"\ncompared = \"Serial/UnionFill/code\"\n"
    );
    let cfg = parse_text(&text).unwrap();
    assert_eq!(cfg.arms[2].max_new_tokens, Some(64));
    assert_eq!(cfg.arms[3].max_new_tokens, None);
    assert_eq!(
        c2s_protocol::prompts::decoding(&cfg.arms[2]),
        c2s_records::Decoding::Greedy { max_new_tokens: 64 }
    );
    assert_eq!(
        c2s_protocol::prompts::decoding(&cfg.arms[3]),
        c2s_records::Decoding::Greedy { max_new_tokens: 32 }
    );
    assert_eq!(
        cfg.comparisons,
        vec![
            (
                "Native/code".to_string(),
                "WholeGenerate/string/max64".to_string()
            ),
            (
                "WholeGenerate/string".to_string(),
                "Serial/UnionFill/code".to_string()
            )
        ]
    );
    let e = error_of(&format!(
        "{MINIMAL}\n[[comparisons]]\nnative = \"Native/code\"\nserial = \"Native/code\"\n"
    ));
    assert_eq!(e.field, "comparisons[0].serial");
    let e = error_of(&MINIMAL.replace(
        "arm = \"Native\"\n",
        "arm = \"Native\"\nmax_new_tokens = 16\n",
    ));
    assert_eq!(e.field, "arms[0]");
    assert!(e.message.contains("max_new_tokens"), "{e}");
}

/// Panels name subsets of the banks ("the 30-plan panel", "72 preselected natural items",
/// A.4/A.5) by an id list or by a filter on length, domain and stratum.
#[test]
fn sources_select_items_by_id_list_and_filter() {
    let dir = tempfile::tempdir().unwrap();
    let ids = dir.path().join("ids.txt");
    std::fs::write(
        &ids,
        "# a panel\narith-dev-3-01\n\narith-dev-4-01  # trailing comment\n",
    )
    .unwrap();
    let bank = root().join("data/banks/arithmetic-dev.jsonl");
    let text = MINIMAL.replace(
        "path = \"data/banks/arithmetic-dev.jsonl\"",
        &format!(
            "path = \"data/banks/arithmetic-dev.jsonl\"\nselect = {{ ids_file = \"{}\", lengths = [3] }}",
            ids.display()
        ),
    );
    let cfg = parse_text(&text).unwrap();
    let SourceConfig::Jsonl {
        select: Some(sel), ..
    } = &cfg.sources[0]
    else {
        panic!("{:?}", cfg.sources[0]);
    };
    assert_eq!(
        sel.ids.as_deref(),
        Some(&["arith-dev-3-01".to_string(), "arith-dev-4-01".to_string()][..])
    );
    let kept: Vec<String> = std::fs::read_to_string(&bank)
        .unwrap()
        .lines()
        .filter(|l| sel.keeps(l))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["item_id"].to_string())
        .collect();
    assert_eq!(kept, ["\"arith-dev-3-01\""], "ids and length both hold");
    assert!(
        sel.keeps("{not json"),
        "unreadable records go on to rejects/"
    );

    let strata = Selection {
        domains: Some(vec!["arithmetic".into()]),
        structure: Some("unbalanced".into()),
        carry_class: Some("high".into()),
        ..Default::default()
    };
    let text = std::fs::read_to_string(&bank).unwrap();
    let n = text.lines().filter(|l| strata.keeps(l)).count();
    assert_eq!(n, 12, "2 per length in each dev cell");
    let lexical = Selection {
        repeated_letters: Some(true),
        ..Default::default()
    };
    assert_eq!(text.lines().filter(|l| lexical.keeps(l)).count(), 0);

    let e = error_of(&MINIMAL.replace(
        "path = \"data/banks/arithmetic-dev.jsonl\"",
        "path = \"data/banks/arithmetic-dev.jsonl\"\nselect = { ids_file = \"nope.txt\" }",
    ));
    assert_eq!(e.field, "sources[0].select.ids_file");
    let e = error_of(&MINIMAL.replace(
        "path = \"data/banks/arithmetic-dev.jsonl\"",
        "path = \"data/banks/arithmetic-dev.jsonl\"\nselect = { carry_class = \"medium\" }",
    ));
    assert_eq!(e.field, "sources[0].select.carry_class");
    let e = error_of(&MINIMAL.replace(
        "path = \"data/banks/arithmetic-dev.jsonl\"",
        "path = \"data/banks/arithmetic-dev.jsonl\"\nselect = { lenghts = [3] }",
    ));
    assert!(e.message.contains("lenghts"), "{e}");
    assert_eq!(
        read_id_list("a\nb\na\n"),
        Err((3, "`a` is listed twice".to_string()))
    );
}

/// Every shipped panel config validates as shipped (paths, panels, arms, comparisons,
/// families); the end-to-end smoke runs are in tests/tests/panels.rs.
#[test]
fn every_panel_config_validates() {
    let dir = root().join("config/panels");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let model = root().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
        // D.9's token control needs the model's tokenizer: without the model it is refused.
        let needs_tokenizer = text.contains("\"padded-tokens\"");
        let text = if model.exists() {
            text
        } else if needs_tokenizer {
            on_simulated_engine(&text)
                .replace("evidence = \"padded-tokens\"", "evidence = \"padded\"")
                .replace("/padded-tokens/", "/padded/")
        } else {
            on_simulated_engine(&text)
        };
        let cfg = parse_in(&text, &path, &root()).unwrap_or_else(|e| panic!("{e}"));
        names.push(path.file_stem().unwrap().to_string_lossy().to_string());
        match names.last().map(String::as_str) {
            // D.13: "Indexed/Direct evidence, code/character output, three templates and three
            // orders" — 2 × 2 × 3 × 3 arms.
            // "Seventy-two setting contrasts share Holm correction" (char − code in 18 settings
            // × two domains × two models); "Sixteen sign-randomization tests form a separate
            // Holm family" (T1/T2 − T0 interactions: 2 domains × 2 evidence × 2 × 2 models).
            Some("readout-grid") => {
                assert_eq!(cfg.arms.len(), 36);
                assert_eq!(cfg.comparisons.len(), 18);
                assert_eq!(cfg.stats.families[0].comparisons.len(), 18);
                assert_eq!(cfg.stats.contrasts.len(), 8);
                let sizes: Vec<u32> = cfg.stats.paper_families.iter().map(|f| f.tests).collect();
                assert_eq!(sizes, [72, 16]);
            }
            Some("support") => {
                assert_eq!(cfg.arms.len(), 7);
                // D.6: "Bootstrap uses 9,999 whole-item draws"; "Eight TrieCall versus
                // Full/Union contrasts share one Holm family; twelve filling contrasts form a
                // separate family."
                assert_eq!(cfg.stats.bootstrap_draws, 9_999);
                assert_eq!(cfg.stats.seed, 20_261_010);
                let sizes: Vec<(&str, u32)> = cfg
                    .stats
                    .paper_families
                    .iter()
                    .map(|f| (f.name.as_str(), f.tests))
                    .collect();
                assert_eq!(
                    sizes,
                    [("D.6 TrieCall vs Full/Union", 8), ("D.6 filling", 12)]
                );
                assert_eq!(cfg.stats.families[0].comparisons.len(), 2);
                assert_eq!(cfg.stats.families[1].comparisons.len(), 3);
            }
            // D.5: "Singleton unions are filled with no call or assigned probability" (Union
            // is UnionFill); "Six Full/Union McNemar tests share Holm correction. Intervals
            // use 99,999 length-stratified bootstrap draws with seed 20261009."
            Some("support-union") => {
                let labels: Vec<String> = cfg.arms.iter().map(|a| a.label()).collect();
                assert_eq!(
                    labels,
                    ["Native/code", "Serial/Full/code", "Serial/UnionFill/code"]
                );
                assert_eq!(
                    (cfg.stats.bootstrap_draws, cfg.stats.seed),
                    (99_999, 20_261_009)
                );
                assert_eq!(cfg.stats.paper_families[0].tests, 6);
            }
            // B.5: Raw / Indexed / Direct × four name conditions; A.5: "120 natural parents
            // and twelve symbolic COPY bases with two encodings: 144 records" (arithmetic,
            // lexical and the symbolic bank).
            // "Extra conflict loss is (aligned − conflicting) − (opaque − remapped)": one
            // difference of differences per evidence level, one Holm family.
            // B.5: "Cross-model estimates average two shared repeats within parent": every
            // arm twice (r0, r1), each side of a contrast holding both repeats.
            Some("binding") => {
                assert_eq!(cfg.arms.len(), 24);
                assert_eq!(cfg.arms.iter().filter(|a| a.repeat == 1).count(), 12);
                assert_eq!(cfg.sources.len(), 3);
                assert_eq!(cfg.stats.contrasts.len(), 3);
                assert!(cfg
                    .stats
                    .contrasts
                    .iter()
                    .all(|c| c.difference_of_differences
                        && c.family.as_deref() == Some("B.5 extra conflict loss")
                        && c.compared.len() == 4
                        && c.compared.iter().filter(|s| s.arm.ends_with("/r1")).count() == 2));
                assert!(
                    cfg.stats.families.is_empty(),
                    "no McNemar family in its place"
                );
            }
            // §3.3: "A separate replay compares transcript recomputation with predicted or
            // gold prior state" (C.1: Joint under three modes); C.2: "Joint, Independent and
            // Serial use the same visible history and schema".
            Some("dialogue-prior") => {
                let d = cfg.dialogue.as_ref().expect("a dialogue panel");
                assert_eq!(d.arms, [c2s_records::DialogueArm::Joint]);
                assert_eq!(d.modes.len(), 3);
            }
            Some("dialogue-matched") => {
                let d = cfg.dialogue.as_ref().expect("a dialogue panel");
                assert_eq!(d.arms.len(), 3);
                assert_eq!(d.modes, [c2s_records::PriorMode::HistoryRecompute]);
            }
            // D.8: "Six paired generation contrasts have a separate Holm family": three
            // comparisons × two domains.
            Some("table3") => {
                assert_eq!(cfg.comparisons.len(), 3);
                assert_eq!(cfg.stats.families[0].comparisons.len(), 3);
                assert_eq!(cfg.stats.paper_families[0].tests, 6);
            }
            // D.4: "four nonreference Serial contrasts share one exact McNemar/Holm family":
            // v2 and v3 Serial against v1's in two domains.
            Some("prompt-variants-direct") => {
                assert_eq!(cfg.stats.families[0].comparisons.len(), 2);
                assert_eq!(cfg.stats.paper_families[0].tests, 4);
            }
            // D.12: 48 parents per domain, one incorrect plan each.
            Some("copy-incorrect") => {
                let plans = &cfg.copy_plans.as_ref().unwrap().plans;
                assert_eq!(plans.len(), 96);
                assert_eq!(cfg.comparisons.len(), 2);
                assert_eq!(cfg.stats.families.len(), 2, "separate Holm families");
            }
            // D.7: Native + 2 alphabets × 2 query counts; "Three average factor contrasts";
            // Table D8's 2 placements × 4 configurations.
            Some("twelve-character") => {
                assert_eq!(cfg.arms.len(), 5);
                assert_eq!(cfg.comparisons.len(), 4);
                assert_eq!(cfg.stats.contrasts.len(), 3);
                assert_eq!(cfg.stats.cells.len(), 8);
                assert!(cfg
                    .stats
                    .contrasts
                    .iter()
                    .all(|c| c.family.as_deref() == Some("D.7 factors")));
            }
            // D.11: Raw/Indexed/Direct × Independent/Serial and Raw/Indexed × Batch; "Six
            // Serial indexing and six raw Batch-minus-Independent tests share Holm correction".
            Some("copy") => {
                assert_eq!(cfg.arms.len(), 8);
                assert_eq!(cfg.comparisons.len(), 2);
                assert_eq!(cfg.stats.families.len(), 1);
                assert_eq!(cfg.stats.families[0].comparisons.len(), 2);
                // "Feedback contrasts … have separate families."
                let feedback = cfg
                    .stats
                    .contrasts
                    .iter()
                    .filter(|c| c.family.as_deref() == Some("D.11 feedback"))
                    .count();
                assert_eq!(feedback, 6);
            }
            // A.4: correct/error drafts × whole/character readouts, beside Native.
            Some("prefix-intervention") => {
                assert_eq!(cfg.arms.len(), 5);
                assert_eq!(cfg.comparisons.len(), 2);
                assert_eq!(cfg.stats.families[0].comparisons.len(), 2);
            }
            // D.9: RawCopy, IndexedCopy and PaddedCopy; Indexed-minus-Padded per domain.
            Some("padded") => {
                assert_eq!(cfg.arms.len(), 3);
                assert_eq!(cfg.comparisons.len(), 1);
                assert_eq!(cfg.stats.contrasts.len(), 2);
            }
            // D.9's token control: the same parents and three arms, its own Holm family.
            Some("padded-tokens") => {
                assert_eq!(cfg.arms.len(), 3);
                if model.exists() {
                    assert_eq!(cfg.arms[2].evidence, c2s_records::Evidence::PaddedTokens);
                }
                assert_eq!(cfg.stats.contrasts.len(), 2);
                assert_eq!(cfg.stats.families[0].name, "indexed minus padded (tokens)");
            }
            Some("copy-reverse") => {
                assert_eq!(cfg.arms.len(), 2);
                assert_eq!(cfg.stats.contrasts.len(), 2);
            }
            // D.10: "Independent uses 384 parents per domain"; "In 9,999 paired draws within
            // length".
            Some("independent-384") => {
                let labels: Vec<String> = cfg.arms.iter().map(|a| a.label()).collect();
                assert_eq!(
                    labels,
                    ["Native/code", "Independent/Full/code", "Serial/Full/code"]
                );
                assert!(
                    cfg.sources.iter().all(|s| matches!(
                        s,
                        crate::SourceConfig::Jsonl {
                            select: None,
                            limit: None,
                            ..
                        }
                    )),
                    "all 384 per domain"
                );
                assert_eq!(cfg.stats.bootstrap_draws, 9_999);
            }
            // A.5: "Four indexing contrasts and four controller–representation interactions
            // form separate families for Holm correction" (two per model here), on fidelity.
            Some("fresh-plan") => {
                assert_eq!(cfg.arms.len(), 5);
                assert_eq!(cfg.stats.contrasts.len(), 4);
                assert!(cfg
                    .stats
                    .contrasts
                    .iter()
                    .all(|c| c.endpoint == c2s_records::Endpoint::Fidelity));
                let sizes: Vec<(&str, u32)> = cfg
                    .stats
                    .paper_families
                    .iter()
                    .map(|f| (f.name.as_str(), f.tests))
                    .collect();
                assert_eq!(
                    sizes,
                    [
                        ("A.5 fresh-plan indexing", 4),
                        ("A.5 fresh-plan controller x representation", 4)
                    ]
                );
            }
            // B.6: "three evidence sources and code/character outputs on all 144 records, giving
            // 864 requests"; "a budget of eight tokens".
            Some("matched-contracts") => {
                assert_eq!(cfg.arms.len(), 6);
                assert_eq!(cfg.sources.len(), 3);
                assert!(cfg.arms.iter().all(|a| c2s_protocol::prompts::decoding(a)
                    == c2s_records::Decoding::Greedy { max_new_tokens: 8 }));
                assert_eq!(cfg.stats.contrasts.len(), 6);
            }
            // D.11: "twelve raw/indexed binding contrasts have separate families".
            Some("nested-binding") => {
                assert_eq!(cfg.arms.len(), 4);
                assert_eq!(cfg.stats.families[0].comparisons.len(), 2);
                assert_eq!(cfg.stats.paper_families[0].tests, 12);
                assert_eq!(cfg.stats.contrasts.len(), 4);
            }
            // A.4: "Its control uses only the candidates and withholds the problem."
            Some("native-control") => {
                let labels: Vec<String> = cfg.arms.iter().map(|a| a.label()).collect();
                assert_eq!(labels, ["Native/code", "NativeControl/code"]);
            }
            // A.5: Native and three two-option Serial decisions, per representation.
            Some("semantic-bridge") => {
                assert_eq!(cfg.arms.len(), 2);
                assert_eq!(cfg.stats.cells.len(), 2);
            }
            _ => {}
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "binding",
            "copy",
            "copy-incorrect",
            "copy-incorrect-plans",
            "copy-reverse",
            "dialogue-matched",
            "dialogue-prior",
            "fresh-plan",
            "independent-384",
            "matched-contracts",
            "native-control",
            "nested-binding",
            "option-orders",
            "padded",
            "padded-tokens",
            "prefix-intervention",
            "prompt-variants",
            "prompt-variants-direct",
            "readout-grid",
            "repeats",
            "semantic-bridge",
            "stop",
            "support",
            "support-union",
            "table1-code",
            "table1-direct",
            "table3",
            "teacher-forced",
            "twelve-character",
            "whole-answer"
        ]
    );
}

/// D.12: IncorrectCopy copies supplied plans. The plan file is read when the config loads, so
/// a missing or malformed file, or an IncorrectCopy arm without one, stops before any work.
#[test]
fn copy_plans_are_read_at_load_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let base = |extra: &str| {
        format!(
            "{}\n{extra}",
            MINIMAL.replace(
                "[[arms]]\narm = \"Native\"",
                "[[arms]]\narm = \"IncorrectCopy\"\nevidence = \"indexed\""
            )
        )
    };
    let plans = dir.path().join("plans.jsonl");
    std::fs::write(
        &plans,
        "{\"item_id\":\"arith-dev-3-01\",\"plan\":\"759\",\"origin\":\"constructed\"}\n",
    )
    .unwrap();
    let cfg = parse_text(&base(&format!(
        "[copy_plans]\npath = \"{}\"\n",
        plans.display()
    )))
    .unwrap();
    let section = cfg.copy_plans.unwrap();
    assert_eq!(section.plans["arith-dev-3-01"].plan, "759");
    assert_eq!(
        cfg.arms[0].label(),
        "IncorrectCopy/Full/code/indexed/serial"
    );

    let e = parse_text(&base("")).unwrap_err();
    assert_eq!(e.field, "copy_plans", "{e}");
    std::fs::write(&plans, "{\"item_id\":\"a\",\"plan\":\"759\"}\n").unwrap();
    let e = parse_text(&base(&format!(
        "[copy_plans]\npath = \"{}\"\n",
        plans.display()
    )))
    .unwrap_err();
    assert_eq!(e.field, "copy_plans.path");
    assert!(
        e.message.contains(":1:") && e.message.contains("origin"),
        "{e}"
    );
    std::fs::write(
        &plans,
        "{\"item_id\":\"a\",\"plan\":\"759\",\"origin\":\"observed\"}\n",
    )
    .unwrap();
    let e = parse_text(&format!(
        "{MINIMAL}\n[copy_plans]\npath = \"{}\"\n",
        plans.display()
    ))
    .unwrap_err();
    assert!(e.message.contains("no IncorrectCopy arm"), "{e}");
}

/// `engine = "openai"`: `[model.openai]` is required and checked before any work; scored
/// options (and assistant prefixes) are rendered on our side, so they need `path`.
#[test]
fn openai_engine_settings_are_checked() {
    let remote = |model: &str, openai: &str, arms: &str| {
        format!(
            "[model]\nengine = \"openai\"\n{model}\n{openai}\n[[sources]]\nkind = \"jsonl\"\npath = \"data/banks/arithmetic-dev.jsonl\"\n\n{arms}"
        )
    };
    let ok_server = "[model.openai]\nbase_url = \"http://127.0.0.1:8000/v1\"\nmodel = \"m\"\n";
    let generated = "[[arms]]\narm = \"WholeGenerate\"\n";
    let native = "[[arms]]\narm = \"Native\"\n";
    // Generated contracts through chat completions need no local tokenizer.
    let cfg = parse_text(&remote("", ok_server, generated)).unwrap();
    let o = cfg.model.openai.unwrap();
    assert_eq!(
        (o.scoring, o.concurrency, o.max_retries),
        (OpenAiScoring::Echo, 4, 4)
    );
    // A scored arm needs the served model's tokenizer and template.
    let e = parse_text(&remote("", ok_server, native)).unwrap_err();
    assert_eq!(e.field, "model.path");
    assert!(e.message.contains("Native/code"), "{e}");
    assert!(parse_text(&remote(
        "path = \"models/SmolLM2-135M-Instruct.Q4_1.gguf\"",
        ok_server,
        native
    ))
    .is_ok_or_missing_model());
    for (openai, field) in [
        ("", "model.openai"),
        (
            "[model.openai]\nbase_url = \"127.0.0.1:8000\"\nmodel = \"m\"\n",
            "model.openai.base_url",
        ),
        (
            &format!("{ok_server}scoring = \"guess\"\n"),
            "model.openai.scoring",
        ),
        (
            &format!("{ok_server}concurrency = 0\n"),
            "model.openai.concurrency",
        ),
        (
            &format!("{ok_server}generation_endpoint = \"x\"\n"),
            "model.openai.generation_endpoint",
        ),
    ] {
        let e = parse_text(&remote("", openai, generated)).unwrap_err();
        assert_eq!(e.field, field, "{e}");
    }
    // [model.openai] with another engine is a mistake, not ignored.
    let e = parse_text(&format!("{}\n{ok_server}", MINIMAL)).unwrap_err();
    assert_eq!(e.field, "model.openai", "{e}");
}

trait OkOrMissingModel {
    fn is_ok_or_missing_model(&self) -> bool;
}

impl OkOrMissingModel for Result<RunConfig, ConfigError> {
    /// Valid, or refused only because the default model is not installed in this checkout.
    fn is_ok_or_missing_model(&self) -> bool {
        match self {
            Ok(_) => true,
            Err(e) => e.field == "model.path" && e.message.contains("does not exist"),
        }
    }
}

/// `[[stats.contrasts]]` and `[[stats.cells]]` name configured arms and known values; a
/// mistake stops before any work, naming the field.
#[test]
fn contrasts_and_cells_are_checked_at_load() {
    let base = |extra: &str| format!("{MINIMAL}\n[[arms]]\narm = \"Serial\"\n\n[stats]\n{extra}");
    let ok = parse_text(&base(
        "[[stats.contrasts]]\nname = \"c\"\ncompared = [{ arm = \"Serial/Full/code\", placement = \"late\" }]\nreference = [{ arm = \"Serial/Full/code\", placement = \"early\" }]\n",
    ))
    .unwrap();
    assert_eq!(
        ok.stats.contrasts[0].compared[0].placement.as_deref(),
        Some("late")
    );
    for (extra, field) in [
        ("[[stats.contrasts]]\nname = \"c\"\ncompared = [{ arm = \"Serial/Trie/code\" }]\nreference = [{ arm = \"Native/code\" }]\n", "stats.contrasts[0].compared[0].arm"),
        ("[[stats.contrasts]]\nname = \"c\"\ncompared = []\nreference = [{ arm = \"Native/code\" }]\n", "stats.contrasts[0].compared"),
        ("[[stats.contrasts]]\nname = \"c\"\ncompared = [{ arm = \"Native/code\", placement = \"middle\" }]\nreference = [{ arm = \"Native/code\" }]\n", "stats.contrasts[0].compared[0].placement"),
        ("[[stats.cells]]\nname = \"x\"\narm = \"Serial/Full/code\"\noperation = \"rotate\"\n", "stats.cells[0].operation"),
        ("[[stats.cells]]\nname = \"x\"\narm = \"Serial/Full/code\"\nnative = \"Nope/code\"\n", "stats.cells[0].native.arm"),
        ("[[stats.cells]]\nname = \"x\"\narm = \"Serial/Full/code\"\n\n[[stats.cells]]\nname = \"x\"\narm = \"Native/code\"\n", "stats.cells[1].name"),
        // Fidelity needs a supplied plan: Serial has none.
        ("[[stats.contrasts]]\nname = \"c\"\nendpoint = \"fidelity\"\ncompared = [{ arm = \"Serial/Full/code\" }]\nreference = [{ arm = \"Native/code\" }]\n", "stats.contrasts[0].compared[0].arm"),
    ] {
        let e = parse_text(&base(extra)).unwrap_err();
        assert_eq!(e.field, field, "{e}");
    }
    let e = parse_text(&base(
        "[[stats.contrasts]]\nname = \"c\"\nendpoint = \"plan\"\ncompared = [{ arm = \"Serial/Full/code\" }]\nreference = [{ arm = \"Native/code\" }]\n",
    ))
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("unknown variant `plan`, expected `correct` or `fidelity`"),
        "{e}"
    );
}

/// D.2: "three identical Native requests and three Serial trajectories": `repeat = k` keeps
/// the request and gives the repeat its own label; a repeat past 255 is a config error.
#[test]
fn repeats_have_their_own_labels() {
    let cfg = parse_text(&format!(
        "{MINIMAL}\n[[arms]]\narm = \"Native\"\nrepeat = 1\n\n[[arms]]\narm = \"Serial\"\nrepeat = 2\n"
    ))
    .unwrap();
    let labels: Vec<String> = cfg.arms.iter().map(|a| a.label()).collect();
    assert!(labels.contains(&"Native/code/r1".to_string()), "{labels:?}");
    assert!(
        labels.contains(&"Serial/Full/code/r2".to_string()),
        "{labels:?}"
    );
    let e = parse_text(&format!(
        "{MINIMAL}\n[[arms]]\narm = \"Native\"\nrepeat = 300\n"
    ))
    .unwrap_err();
    assert_eq!(e.field, "arms[2].repeat", "{e}");
}

/// D.7's arm options: `alphabet` and `also_query` parse into the spec and its label; values
/// outside their range and combinations the controller cannot run are config errors.
#[test]
fn alphabet_and_also_query_parse_and_are_checked() {
    let arm = |extra: &str| {
        format!("{MINIMAL}\n[[arms]]\narm = \"Serial\"\nsupport = \"FullFill\"\n{extra}")
    };
    let cfg = parse_text(&arm(
        "alphabet = \"lowercase\"\nalso_query = [1, 4, 8, 12]\n",
    ))
    .unwrap();
    assert!(cfg
        .arms
        .iter()
        .any(|a| a.label() == "Serial/FullFill/code/a-z/query1,4,8,12"));
    for (extra, field) in [
        ("alphabet = \"greek\"\n", "arms[2].alphabet"),
        ("also_query = [0]\n", "arms[2].also_query"),
    ] {
        let e = parse_text(&arm(extra)).unwrap_err();
        assert_eq!(e.field, field, "{e}");
    }
    let e = parse_text(&format!(
        "{MINIMAL}\n[[arms]]\narm = \"Serial\"\nalso_query = [2]\n"
    ))
    .unwrap_err();
    assert_eq!(e.field, "arms[2]", "{e}");
}

/// D.9's token control matches "the pinned tokenizer's full rendered Indexed request": an arm
/// asking for it on an engine without a tokenizer is refused before any work, naming the field.
#[test]
fn padded_tokens_need_the_model_tokenizer() {
    let text = MINIMAL.replacen(
        "[[arms]]",
        "[[arms]]\narm = \"GoldCopy\"\nevidence = \"padded-tokens\"\n\n[[arms]]",
        1,
    );
    let e = error_of(&text);
    assert_eq!(e.field, "arms[0].evidence");
    assert!(
        e.message
            .contains("padded-tokens matches the model's tokenizer"),
        "{e}"
    );
    assert!(e.message.contains("`simulated` engine"), "{e}");
    let e = error_of(&MINIMAL.replacen(
        "[[arms]]",
        "[[arms]]\narm = \"GoldCopy\"\nevidence = \"tokens\"\n\n[[arms]]",
        1,
    ));
    assert!(e.message.contains("padded-tokens"), "{e}");
}

mod runs;
mod security;
