//! `choice2seq reproduce`: one exhibit on the default model, every exhibit on the seeded test
//! double, and several models in one exhibit.

use c2s_sinks::read_trajectories;

/// A command's output, required to be a success: its stderr.
fn succeeded(out: std::process::Output) -> String {
    let (stdout, stderr) = c2s_e2e::text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stderr
}

/// `choice2seq reproduce ARGS…`, required to succeed: its stderr.
fn reproduce_ok(args: &[&str]) -> String {
    succeeded(c2s_e2e::run(args))
}

/// `reproduce EXHIBIT` on two simulated models into `runs`, two items per source, 99 draws.
fn two_models(exhibit: &str, runs: &str) -> std::process::Output {
    c2s_e2e::run(&[
        "reproduce",
        exhibit,
        "--simulated",
        "--model",
        "a.gguf",
        "--model",
        "b.gguf",
        "--runs",
        runs,
        "--limit",
        "2",
        "--draws",
        "99",
    ])
}

/// `choice2seq reproduce table1` on the default model: it derives each panel's config (this
/// model, one item per source, 99 draws), runs table1-code and table1-direct, and writes Table
/// 1's layout with the paper's rows beside ours; a second call reuses the complete runs.
#[test]
fn reproduce_table1_runs_its_panels_and_writes_the_papers_layout() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let runs_arg = runs.display().to_string();
    let model = c2s_e2e::model_path().display().to_string();
    let args = [
        "reproduce",
        "table1",
        "--model",
        &model,
        "--runs",
        &runs_arg,
        "--limit",
        "1",
        "--draws",
        "99",
    ];
    reproduce_ok(&args);
    for panel in ["table1-code", "table1-direct"] {
        let derived = std::fs::read_to_string(runs.join(format!("configs/{panel}.toml"))).unwrap();
        assert!(
            derived.contains(&model) && derived.contains("limit = 1"),
            "{derived}"
        );
        assert_eq!(
            read_trajectories(&runs.join(panel).join("trajectories"))
                .unwrap()
                .len(),
            4,
            "{panel}: Native and Serial on one item of each domain"
        );
    }
    let md = std::fs::read_to_string(runs.join("table1.md")).unwrap();
    for want in [
        "| Model / interface | Domain | Native EM | Joint counts | Serial EM | SCR count | SCR [95% CI] |",
        "(code) | math |",
        "(direct) | lexical |",
        "| Qwen3.5-27B (direct) | lexical | 99.0 | 132/248/0/4 | 34.4 | 132/380 | 34.7 [30.0, 39.6] |",
        "| Qwen3.5-27B (code) |",
    ] {
        assert!(md.contains(want), "missing {want:?} in\n{md}");
    }
    assert!(runs.join("table1.html").exists());
    let stderr = reproduce_ok(&args);
    assert_eq!(
        stderr.matches("reusing the complete run").count(),
        2,
        "{stderr}"
    );
}

