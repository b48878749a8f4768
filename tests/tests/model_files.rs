//! Model files checked before any work, through the binary: a truncated GGUF (the default
//! model cut short) and a Hugging Face directory with a truncated safetensors file exit 2
//! naming a tensor and its bytes, before a manifest or any output is written; a chat template
//! that grows a string without bound stops the run with exit 2 and the memory budget's
//! message, before any work.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use c2s_e2e::{model_path, repo_root, run_config, text, write};

/// The quickstart config (both dev banks, Native and Serial/Full) on `model`.
fn quickstart_on(dir: &Path, model: &Path) -> PathBuf {
    let text = std::fs::read_to_string(repo_root().join("config/quickstart.toml")).unwrap();
    let text = text
        .replace(
            "path = \"models/SmolLM2-135M-Instruct.Q4_1.gguf\"",
            &format!("path = {:?}", model.display().to_string()),
        )
        .replace(
            "path = \"data/",
            &format!("path = \"{}/data/", repo_root().display()),
        )
        .replace("dir = \"runs/quickstart\"", "");
    write(dir, "quickstart.toml", &text)
}

/// Nothing of a run in `run_dir`: no manifest, no part file.
fn assert_no_work(run_dir: &Path) {
    assert!(!run_dir.join("manifest.json").exists());
    for dataset in ["trajectories", "requests", "outcomes", "metrics", "rejects"] {
        let parts = std::fs::read_dir(run_dir.join(dataset))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(parts, 0, "{dataset}/ has parts");
    }
}

#[test]
fn a_truncated_gguf_exits_2_before_any_work_naming_a_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("truncated.gguf");
    let bytes = std::fs::read(model_path()).unwrap();
    let cut = bytes.len() / 2;
    std::fs::write(&model, &bytes[..cut]).unwrap();
    let cfg = quickstart_on(dir.path(), &model);
    let run_dir = dir.path().join("run");
    let out = run_config(&cfg, &run_dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("truncated.gguf")
            && stderr.contains("tensor `")
            && stderr.contains("needs bytes")
            && stderr.contains(&format!("but the file has {cut} bytes")),
        "{stderr}"
    );
    assert_no_work(&run_dir);
}

/// The tiny Qwen3 checkpoint of the engine tests as a directory in `dir`, its weights cut
/// 100 bytes short.
fn truncated_hf_dir(dir: &Path) -> PathBuf {
    let model = dir.join("qwen3");
    std::fs::create_dir_all(&model).unwrap();
    let src = repo_root().join("model/tests/fixtures/hf/qwen3");
    for name in [
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "generation_config.json",
    ] {
        std::fs::copy(src.join(name), model.join(name)).unwrap();
    }
    let weights = std::fs::read(src.join("model.safetensors")).unwrap();
    std::fs::write(
        model.join("model.safetensors"),
        &weights[..weights.len() - 100],
    )
    .unwrap();
    model
}

#[test]
fn a_truncated_safetensors_file_exits_2_before_any_work_naming_a_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let model = truncated_hf_dir(dir.path());
    let cfg = quickstart_on(dir.path(), &model);
    let run_dir = dir.path().join("run");
    let out = run_config(&cfg, &run_dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("model.safetensors")
            && stderr.contains("tensor `")
            && stderr.contains("needs bytes"),
        "{stderr}"
    );
    assert_no_work(&run_dir);
}

#[test]
fn a_template_that_grows_without_bound_exits_2_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let model = truncated_hf_dir(dir.path());
    // Whole weights again: only the template is hostile here.
    std::fs::copy(
        repo_root().join("model/tests/fixtures/hf/qwen3/model.safetensors"),
        model.join("model.safetensors"),
    )
    .unwrap();
    let config = model.join("tokenizer_config.json");
    let mut tok: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    tok["chat_template"] = serde_json::json!(
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}\
         {% endfor %}{{ ns.s|length }}{% for m in messages %}{{ m.content }}{% endfor %}"
    );
    std::fs::write(&config, tok.to_string()).unwrap();
    let cfg = quickstart_on(dir.path(), &model);
    let run_dir = dir.path().join("run");
    let out = run_config(&cfg, &run_dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the chat template allocated more than"),
        "{stderr}"
    );
    assert_no_work(&run_dir);
}
