//! `choice2seq report RUN_DIR...` on candidate-coverage runs: two synthetic run directories
//! (one per model) written directly as a manifest and `decisions/` parts; the report's
//! sections, tables and detection-vs-false-rejection figure, with every number checked
//! against `c2s_stats::coverage::coverage_summary` of the same decisions. A coverage run
//! mixed with another run is refused.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use c2s_e2e::{run, text};
use c2s_records::{CoverageSplit, Decision, DecisionSpec, NameVariant, SetKind, NONE_LABEL};
use c2s_sinks::{write_manifest, DecisionRow, Manifest, PartConfig, PartWriter};
use c2s_stats::coverage::{coverage_summary, CoverageStatsConfig, CoverageSummary, Rate, Subset};
use c2s_stats::Estimate;
use serde_json::json;

const TASK: &str = "toy";
const LABELS: [&str; 6] = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
const KS: [usize; 2] = [2, 4];
const DRAWS: u32 = 199;
const SEED: u64 = 11;
const MAX_FR: f64 = 0.1;

/// splitmix64 of an FNV-1a hash of `key`: a deterministic stream per decision.
struct Rng(u64);

impl Rng {
    fn new(key: &str) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in key.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h)
    }
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform on [-1, 1).
    fn noise(&mut self) -> f64 {
        2.0 * self.next() - 1.0
    }
}

/// One model's synthetic behaviour: how strongly it prefers the reference and how its none
/// probability depends on coverage.
struct Model {
    name: &'static str,
    reference_bonus: f64,
    noise: f64,
    none_present: f64,
    none_absent: f64,
    /// Scale some distributions so that their sum deviates from 1 (the precision audit).
    inflate: bool,
}

struct Case {
    id: String,
    split: CoverageSplit,
    reference: usize,
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for i in 0..14 {
        v.push(Case {
            id: format!("cal-{i:02}"),
            split: CoverageSplit::Calibration,
            reference: (i * 5 + 1) % LABELS.len(),
        });
    }
    for i in 0..24 {
        v.push(Case {
            id: format!("test-{i:02}"),
            split: CoverageSplit::Test,
            reference: i % LABELS.len(),
        });
    }
    v
}

/// (present, absent) label sets of size k: the absent set replaces the reference in its slot.
fn sets(c: &Case, k: usize) -> (Vec<String>, Vec<String>) {
    let n = LABELS.len();
    let offset = c.id.bytes().map(usize::from).sum::<usize>();
    let others: Vec<usize> = (1..n).map(|j| (c.reference + j) % n).collect();
    let mut present: Vec<usize> = others.iter().copied().take(k - 1).collect();
    let slot = offset % k;
    present.insert(slot, c.reference);
    let mut absent = present.clone();
    absent[slot] = others[k - 1 + offset % (n - k)];
    let names = |v: Vec<usize>| v.into_iter().map(|i| LABELS[i].to_string()).collect();
    (names(present), names(absent))
}

fn decision(m: &Model, c: &Case, spec: DecisionSpec, mut labels: Vec<String>) -> Decision {
    let key = format!("{}/{}/{}", m.name, c.id, spec.label());
    let mut rng = Rng::new(&key);
    let reference = LABELS[c.reference];
    let bonus = m.reference_bonus
        + if spec.names == NameVariant::Neutral {
            -0.6
        } else {
            0.0
        };
    let mut logits: Vec<f64> = labels
        .iter()
        .map(|l| m.noise * rng.noise() + if l == reference { bonus } else { 0.0 })
        .collect();
    if spec.with_none {
        labels.push(NONE_LABEL.to_string());
        let base = if spec.set.covered() {
            m.none_present
        } else {
            m.none_absent
        };
        logits.push(base + m.noise * rng.noise());
    }
    let z: f64 = logits.iter().map(|x| x.exp()).sum();
    let scale = if m.inflate && rng.next() < 0.2 {
        1.004
    } else {
        1.0
    };
    let probabilities = logits
        .iter()
        .map(|x| (scale * x.exp() / z).min(1.0))
        .collect();
    Decision {
        case_id: c.id.clone(),
        task: TASK.to_string(),
        split: c.split,
        reference: reference.to_string(),
        spec,
        labels,
        probabilities,
        request_id: key,
        model: m.name.to_string(),
        prompt_tokens: 40,
        latency_ms: 1.0,
        error: None,
        task_labels: Some(LABELS.len() as u32),
        scoring: c2s_records::ScoringRule::Summed,
        raw: None,
    }
}