/// The paper's tables compare several models and its Holm families and Table D1's population
/// span them: `reproduce --model A --model B` runs every panel once per model (each in its own
/// directory, reused afterwards) and computes each exhibit from all their records.
#[test]
fn reproduce_compares_several_models_in_one_exhibit() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let runs_arg = runs.display().to_string();
    let reproduce = |exhibit: &str| {
        let stderr = succeeded(two_models(exhibit, &runs_arg));
        let md = std::fs::read_to_string(runs.join(format!("{exhibit}.md"))).unwrap();
        (md, stderr)
    };
    let (md, stderr) = reproduce("tableD1");
    assert_eq!(stderr.matches(": running ").count(), 4, "{stderr}");
    for model in ["simulated-limit2", "simulated-2-limit2"] {
        for panel in ["table1-code", "table1-direct"] {
            assert!(runs.join(model).join(panel).join("manifest.json").exists());
        }
    }
    // Every model under each interface, on the items all four rows got right.
    for row in [
        "| simulated@135288d00000 (code) | math |",
        "| simulated@135288d00000 (direct) | math |",
        "| simulated@135288e00000 (code) | lexical |",
        "| simulated@135288e00000 (direct) | lexical |",
    ] {
        assert!(md.contains(row), "missing {row:?} in\n{md}");
    }
    // "Two Serial-minus-Joint sign tests share Holm correction" (C.2): one per model.
    let (md, _) = reproduce("tableC4");
    for model in ["simulated@135288d00000", "simulated@135288e00000"] {
        assert!(
            md.contains(&format!("{model}: Serial − Joint mean turn"))
                && md.contains("family of 2)"),
            "{md}"
        );
    }
    // A model already run is reused.
    let (_, stderr) = reproduce("tableD1");
    assert_eq!(
        stderr.matches("reusing the complete run").count(),
        4,
        "{stderr}"
    );
    // Not a run of another design: one recorded with an arm fewer than the panel declares now.
    let manifest = runs.join("simulated-2-limit2/table1-code/manifest.json");
    let mut recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    recorded["config"]["arms"].as_array_mut().unwrap().pop();
    std::fs::write(&manifest, recorded.to_string()).unwrap();
    let out = two_models("tableD1", &runs_arg);
    let (_, stderr) = c2s_e2e::text(&out);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("table1-code was run with other arms than"),
        "{stderr}"
    );
    // A paper model that does not exist is refused before any work.
    let out = c2s_e2e::run(&[
        "reproduce",
        "table1",
        "--against",
        "GPT-9",
        "--runs",
        &runs_arg,
    ]);
    let (_, stderr) = c2s_e2e::text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--against GPT-9: not a model of the paper"),
        "{stderr}"
    );
    // Two models under one directory name are refused before any work.
    let out = c2s_e2e::run(&[
        "reproduce",
        "table1",
        "--model",
        "x/m.gguf",
        "--model",
        "y/m.gguf",
        "--runs",
        &runs_arg,
    ]);
    let (_, stderr) = c2s_e2e::text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("share the directory name m"), "{stderr}");
}

