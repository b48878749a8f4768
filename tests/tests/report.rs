//! `choice2seq report RUN_DIR` writes report.md and report.html with the paired tables and
//! figures (SVG and PNG) of a simulated run; without fonts it still writes the SVGs.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use c2s_e2e::{bank_head, binary, copy_datasets, model_path, run, run_ok, text, write};

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// A simulated run (Native, Serial/Full, TeacherForced on 48 + 48 dev items) in `dir/run`.
fn simulated_run(dir: &Path) -> std::path::PathBuf {
    let a = bank_head(dir, "arithmetic-dev.jsonl", 48);
    let l = bank_head(dir, "lexical-dev.jsonl", 48);
    let cfg = format!(
        "[model]\npath = {:?}\nengine = \"simulated\"\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
         [[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n[[arms]]\narm = \"Native\"\n\n\
         [[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n[[arms]]\narm = \"TeacherForced\"\n\n\
         [stats]\nbootstrap_draws = 199\nsnapshot_every = 50\n",
        model_path().display().to_string(),
        a.display().to_string(),
        l.display().to_string()
    );
    let cfg = write(dir, "run.toml", &cfg);
    let run_dir = dir.join("run");
    run_ok(&cfg, &run_dir);
    run_dir
}

/// Every `figures/<name>.<ext>` reference in `doc`.
fn figure_refs(doc: &str, ext: &str) -> BTreeSet<String> {
    let suffix = format!(".{ext}");
    let mut refs = BTreeSet::new();
    let mut rest = doc;
    while let Some(i) = rest.find("figures/") {
        let tail = &rest[i..];
        let end = tail.find([')', '"', ' ', '\n', ']']).unwrap_or(tail.len());
        let r = &tail[..end];
        if r.ends_with(&suffix) {
            refs.insert(r.to_string());
        }
        rest = &tail[end..];
    }
    refs
}

fn check_svg(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(!bytes.is_empty(), "{} is empty", path.display());
    let s = String::from_utf8(bytes).expect("SVG is UTF-8");
    let head = s.trim_start();
    assert!(
        head.starts_with("<svg") || head.starts_with("<?xml"),
        "{} does not start like SVG",
        path.display()
    );
    assert!(
        s.trim_end().ends_with("</svg>"),
        "{} is not closed",
        path.display()
    );
}

fn check_png(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(bytes.len() > 1000, "{} is too small", path.display());
    assert!(
        bytes.starts_with(PNG_SIGNATURE),
        "{} is not a PNG",
        path.display()
    );
}

/// In every Markdown table with `SCR count` and `SCR [CI]` columns, an empty denominator
/// prints as "–" (never 0). Returns the number of such cells seen.
fn undefined_scr_cells(md: &str) -> usize {
    let mut cols: Option<(usize, usize)> = None;
    let mut seen = 0;
    for line in md.lines() {
        if !line.starts_with('|') {
            cols = None;
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        if let (Some(c), Some(s)) = (
            cells.iter().position(|c| *c == "SCR count"),
            cells.iter().position(|c| *c == "SCR [CI]"),
        ) {
            cols = Some((c, s));
            continue;
        }
        if let Some((c, s)) = cols {
            if cells.get(c).is_some_and(|v| v.ends_with("/0")) {
                assert_eq!(cells[s], "–", "undefined SCR must print as –: {line}");
                seen += 1;
            }
        }
    }
    seen
}

#[test]
fn report_writes_tables_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = simulated_run(dir.path());
    let out = run(&["report", run_dir.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let report = run_dir.join("report");
    let md = std::fs::read_to_string(report.join("report.md")).expect("report.md");
    let html = std::fs::read_to_string(report.join("report.html")).expect("report.html");
    for doc in [&md, &html] {
        assert!(doc.contains("SCR"));
        assert!(doc.contains("Native/code vs Serial/Full/code"));
        assert!(doc.contains("Native/code vs TeacherForced/Full/code"));
        assert!(
            doc.contains("simulated (test double)"),
            "model identity from the manifest"
        );
        assert!(
            doc.contains("Brier") && doc.contains("AUROC"),
            "calibration table"
        );
        assert!(
            doc.contains("Independence reference"),
            "TeacherForced gives the reference"
        );
    }
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<table>"));
    assert!(
        undefined_scr_cells(&md) > 0,
        "some lengths have no Native-correct item"
    );

    // The Markdown shows PNGs, the HTML embeds SVGs; each file exists and is well-formed.
    let pngs = figure_refs(&md, "png");
    let svgs = figure_refs(&html, "svg");
    let stems = |refs: &BTreeSet<String>| -> BTreeSet<String> {
        refs.iter()
            .map(|r| r.rsplit_once('.').map_or(r.clone(), |(s, _)| s.to_string()))
            .collect()
    };
    assert_eq!(stems(&pngs), stems(&svgs), "every figure in both formats");
    assert!(
        figure_refs(&md, "svg").is_superset(&svgs),
        "the Markdown links the SVGs"
    );
    for kind in ["em-scr-by-length_", "reliability_", "coverage-precision_"] {
        assert!(
            svgs.iter().any(|s| s.contains(kind)),
            "a {kind} figure in {svgs:?}"
        );
    }
    // One by-length figure per domain; reliability and coverage per arm with confidence.
    assert_eq!(
        svgs.iter()
            .filter(|s| s.contains("em-scr-by-length_"))
            .count(),
        2
    );
    assert!(svgs.iter().filter(|s| s.contains("reliability_")).count() >= 2);
    for r in &pngs {
        check_png(&report.join(r));
    }
    for r in &svgs {
        check_svg(&report.join(r));
    }
    // The command lists what it wrote, and every listed file exists.
    let listed: Vec<&str> = stdout.lines().collect();
    assert_eq!(listed.len(), 2 + pngs.len() + svgs.len(), "{stdout}");
    for f in listed {
        assert!(Path::new(f).is_file(), "{f} listed but missing");
    }
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[test]
fn report_needs_only_outcomes_and_trajectories() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = simulated_run(dir.path());
    let copy = dir.path().join("copy");
    copy_datasets(&run_dir, &copy, &["outcomes", "trajectories"]);
    let out_dir = dir.path().join("elsewhere");
    let out = run(&[
        "report",
        copy.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--draws",
        "99",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("manifest.json absent"));
    assert!(md.contains("99 bootstrap draws"));
    assert!(md.contains("Native/code vs Serial/Full/code"));
    assert!(!copy.join("report").exists(), "--out is honoured");
    // An empty directory is an error, not a panic.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(&["report", empty.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(text(&out).1.contains("no outcomes"), "{}", text(&out).1);
}

#[test]
fn report_without_fonts_writes_svgs_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = simulated_run(dir.path());
    // A fontconfig configuration with no font directory: no system font can be found.
    let conf = write(
        dir.path(),
        "fonts.conf",
        &format!(
            "<?xml version=\"1.0\"?>\n<!DOCTYPE fontconfig SYSTEM \"fonts.dtd\">\n\
             <fontconfig><cachedir>{}</cachedir></fontconfig>\n",
            dir.path().join("fc-cache").display()
        ),
    );
    let out = Command::new(binary())
        .args(["report", run_dir.to_str().unwrap()])
        .env("FONTCONFIG_FILE", &conf)
        .output()
        .expect("running choice2seq");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let figures = run_dir.join("report/figures");
    let names: Vec<String> = std::fs::read_dir(&figures)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // The SVG figures are written with or without fonts.
    assert!(
        names.iter().filter(|n| n.ends_with(".svg")).count() >= 4,
        "{names:?}"
    );
    for n in names.iter().filter(|n| n.ends_with(".svg")) {
        check_svg(&figures.join(n));
    }
    let md = std::fs::read_to_string(run_dir.join("report/report.md")).unwrap();
    if names.iter().any(|n| n.ends_with(".png")) {
        // fontconfig found a font anyway (a compiled-in default): the PNGs were drawn, so
        // nothing may claim fonts are missing.
        assert!(!stderr.contains("fonts-dejavu-core"), "{stderr}");
        assert!(!md.contains("fonts-dejavu-core"));
        return;
    }
    assert!(stderr.contains("fonts-dejavu-core"), "{stderr}");
    assert!(md.contains("fonts-dejavu-core"));
    assert!(figure_refs(&md, "png").is_empty());
    assert!(!figure_refs(&md, "svg").is_empty());
}