/// Every decision of one model; a few fail (missing decisions).
fn decisions(m: &Model) -> Vec<Decision> {
    let mut out = Vec::new();
    for c in cases() {
        for names in [NameVariant::Natural, NameVariant::Neutral] {
            if c.split == CoverageSplit::Test {
                let spec = DecisionSpec {
                    set: SetKind::Full,
                    k: LABELS.len(),
                    names,
                    with_none: false,
                };
                let labels = LABELS.iter().map(|l| l.to_string()).collect();
                out.push(decision(m, &c, spec, labels));
            }
            for k in KS {
                let (present, absent) = sets(&c, k);
                for (set, labels) in [(SetKind::Present, present), (SetKind::Absent, absent)] {
                    for with_none in [false, true] {
                        let spec = DecisionSpec {
                            set,
                            k,
                            names,
                            with_none,
                        };
                        out.push(decision(m, &c, spec, labels.clone()));
                    }
                }
            }
        }
    }
    // Failed requests: one present/absent decision of a test text, one full-set decision and
    // one calibration decision.
    let fail = |d: &mut Decision, why: &str| {
        d.probabilities.clear();
        d.error = Some(why.to_string());
    };
    for d in &mut out {
        let s = d.spec;
        if d.case_id == "test-03"
            && s.set == SetKind::Absent
            && s.k == 2
            && s.names == NameVariant::Natural
            && s.with_none
        {
            fail(d, "timeout");
        }
        if d.case_id == "test-07" && s.set == SetKind::Full && s.names == NameVariant::Neutral {
            fail(d, "HTTP 500");
        }
        if d.case_id == "cal-02" && s.set == SetKind::Present && s.k == 4 && !s.with_none {
            fail(d, "timeout");
        }
    }
    out
}

fn coverage_run(dir: &Path, m: &Model) -> (PathBuf, Vec<Decision>) {
    let run_dir = dir.join(m.name);
    std::fs::create_dir_all(&run_dir).unwrap();
    let config = json!({
        "coverage": {
            "catalogues": ["data/banks/coverage-toy.catalogue.json"],
            "ks": KS,
            "names": ["natural", "neutral"],
            "none": [false, true],
            "full_set": true,
            "max_false_rejection": MAX_FR,
            "quantize_decimals": 2
        },
        "stats": {"bootstrap_draws": DRAWS, "seed": SEED, "level": 0.95},
        "model": {"engine": "simulated", "path": "none"}
    });
    let manifest = Manifest::new(
        format!("coverage-{}", m.name),
        config,
        json!({"engine": "synthetic", "name": m.name}),
    );
    write_manifest(&run_dir, &manifest).unwrap();
    let ds = decisions(m);
    let mut w = PartWriter::<DecisionRow>::open(&run_dir, 0, PartConfig::default()).unwrap();
    w.extend(ds.iter().cloned().map(DecisionRow));
    w.finish().unwrap();
    (run_dir, ds)
}

const MODELS: [Model; 2] = [
    Model {
        name: "model-a",
        reference_bonus: 2.4,
        noise: 1.0,
        none_present: -1.5,
        none_absent: 1.0,
        inflate: false,
    },
    Model {
        name: "model-b",
        reference_bonus: 1.1,
        noise: 1.2,
        none_present: -0.3,
        none_absent: 0.2,
        inflate: true,
    },
];

/// The report's rate format: `value [low, high] (successes/n)` in percent.
fn rate(r: &Rate) -> String {
    let counts = format!("({}/{})", r.successes, r.n);
    match r.estimate.value {
        None => format!("– {counts}"),
        Some(v) => match &r.estimate.interval {
            Some(i) => format!(
                "{:.1} [{:.1}, {:.1}] {counts}",
                100.0 * v,
                100.0 * i.low,
                100.0 * i.high
            ),
            None => format!("{:.1} {counts}", 100.0 * v),
        },
    }
}