/// `choice2seq reproduce all` on the seeded test double: every exhibit runs its panels (two
/// items per source, 99 draws), each panel once however many exhibits read it, and writes its
/// layout with the paper's rows where the paper prints them.
#[test]
fn reproduce_all_writes_every_exhibits_layout_from_small_simulated_runs() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let runs_arg = runs.display().to_string();
    let args = [
        "reproduce",
        "all",
        "--simulated",
        "--runs",
        &runs_arg,
        "--limit",
        "2",
        "--draws",
        "99",
    ];
    let stderr = reproduce_ok(&args);
    // table1-code and table1-direct feed Table 1 and Table D1; semantic-bridge Tables 2 and B2.
    assert_eq!(
        stderr.matches("table1-code: running").count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("semantic-bridge: running").count(),
        1,
        "{stderr}"
    );
    let exhibits: [(&str, &[&str]); 50] = [
        (
            "table1",
            &["| Jev | math | 97.1 | 123/250/0/11 | 32.0 | 123/373 | 33.0 [29.0, 37.0] |"],
        ),
        (
            "table2",
            &[
                "| Model | Native/Serial EM | Joint counts | SCR |",
                "| StartLux | 51.6/71.1 | 51/15/40/22 | 77.3 |",
            ],
        ),
        (
            "tableB2",
            &["| Qwen3-8B | binary | 14.8 | 15.6 | 1/19 | 5.3 [0.0, 16.7] |"],
        ),
        (
            "table3",
            &[
                "| Interface | Arithmetic | Lexical | Valid | Calls |",
                "| PrefixContinue | 94/96 | 0/96 | 100/9.4 | 5.50 |",
                "| Position query | 0/2 |",
            ],
        ),
        (
            "tableD1",
            &[
                "| Model | Domain | Coverage | Retained | SCR [95% CI] |",
                "| Qwen3.5-27B | lexical | 379/384 | 131/379 | 34.6 [29.8, 39.3] |",
                "(code) | math |",
                "(direct) | lexical |",
            ],
        ),
        (
            "figure14",
            &[
                "## (a, b) Independent, 384 items per domain (independent-384)",
                "· arithmetic · Independent/Full/code",
                "· lexical · TeacherForced/Full/code",
                "| Target length | n | Position-rate product [CI] |",
                "· arithmetic · Independent/Full/code · Native-correct items",
            ],
        ),
        (
            "projection",
            &[
                "| Model | Domain | Items | TV [95% CI] | JS, bits [95% CI] |",
                "| simulated@135288d00000 | lexical | 2 |",
            ],
        ),
        (
            "native-control",
            &["| Model | Domain | Native EM [95% CI] | NativeControl EM [95% CI] | Chance |"],
        ),
        (
            "table4",
            &[
                "| Model | Domain | Raw | Indexed | Gold EM |",
                "| Jev | math | 17/30 | 30/30 | 28/30 |",
            ],
        ),
        (
            "tableB1",
            &[
                "| Domain | Native | Whole | Joint | Lost | Gained |",
                "| Arithmetic | 59 | 181 | 41 | 18 | 140 |",
            ],
        ),
        (
            "tableD5",
            &[
                "| Model | Domain | Both wrong | Recovered | Lost | Both correct |",
                "| StartLux | math | 274 | 103 | 3 | 4 |",
            ],
        ),
        (
            "tableD6",
            &[
                "| Model | Domain | Full calls | Union calls | Forced | Full member | Union member |",
                "| Qwen3.5-27B | math | 2112 | 768 | 1344 | 20.1 | 98.2 |",
            ],
        ),
        (
            "tableD8",
            &[
                "| Early | 10 / 2 | 15/32 | 15/31 | 4/32 | 3/21 |",
                "correct | simulated@",
            ],
        ),
        (
            "tableD10",
            &[
                "| Model | Domain | Evidence | Literal | Opaque | Difference [95% CI] | Holm p |",
                "| math | indexed |",
                "| Qwen3.5-27B | lexical | raw | 37/48 | 11/48 | 54.2 [41.7, 66.7] | 3.30e-7 |",
            ],
        ),
        (
            "figure7",
            &[
                "| Model | Domain | Evidence | Code | Character | Character − code, pp [95% CI] | sign p |",
                "| lexical | direct | 98.3 / 100.0 | 85.0 / 96.7 |",
            ],
        ),
        (
            "tableC1",
            &[
                "| Model | Mode | Trajectory | Mean turn | Final | Valid format |",
                "| simulated@135288d00000 | Rollout |",
                "| Jev | HistoryRecompute | 27.1 | 75.3 | 53.1 | 100.0 |",
            ],
        ),
        (
            "tableC2",
            &[
                "| Model | Endpoint | Difference [95% CI] | Component 95% CI |",
                "| simulated@135288d00000 | mean field |",
                "| StartLux | final | 12.5 [7.3, 17.7] | [6.2, 19.6] |",
            ],
        ),
        (
            "tableC3",
            &[
                "| Model | Mode | Failed | Any recovery | Final recovery |",
                "| StartLux | Oracle | 67 | 56 | 40 |",
            ],
        ),
        (
            "tableC4",
            &[
                "| Model | Arm | Mean turn | Final state | Trajectory |",
                "| simulated@135288d00000 | Serial |",
                "| Jev | Joint | 76.0 [71.0, 80.7] | 55.2 [44.8, 64.6] | 33.3 [24.0, 42.7] |",
                "Serial − Joint mean turn, sign-flip p",
            ],
        ),
        (
            "tableC5",
            &[
                "| Model | Arm | Retained turns | Retention [95% CI] | Valid | Calls | Input tokens |",
                "| simulated@135288d00000 | Joint | reference | reference |",
                "| Qwen3.5-27B | Serial | 395/426 | 93.3 [90.6, 95.8] | 99.4 | 1716 | 1084404 |",
            ],
        ),
        (
            "tableD2",
            &[
                "| Domain | Native correct | Serial 0 | Serial 1 | Serial 2 |",
                "| lexical | 36/36 | 0/36 | 1/36 | 1/36 |",
                "Native choices agree across the three repeats on 2/2 parents",
            ],
        ),
        (
            "tableD3",
            &[
                "| Domain | Prompt | Serial EM | Retained | SCR [95% CI] | EM change [95% CI] | Holm p |",
                "| lexical | v1 |",
                "| lexical | v3 |",
                "| math | v2 | 28.1 | 27/94 | 28.7 [21.5, 35.8] | 20.8 [13.5, 28.1] | <0.001 |",
            ],
        ),
        (
            "tableD4",
            &[
                "| Domain | Mean [95% CI] | Worst [95% CI] |",
                "| Lexical | 48.6 [40.3, 56.9] | 40.0 [30.5, 49.5] |",
            ],
        ),
        (
            "tableD7",
            &[
                "| Domain | Length | Items | Mean U | Forced | Min size | Median | Max |",
                "| math | 3 to 8 | 384 | 1+4/L | L−2 | 8 | 8 | 8 |",
                "| math | 8 | 64 | 1.50 | 6.0 | 8 | 8 | 8 |",
                "| lexical | 8 | 64 | 5.80 | 0.0 | 201,600 | 1,128,960 | 2,370,816 |",
            ],
        ),
        (
            "tableD12",
            &[
                "| Model | Population / mixture | AUROC difference | AP difference |",
                "| Jev | Arithmetic | 0.068 [0.051, 0.086] | 0.175 [0.135, 0.216] |",
            ],
        ),
        (
            "figure17",
            &[
                "| Model | Domain | Evidence | Template | O0 | O1 | O2 |",
                "| Qwen3-8B | (a) | Arithmetic | Indexed | T0 | 72.9* | 60.4* | 70.8* |",
            ],
        ),
        (
            "figure18",
            &[
                "| Model | Domain / evidence | Contrast | Change in character − code gap, pp [95% CI] | Holm p |",
                "| Qwen3.5-27B | Arithmetic / indexed | T2 − T0 | * | −53.5 |",
            ],
        ),
        (
            "figure19",
            &[
                "· lexical · Geom.",
                "| Composed score | Items | Correct | Mean score | Observed correctness [CI] |",
            ],
        ),
        (
            "figure21",
            &[
                "| Ranker | 10% coverage | 25% coverage | 50% coverage | 75% coverage | 100% coverage |",
                "| Minimum top choice |",
            ],
        ),
        (
            "tableD13",
            &[
                "| Model | Population | Mixture | Native EM | Serial EM | SCR |",
                "| Original lexical | Equal length |",
            ],
        ),
        (
            "tableD14",
            &[
                "| Model | Population | Mixture | Score | Brier | ECE | AUROC | AP |",
                "| Jev | Original | Equal | Product | 0.019 [0.009, 0.030] |",
            ],
        ),
        (
            "tableD15",
            &[
                "| Model / interface | Task | Items | Joint counts | SCR (%) | ∆ | Gain rate (%) |",
                "/ code | math |",
                "/ direct | lexical |",
                "| binary fields |",
                "| StartLux | named fields | 128 | 51/15/40/22 | 77.3 | +6.2 | 64.5 |",
            ],
        ),
        (
            "figure2",
            &[
                "## (a, b) math",
                "## (c, d) lexical",
                "| Model / interface | Length | Items | Native EM [95% CI] | SCR count | SCR [95% CI] |",
                "(code) | 3 |",
                "(direct) | 3 |",
            ],
        ),
        (
            "figure4",
            &[
                "| Model | Domain | Control | Raw | Indexed | Indexed gold EM |",
                "| Jev | math | Independent | 13/30 | 30/30 | marker, not printed |",
            ],
        ),
        (
            "figure5",
            &[
                "| Model | Endpoint | Bases | Letter − digit, pp [95% CI] | Sign-flip p | Holm p |",
                "| Model | Evidence | Domain | Opaque | Remapped | Aligned | Conflicting | Units | Extra conflict loss, pp [95% CI] | Holm p |",
            ],
        ),
        (
            "figure6",
            &["| Model | Parents | Raw | Indexed | Direct |", "## (a) Arithmetic"],
        ),
        (
            "figure11",
            &[
                "| Model | Domain | Items | Native | Full Serial | Position union | Union − Full, pp [95% CI] | Holm p |",
                "| Jev | math | 384 | not printed | 28.1 | 76.0 | 47.9 | * |",
            ],
        ),
        (
            "figure13",
            &[
                "| Jev | Early | 15/32 | 11/32 | 1/32 | 1/32 |",
                "| Late − early | Jev | −21.9 | yes * |",
            ],
        ),
        (
            "figure15",
            &[
                "| Model | Domain | Controller | Raw | Indexed |",
                "| Jev | math | Serial | 29/48 | 48/48 |",
            ],
        ),
        (
            "figure16",
            &[
                "| Model | Domain | Correct target / raw | Correct target / indexed | Wrong target / raw | Wrong target / indexed |",
                "| Jev | math | 28/48 | 48/48 | 34/48 | 48/48 |",
                "| Model | Domain | Incorrect targets | Raw | Indexed | Indexed − raw [95% CI] |",
                "| Model | Domain | Test | Difference [95% CI] | Holm p |",
            ],
        ),
        (
            "figure8",
            &[
                "# Figure 8 (numbers): Oracle − Rollout",
                "| Model | Endpoint | Difference [95% CI] | Component 95% CI |",
            ],
        ),
        (
            "figure9",
            &[
                "# Figure 9 (numbers): Serial − Joint",
                "Serial − Joint mean turn, sign-flip p",
            ],
        ),
        (
            "figure10",
            &[
                "| Model | Domain | Setting | Retained / Native correct | SCR [95% CI] | Serial EM | Serial EM change [95% CI] |",
                "| Jev | math | Reference | 12/35 | 34.3 | not printed | not printed |",
            ],
        ),
        (
            "figure12",
            &[
                "| Model | Domain | Items | Trie / fill | Trie / call | Union / call | Full Serial | Native |",
                "| simulated@135288d00000 | lexical |",
                "| Qwen3.5-27B | math | 96 | 37.5 | 32.3 | 32.3 | 14.6 |",
            ],
        ),
        (
            "tableD16",
            &[
                "| Model | Controller | Items | Output counts | Recombinations |",
                "| TrieFill |",
                "| Qwen3.5-27B | UnionCall | 96 | 41/14/22/1/0/18 | 19 |",
            ],
        ),
        (
            "tableD17",
            &[
                "| Task | Interface | Requests | Cap | Max | Truncated |",
                "| math | Position |",
                "| lexical | WholeGenerate |",
                "| lexical | PrefixContinue | 528 | 32 | 32 | 4 |",
            ],
        ),
        (
            "tableD9",
            &[
                "| Model | Domain | Match | Indexed | Padded | Difference [95% CI] | Holm p |",
                "| lexical | tokens |",
                "| Jev | math | bytes | 43/48 | 17/48 | 54.2 [43.8, 64.6] | 8.94e-8 |",
            ],
        ),
        (
            "tableE1",
            &["| current_prefix | \"4\" | \"5\" | generated_prefix / gold_prefix | no |"],
        ),
        ("tableE2", &["| T2 | Character |"]),
        (
            "tableE3",
            &["| \"F\" (required 9) | CorrectBoundCode | CorrectBoundCode | yes |"],
        ),
    ];
    for (name, wants) in exhibits {
        let md = std::fs::read_to_string(runs.join(format!("{name}.md")))
            .unwrap_or_else(|e| panic!("{name}.md: {e}\n{stderr}"));
        for want in wants {
            assert!(md.contains(want), "{name}: missing {want:?} in\n{md}");
        }
        assert!(runs.join(format!("{name}.html")).exists(), "{name}.html");
    }
    let derived = std::fs::read_to_string(runs.join("configs/native-control.toml")).unwrap();
    assert!(derived.contains("engine = \"simulated\""), "{derived}");
    let bad = c2s_e2e::run(&["reproduce", "table9"]);
    let (_, stderr) = c2s_e2e::text(&bad);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`table9` is not an exhibit"), "{stderr}");
}
