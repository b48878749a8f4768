//! `choice2seq stats RUN_DIR` recomputes the live final snapshot exactly, also from a directory
//! holding only outcomes/ and trajectories/.

use c2s_e2e::{
    assert_live_final_equals_offline, bank_head, copy_datasets, keyed, model_path, offline_stats,
    run, run_ok, text, write,
};
use c2s_sinks::read_metrics;

#[test]
fn offline_stats_equal_the_live_final_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let a = bank_head(dir.path(), "arithmetic-dev.jsonl", 48);
    let l = bank_head(dir.path(), "lexical-dev.jsonl", 48);
    let cfg = format!(
        "[model]\npath = {:?}\nengine = \"simulated\"\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
         [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"UnionFill\"\n\n\
         [[arms]]\narm = \"TeacherForced\"\n\n[stats]\nbootstrap_draws = 999\nsnapshot_every = 25\n",
        model_path().display().to_string(),
        a.display().to_string(),
        l.display().to_string()
    );
    let cfg = write(dir.path(), "run.toml", &cfg);
    let run_dir = dir.path().join("run");
    run_ok(&cfg, &run_dir);
    let metrics = read_metrics(&run_dir.join("metrics")).unwrap();
    let last = metrics.iter().map(|m| m.metric.snapshot).max().unwrap();
    assert!(
        last >= 1,
        "several snapshots were taken while the run went on"
    );
    let live = keyed(
        metrics
            .into_iter()
            .filter(|m| m.metric.snapshot == last)
            .map(|m| serde_json::to_value(&m.metric).unwrap()),
    );
    assert!(live.iter().any(|k| k.contains("\"scr\"")));
    assert!(
        live.iter().any(|k| k.contains("independence_reference")),
        "TeacherForced gives the reference"
    );
    // Only outcomes/ and trajectories/ (and the manifest for the settings).
    let copy = dir.path().join("copy");
    copy_datasets(&run_dir, &copy, &["outcomes", "trajectories"]);
    std::fs::copy(run_dir.join("manifest.json"), copy.join("manifest.json")).unwrap();
    assert_eq!(offline_stats(&[&copy]), live);
    assert_live_final_equals_offline(&run_dir);
    // The table form names the metrics too.
    let out = run(&["stats", copy.to_str().unwrap()]);
    assert!(text(&out).0.contains("scr"));
}

/// `choice2seq stats` over several run directories counts them together: two runs over
/// disjoint items give exactly the metrics of one run over all of them, and a directory given
/// twice (every item repeated) is refused.
#[test]
fn several_run_directories_are_one_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let a = bank_head(dir.path(), "arithmetic-dev.jsonl", 24);
    let l = bank_head(dir.path(), "lexical-dev.jsonl", 24);
    let config = |name: &str, sources: &[&std::path::Path]| {
        let mut text = format!(
            "[model]\npath = {:?}\nengine = \"simulated\"\n\n",
            model_path().display().to_string()
        );
        for s in sources {
            text.push_str(&format!(
                "[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n",
                s.display().to_string()
            ));
        }
        text.push_str(
            "[[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
             [[arms]]\narm = \"TeacherForced\"\n\n[stats]\nbootstrap_draws = 499\n",
        );
        write(dir.path(), name, &text)
    };
    let (run_a, run_l, run_al) = (
        dir.path().join("a"),
        dir.path().join("l"),
        dir.path().join("al"),
    );
    run_ok(&config("a.toml", &[&a]), &run_a);
    run_ok(&config("l.toml", &[&l]), &run_l);
    run_ok(&config("al.toml", &[&a, &l]), &run_al);
    let merged = offline_stats(&[&run_a, &run_l]);
    let whole = offline_stats(&[&run_al]);
    assert_eq!(merged, whole);
    assert!(merged.iter().any(|k| k.contains("mcnemar_p_holm")));
    // The two directories pair different items: said on stderr, not an error.
    let out = run(&["stats", run_a.to_str().unwrap(), run_l.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(text(&out).1.contains("pair different items"));
    // One report over both directories.
    let out_dir = dir.path().join("report");
    let out = run(&[
        "report",
        run_a.to_str().unwrap(),
        run_l.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out).1);
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("Counted with"), "{md}");
    assert!(md.contains("arithmetic") && md.contains("lexical"));
    // The same directory twice repeats every item.
    let out = run(&["stats", run_a.to_str().unwrap(), run_a.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out).1.contains("occurs more than once"),
        "{}",
        text(&out).1
    );
}

/// `[stats] calibration = false`: no calibration rows live, none offline (the setting is read
/// back from the manifest), and the paired rows are unchanged.
#[test]
fn calibration_off_drops_only_the_calibration_rows() {
    let dir = tempfile::tempdir().unwrap();
    let a = bank_head(dir.path(), "arithmetic-dev.jsonl", 16);
    let mut runs = Vec::new();
    for calibration in [true, false] {
        let cfg = write(
            dir.path(),
            &format!("c{calibration}.toml"),
            &format!(
                "[model]\npath = {:?}\nengine = \"simulated\"\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
                 [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
                 [stats]\nbootstrap_draws = 199\ncalibration = {calibration}\n",
                model_path().display().to_string(),
                a.display().to_string()
            ),
        );
        let run_dir = dir.path().join(format!("run-{calibration}"));
        run_ok(&cfg, &run_dir);
        assert_live_final_equals_offline(&run_dir);
        runs.push(c2s_e2e::live_final_snapshot(&run_dir));
    }
    let is_calibration = |k: &String| k.contains("\"brier_") || k.contains("\"auroc_");
    assert!(
        runs[0].iter().any(is_calibration),
        "calibration rows by default"
    );
    assert!(!runs[1].iter().any(is_calibration));
    let paired = |rows: &Vec<String>| -> Vec<String> {
        rows.iter()
            .filter(|k| {
                !is_calibration(k)
                    && !k.contains("\"ece_")
                    && !k.contains("\"ap_")
                    && !k.contains("\"prevalence\"")
                    && !k.contains("\"brier_prevalence\"")
            })
            .cloned()
            .collect()
    };
    assert_eq!(paired(&runs[0]), paired(&runs[1]));
}