fn est(e: &Estimate) -> String {
    match (e.value, &e.interval) {
        (None, _) => "–".into(),
        (Some(v), Some(i)) => format!("{v:.3} [{:.3}, {:.3}]", i.low, i.high),
        (Some(v), None) => format!("{v:.3}"),
    }
}

type Row = BTreeMap<String, String>;

/// The rows of the first Markdown table after the line `heading`, by column name.
fn table_after(md: &str, heading: &str) -> Vec<Row> {
    let mut lines = md.lines().skip_while(|l| *l != heading);
    assert!(
        lines.next().is_some(),
        "no heading {heading:?} in the report"
    );
    let mut lines = lines.skip_while(|l| !l.starts_with('|'));
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect()
    };
    let header = cells(lines.next().expect("a table header"));
    lines.next().expect("the separator row");
    lines
        .take_while(|l| l.starts_with('|'))
        .map(|l| header.iter().cloned().zip(cells(l)).collect())
        .collect()
}

/// The row whose key columns have the given values (exactly one).
fn find<'a>(rows: &'a [Row], key: &[(&str, String)]) -> &'a Row {
    let hits: Vec<&Row> = rows
        .iter()
        .filter(|r| key.iter().all(|(c, v)| r.get(*c) == Some(v)))
        .collect();
    assert_eq!(hits.len(), 1, "one row with {key:?} in {rows:#?}");
    hits[0]
}

fn subset_name(s: Subset) -> &'static str {
    match s {
        Subset::All => "All test texts",
        Subset::FullSetCorrect => "Full-set-correct texts",
        Subset::SharedCorrect => "Shared-correct texts",
    }
}

fn check_numbers(md: &str, s: &CoverageSummary) {
    let full = table_after(md, "## Full-set classification");
    assert_eq!(full.len(), s.full_set.len());
    for r in &s.full_set {
        let row = find(
            &full,
            &[
                ("Model", r.model.clone()),
                ("Task", r.task.clone()),
                ("Names", r.names.as_str().into()),
            ],
        );
        assert_eq!(row["Accuracy [CI]"], rate(&r.accuracy));
        assert_eq!(row["Full-set correct"], r.full_set_correct.to_string());
        assert_eq!(row["Shared correct"], r.shared_correct.to_string());
        assert_eq!(row["Missing"], r.missing.to_string());
    }

    for subset in Subset::ALL {
        assert!(md.contains(&format!("### {}", subset_name(subset))));
        let cells: Vec<_> = s.cells.iter().filter(|c| c.subset == subset).collect();
        let rates = table_after(
            md,
            &format!("#### Accuracy and the native rule — {}", subset.as_str()),
        );
        let disc = table_after(
            md,
            &format!("#### Present/absent discrimination — {}", subset.as_str()),
        );
        assert_eq!(rates.len(), cells.len());
        assert_eq!(disc.len(), 4 * cells.len());
        for c in cells {
            let key = vec![
                ("Model", c.model.clone()),
                ("Task", c.task.clone()),
                ("k", c.k.to_string()),
                ("Names", c.names.as_str().to_string()),
            ];
            let row = find(&rates, &key);
            assert_eq!(row["Texts"], c.texts.to_string());
            assert_eq!(row["Missing"], c.missing.to_string());
            assert_eq!(row["Accuracy [CI]"], rate(&c.accuracy));
            assert_eq!(
                row["Accuracy, none offered [CI]"],
                rate(&c.accuracy_with_none)
            );
            assert_eq!(row["Detection D [CI]"], rate(&c.detection));
            assert_eq!(row["False rejection FR [CI]"], rate(&c.false_rejection));
            assert_eq!(row["Acceptance [CI]"], rate(&c.acceptance));
            assert_eq!(
                row["Error among accepted, pooled [CI]"],
                rate(&c.error_among_accepted)
            );
            assert_eq!(
                row["Error among accepted, present sets [CI]"],
                rate(&c.error_among_accepted_present)
            );
            assert_eq!(
                row["Error among accepted, absent sets [CI]"],
                rate(&c.error_among_accepted_absent)
            );
            for d in &c.discrimination {
                let mut k = key.clone();
                k.push(("Score", d.score.as_str().to_string()));
                let row = find(&disc, &k);
                assert_eq!(row["Pairs"], d.pairs.to_string());
                assert_eq!(row["AUROC [CI]"], est(&d.auroc));
                assert_eq!(row["AP, absent positive [CI]"], est(&d.average_precision));
            }
        }
    }

    let thr = table_after(md, "## Calibrated thresholds");
    assert_eq!(thr.len(), s.thresholds.len());
    for t in &s.thresholds {
        let row = find(
            &thr,
            &[
                ("Model", t.model.clone()),
                ("k", t.k.to_string()),
                ("Names", t.names.as_str().to_string()),
                ("Tested on", t.subset.as_str().to_string()),
                ("Rule", t.rule.clone()),
            ],
        );
        let th = t.threshold.map_or("–".to_string(), |x| format!("{x:.4}"));
        assert_eq!(row["Threshold t"], th);
        assert_eq!(row["Calibration FR"], rate(&t.calibration_false_rejection));
        assert_eq!(row["Calibration D"], rate(&t.calibration_detection));
        assert_eq!(row["Test D [CI]"], rate(&t.test_detection));
        assert_eq!(row["Test FR [CI]"], rate(&t.test_false_rejection));
    }

    let sums = table_after(md, "### Probability sums");
    assert_eq!(sums.len(), s.audit.prob_sums.len());
    for p in &s.audit.prob_sums {
        let row = find(&sums, &[("Model", p.model.clone())]);
        assert_eq!(row["Decisions"], p.decisions.to_string());
        assert_eq!(row["Sum deviating > 0.001"], p.deviating.to_string());
    }
    let q = table_after(md, "### Score quantization");
    assert_eq!(q.len(), s.audit.quantization.len());

    let missing = table_after(md, "## Missing decisions");
    assert_eq!(missing.len(), s.missing.len());
    for m in &s.missing {
        let row = find(
            &missing,
            &[
                ("Model", m.model.clone()),
                ("Split", m.split.as_str().to_string()),
                ("Reason", m.error.clone()),
            ],
        );
        assert_eq!(row["Count"], m.count.to_string());
    }
}

fn check_figure(path: &Path, models: &[&str]) {
    let s = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let head = s.trim_start();
    assert!(head.starts_with("<svg") || head.starts_with("<?xml"));
    assert!(s.trim_end().ends_with("</svg>"));
    for label in [
        "Detection D",
        "False rejection FR",
        "k = 2",
        "k = 4",
        "native rule",
    ]
    .iter()
    .chain(models)
    {
        assert!(s.contains(label), "{label:?} in {}", path.display());
    }
}

#[test]
fn coverage_report_matches_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (run_a, mut all) = coverage_run(dir.path(), &MODELS[0]);
    let (run_b, b) = coverage_run(dir.path(), &MODELS[1]);
    all.extend(b);
    let cfg = CoverageStatsConfig {
        draws: DRAWS,
        seed: SEED,
        level: 0.95,
        max_false_rejection: MAX_FR,
        quantize_decimals: 2,
    };
    let summary = coverage_summary(&all, &cfg).unwrap();
    // The data exercise every part of the report.
    assert_eq!(summary.cells.len(), 2 * 2 * 2 * 3);
    assert!(summary.missing.len() >= 3);
    assert!(summary.audit.prob_sums.iter().any(|p| p.deviating > 0));
    assert!(summary.thresholds.iter().any(|t| t.threshold.is_some()));
    assert!(summary
        .full_set
        .iter()
        .any(|r| r.shared_correct < r.full_set_correct));

    // A few requests failed: an incomplete collection is refused, and reported marked
    // partial when asked.
    let out = run(&["report", run_a.to_str().unwrap(), run_b.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("incomplete collection"), "{stderr}");
    let out = run(&[
        "report",
        run_a.to_str().unwrap(),
        run_b.to_str().unwrap(),
        "--allow-incomplete",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let report = run_a.join("report");
    let md = std::fs::read_to_string(report.join("report.md")).expect("report.md");
    let html = std::fs::read_to_string(report.join("report.html")).expect("report.html");
    assert!(md.starts_with("# choice2seq coverage report — coverage-model-a"));
    assert!(md.contains("PARTIAL: an incomplete collection"));
    for section in [
        "## What the numbers mean",
        "## Plan audit",
        "### Distribution renormalization",
        "### The pair's closing rule",
        "### Scoring rules",
        "### Token replay",
        "## Full-set classification",
        "## Per-cell metrics",
        "## Calibrated thresholds",
        "### Detection vs false rejection — toy",
        "## Precision audit",
        "## Missing decisions",
    ] {
        assert!(md.contains(section), "{section} in report.md");
        // HTML escapes the apostrophe (report/src/doc.rs).
        let heading = section
            .trim_start_matches('#')
            .trim()
            .replace('\'', "&#39;");
        assert!(html.contains(&heading), "{section} in report.html");
    }
    for word in [
        "Detection",
        "false rejection",
        "acceptance",
        "error among accepted",
        "max_prob",
        "neg_entropy",
        "margin",
        "not_none",
        "AUROC",
        "average precision",
        "calibration split",
        "full-set-correct",
        "shared-correct",
    ] {
        assert!(md.contains(word), "the explanation mentions {word}");
    }
    assert!(
        md.contains("model-b"),
        "the second run's model is in the report"
    );
    check_numbers(&md, &summary);

    // The figure: referenced by both documents, written, listed on stdout.
    let stem = "figures/detection-vs-false-rejection_toy";
    let svg = report.join(format!("{stem}.svg"));
    check_figure(&svg, &["model-a", "model-b"]);
    assert!(html.contains(&format!("<img src=\"{stem}.svg\"")));
    assert!(md.contains(&format!("[SVG]({stem}.svg)")));
    if md.contains(&format!("{stem}.png")) {
        let png = std::fs::read(report.join(format!("{stem}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 1000);
    }
    for f in stdout.lines() {
        assert!(Path::new(f).is_file(), "{f} listed but missing");
    }
    assert!(stdout.contains("report.md") && stdout.contains(".svg"));
}

#[test]
fn coverage_and_other_runs_are_not_mixed() {
    let dir = tempfile::tempdir().unwrap();
    let (run_a, _) = coverage_run(dir.path(), &MODELS[0]);
    let plain = dir.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let manifest = Manifest::new(
        "plain",
        json!({"stats": {"bootstrap_draws": 99}}),
        json!("sim"),
    );
    write_manifest(&plain, &manifest).unwrap();
    let out = run(&["report", run_a.to_str().unwrap(), plain.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("cannot report candidate-coverage runs"),
        "{stderr}"
    );
    assert!(stderr.contains("plain"), "{stderr}");
    assert!(!run_a.join("report").exists());
}

#[test]
fn coverage_report_without_fonts_writes_svgs() {
    let dir = tempfile::tempdir().unwrap();
    let (run_a, _) = coverage_run(dir.path(), &MODELS[0]);
    let conf = c2s_e2e::write(
        dir.path(),
        "fonts.conf",
        &format!(
            "<?xml version=\"1.0\"?>\n<!DOCTYPE fontconfig SYSTEM \"fonts.dtd\">\n\
             <fontconfig><cachedir>{}</cachedir></fontconfig>\n",
            dir.path().join("fc-cache").display()
        ),
    );
    let out_dir = dir.path().join("elsewhere");
    let out = std::process::Command::new(c2s_e2e::binary())
        .args([
            "report",
            run_a.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--draws",
            "49",
            "--allow-incomplete",
        ])
        .env("FONTCONFIG_FILE", &conf)
        .output()
        .expect("running choice2seq");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("49 bootstrap draws"));
    let figures = out_dir.join("figures");
    check_figure(
        &figures.join("detection-vs-false-rejection_toy.svg"),
        &["model-a"],
    );
    if !figures
        .join("detection-vs-false-rejection_toy.png")
        .exists()
    {
        // No usable font: the report says why and shows the SVG (when fontconfig finds a
        // font anyway there is nothing more to check).
        assert!(stderr.contains("fonts-dejavu-core"), "{stderr}");
        assert!(md.contains("no PNG figures"), "{md}");
        assert!(md.contains("](figures/detection-vs-false-rejection_toy.svg)"));
    }
    assert!(!run_a.join("report").exists(), "--out is honoured");
}
