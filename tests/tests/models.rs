//! The paper's model families through the binary: a Qwen3-architecture Hugging Face directory
//! with Qwen3's official chat template runs the quickstart config with every request
//! answered; a chat template that cannot render the run's messages stops the run before any
//! work (exit 2, naming the construct); the date that templates' `strftime_now` reports is
//! recorded in the manifest and reused on resume.
//!
//! The checkpoint is the tiny random-weight Qwen3 that transformers wrote for the engine
//! agreement tests (`model/tests/fixtures/hf/qwen3`), its context raised so that the
//! benchmark's prompts fit.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use c2s_e2e::{bank_head, repo_root, run_config, run_ok, text, write};
use c2s_sinks::{read_rejects, read_requests, read_trajectories};

fn fixtures() -> PathBuf {
    repo_root().join("model/tests/fixtures")
}

/// A Qwen3 HF directory in `dir` with the chat template `template`.
fn qwen3_dir(dir: &Path, template: &str) -> PathBuf {
    hf_dir(dir, "qwen3", template)
}

/// The fixture checkpoint `fixture` as a HF directory in `dir`, with the chat template
/// `template` and a context of 16,384 positions.
fn hf_dir(dir: &Path, fixture: &str, template: &str) -> PathBuf {
    let model = dir.join(fixture);
    std::fs::create_dir_all(&model).unwrap();
    let src = fixtures().join("hf").join(fixture);
    for name in [
        "model.safetensors",
        "tokenizer.json",
        "generation_config.json",
    ] {
        std::os::unix::fs::symlink(src.join(name), model.join(name)).unwrap();
    }
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("config.json")).unwrap()).unwrap();
    config["max_position_embeddings"] = serde_json::json!(16384);
    std::fs::write(model.join("config.json"), config.to_string()).unwrap();
    let mut tok: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("tokenizer_config.json")).unwrap())
            .unwrap();
    tok["chat_template"] = serde_json::json!(template);
    tok["model_max_length"] = serde_json::json!(16384);
    std::fs::write(model.join("tokenizer_config.json"), tok.to_string()).unwrap();
    model
}

fn official_qwen3_template() -> String {
    std::fs::read_to_string(fixtures().join("chat_templates/qwen3.jinja")).unwrap()
}

/// The quickstart config (both dev banks, Native and Serial/Full) on `model`.
fn quickstart_on(dir: &Path, model: &Path) -> PathBuf {
    let text = std::fs::read_to_string(repo_root().join("config/quickstart.toml")).unwrap();
    let root = repo_root();
    let text = text
        .replace(
            "path = \"models/SmolLM2-135M-Instruct.Q4_1.gguf\"",
            &format!("path = {:?}", model.display().to_string()),
        )
        .replace(
            "path = \"data/",
            &format!("path = \"{}/data/", root.display()),
        )
        .replace("dir = \"runs/quickstart\"", "");
    write(dir, "quickstart.toml", &text)
}

#[test]
fn qwen3_directory_with_the_official_template_runs_the_quickstart_config() {
    let dir = tempfile::tempdir().unwrap();
    let model = qwen3_dir(dir.path(), &official_qwen3_template());
    let cfg = quickstart_on(dir.path(), &model);
    let run_dir = dir.path().join("run");
    run_ok(&cfg, &run_dir);
    assert!(
        read_rejects(&run_dir.join("rejects")).unwrap().is_empty(),
        "no rejected item or arm"
    );
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    assert_eq!(trajectories.len(), 192, "96 items × 2 arms");
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    let calls: u32 = trajectories.iter().map(|t| t.calls).sum();
    assert_eq!(requests.len() as u32, calls);
    for r in &requests {
        assert!(r.error.is_none(), "{}: {:?}", r.request_id, r.error);
        let p = r.probabilities.as_ref().expect("scored");
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-6);
    }
    // The manifest records the date templates saw; a resume keeps it.
    let manifest = |d: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).unwrap()).unwrap()
    };
    let time = manifest(&run_dir)["chat_template_time"].clone();
    let recorded = time.as_str().expect("recorded");
    assert!(
        recorded.len() >= 25 && recorded.as_bytes()[10] == b'T',
        "an RFC 3339 time: {recorded}"
    );
    run_ok(&cfg, &run_dir);
    assert_eq!(manifest(&run_dir)["chat_template_time"], time);
}

/// Qwen3-Coder's and NVIDIA Nemotron 3 Nano's official templates (both test
/// `tools is iterable and tools | length > 0`, which minijinja alone fails on `tools=None`)
/// run the quickstart config on the tiny Qwen3 checkpoint with every request answered, and
/// every request's rendered prompt reads back from `prompts/` in the template's layout (the
/// renderings themselves are checked against transformers' in `model/tests/chat_templates.rs`).
#[test]
fn qwen3_coder_and_nemotron3_templates_run_the_quickstart_config() {
    for family in ["qwen3-coder", "nemotron-3-nano"] {
        let dir = tempfile::tempdir().unwrap();
        let template =
            std::fs::read_to_string(fixtures().join(format!("chat_templates/{family}.jinja")))
                .unwrap();
        let model = qwen3_dir(dir.path(), &template);
        let cfg = quickstart_on(dir.path(), &model);
        let run_dir = dir.path().join("run");
        run_ok(&cfg, &run_dir);
        assert!(
            read_rejects(&run_dir.join("rejects")).unwrap().is_empty(),
            "{family}"
        );
        let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
        assert_eq!(trajectories.len(), 192, "{family}: 96 items × 2 arms");
        let requests = read_requests(&run_dir.join("requests")).unwrap();
        let prompts = c2s_sinks::read_prompts(&run_dir.join("prompts")).unwrap();
        let by_key: std::collections::BTreeMap<&str, &c2s_sinks::PromptRow> = prompts
            .iter()
            .map(|p| (p.prompt_sha256.as_str(), p))
            .collect();
        for r in &requests {
            assert!(
                r.error.is_none(),
                "{family} {}: {:?}",
                r.request_id,
                r.error
            );
            let prompt = by_key
                .get(r.prompt_sha256.as_str())
                .and_then(|p| p.prompt.as_deref())
                .unwrap_or_else(|| panic!("{family} {}: no prompt", r.request_id));
            // The official layout around the request's own text.
            assert!(
                prompt.starts_with("<|im_start|>") && prompt.contains("<|im_start|>assistant\n"),
                "{family}: {prompt:?}"
            );
        }
    }
}

/// Llama-3.2 beside Qwen: a llama checkpoint with `llama3` RoPE scaling and Llama-3.2's
/// official template (which puts `strftime_now`'s date into its system header) runs on the
/// prefix engine and through mistral.rs (native, f32) with the same prompts and scores.
#[test]
fn llama32_directory_runs_on_both_engines_with_the_same_scores() {
    let dir = tempfile::tempdir().unwrap();
    let template =
        std::fs::read_to_string(fixtures().join("chat_templates/llama-3.2.jinja")).unwrap();
    let model = hf_dir(dir.path(), "llama3-scaling", &template);
    let a = bank_head(dir.path(), "arithmetic-dev.jsonl", 3);
    let l = bank_head(dir.path(), "lexical-dev.jsonl", 3);
    let config = |engine: &str| {
        format!(
            "[model]\npath = {:?}\nengine = \"{engine}\"\n\n[model.mistralrs]\nmode = \"native\"\n\
             dtype = \"f32\"\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n[[sources]]\n\
             kind = \"jsonl\"\npath = {:?}\n\n[[arms]]\narm = \"Native\"\n\n[[arms]]\n\
             arm = \"Serial\"\nsupport = \"Full\"\n",
            model.display().to_string(),
            a.display().to_string(),
            l.display().to_string()
        )
    };
    let mut runs = Vec::new();
    for engine in ["prefix", "mistralrs"] {
        let cfg = write(dir.path(), &format!("{engine}.toml"), &config(engine));
        let run_dir = dir.path().join(engine);
        run_ok(&cfg, &run_dir);
        let mut requests = read_requests(&run_dir.join("requests")).unwrap();
        requests.sort_by(|x, y| x.request_id.cmp(&y.request_id));
        assert!(!requests.is_empty());
        runs.push(requests);
    }
    let (prefix, mistralrs) = (&runs[0], &runs[1]);
    assert_eq!(prefix.len(), mistralrs.len());
    let mut worst = 0f64;
    for (p, m) in prefix.iter().zip(mistralrs) {
        assert_eq!(p.request_id, m.request_id);
        assert!(p.error.is_none() && m.error.is_none());
        assert!(
            p.user.starts_with('{') && p.prompt_tokens == m.prompt_tokens,
            "{}: the same prompt",
            p.request_id
        );
        let (pp, mp) = (
            p.probabilities.as_ref().unwrap(),
            m.probabilities.as_ref().unwrap(),
        );
        for (x, y) in pp.iter().zip(mp) {
            worst = worst.max((x - y).abs());
        }
    }
    eprintln!(
        "llama3-scaling + Llama-3.2 template: {} requests, prefix vs mistral.rs max |dp| {worst:e}",
        prefix.len()
    );
    assert!(worst <= 1e-5, "option probabilities differ by {worst:e}");
}

#[test]
fn a_template_that_cannot_render_stops_the_run_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    // `rjustify` is no string method (Python's is `rjust`): transformers fails on it too.
    let model = qwen3_dir(
        dir.path(),
        "{% for m in messages %}{{ m.role }}: {{ m.content.rjustify(3) }}\n{% endfor %}",
    );
    let cfg = quickstart_on(dir.path(), &model);
    let run_dir = dir.path().join("run");
    let out = run_config(&cfg, &run_dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("cannot render a user message") && stderr.contains("rjustify"),
        "{stderr}"
    );
    assert!(
        !run_dir.join("requests").exists()
            || read_requests(&run_dir.join("requests")).unwrap().is_empty()
    );

    // A template that refuses a system message stops a run whose readout arm sends one (T0),
    // naming the arm's message shape and the template's own message.
    let gemma_like = "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for m in messages %}<start_of_turn>{{ m.role }}\n{{ m.content }}<end_of_turn>\n{% endfor %}<start_of_turn>model\n";
    let dir2 = tempfile::tempdir().unwrap();
    let model = qwen3_dir(dir2.path(), gemma_like);
    let readout = format!(
        "[model]\npath = {:?}\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
         [[arms]]\narm = \"GoldCopy\"\ntemplate = \"T0\"\norder = 0\nevidence = \"indexed\"\n\
         contract = \"gencode\"\n",
        model.display().to_string(),
        repo_root()
            .join("data/banks/arithmetic-dev.jsonl")
            .display()
            .to_string()
    );
    let cfg = write(dir2.path(), "readout.toml", &readout);
    let out = run_config(&cfg, &dir2.path().join("run"));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("System role not supported")
            && stderr.contains("a system message then a user message"),
        "{stderr}"
    );
}

#[test]
fn a_checkpoint_whose_rope_cannot_be_honoured_exits_2_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let model = qwen3_dir(dir.path(), &official_qwen3_template());
    let path = model.join("config.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["rope_parameters"]["rope_type"] = serde_json::json!("longrope");
    std::fs::write(&path, config.to_string()).unwrap();
    let cfg = quickstart_on(dir.path(), &model);
    let out = run_config(&cfg, &dir.path().join("run"));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("rope_parameters.rope_type") && stderr.contains("longrope"),
        "{stderr}"
    );
}

/// A model that fails every request ends its run non-zero instead of calling it a success.
/// Here the chat template renders the start-up probe but raises on every request the run
/// sends (they carry `response_format`): the run stops after the first 32 identical failures
/// (`[run] stop_after_identical_failures`), exits 3, names the error in its banner and in the
/// manifest's status, and its directory resumes — without the early stop the resumed run
/// fails the items it had not fed too, records each rejected trajectory once, and says that
/// none completed.
#[test]
fn a_model_that_fails_every_request_stops_early_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let template = "{% for m in messages %}{% if '\"response_format\"' in m.content %}\
        {{ raise_exception('this model takes no response formats') }}{% endif %}\
        <|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n";
    let model = qwen3_dir(dir.path(), template);
    let quickstart = std::fs::read_to_string(quickstart_on(dir.path(), &model)).unwrap();
    // A small feeding window, so that the stop comes while most items are still unread.
    let cfg = write(
        dir.path(),
        "run.toml",
        &format!("{quickstart}\n[inference]\nmax_active_items = 8\n"),
    );
    let run_dir = dir.path().join("run");
    let out = run_config(&cfg, &run_dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    // At least the 32 of the limit (requests in flight when it was reached fail too).
    let failed_first: u64 = stdout
        .split("FAILED (exit 3): stopped early: the first ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no early stop in {stdout}"));
    assert!(failed_first >= 32, "{stdout}");
    assert!(
        stdout.contains("model requests all failed with:")
            && stdout.contains("this model takes no response formats"),
        "{stdout}"
    );
    assert!(stdout.contains("model requests: 0 answered,"), "{stdout}");
    assert!(stdout.contains("most common error ("), "{stdout}");
    let manifest = |d: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).unwrap()).unwrap()
    };
    let status = manifest(&run_dir)["status"].clone();
    assert_eq!(status["state"], "failed", "{status}");
    assert_eq!(status["exit_code"], 3, "{status}");
    assert_eq!(status["requests_answered"], 0, "{status}");
    assert_eq!(status["completed"], 0, "{status}");
    assert!(
        status["requests_failed"].as_u64().unwrap() >= 32,
        "{status}"
    );
    assert!(
        status["most_common_error"]
            .as_str()
            .unwrap()
            .contains("this model takes no response formats"),
        "{status}"
    );
    let rejects = read_rejects(&run_dir.join("rejects")).unwrap();
    assert!(
        !rejects.is_empty() && rejects.len() < 192,
        "stopped early: {} of 192 trajectories rejected",
        rejects.len()
    );
    assert!(rejects.iter().all(|r| r.source == "inference"));

    // Resumed without the early stop: every trajectory is tried and rejected once.
    let text_cfg = std::fs::read_to_string(&cfg).unwrap().replace(
        "name = \"quickstart\"",
        "name = \"quickstart\"\nstop_after_identical_failures = 0",
    );
    let cfg = write(dir.path(), "resume.toml", &text_cfg);
    let out = run_config(&cfg, &run_dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(stderr.contains("resuming"), "{stderr}");
    assert!(
        stdout.contains("FAILED (exit 3): the engine failed")
            && stdout.contains("and no trajectory completed"),
        "{stdout}"
    );
    let rejects = read_rejects(&run_dir.join("rejects")).unwrap();
    let mut keys: Vec<(String, String)> = rejects
        .iter()
        .map(|r| {
            (
                r.item_id.clone().unwrap(),
                r.location.split(' ').next().unwrap().to_string(),
            )
        })
        .collect();
    keys.sort();
    let n = keys.len();
    keys.dedup();
    assert_eq!(keys.len(), n, "a rejected trajectory is recorded once");
    assert_eq!(n, 192, "96 items × 2 arms, each rejected");
    let m = manifest(&run_dir);
    assert_eq!(m["resumed"], 1);
    assert_eq!(m["status"]["state"], "failed");
    assert!(read_trajectories(&run_dir.join("trajectories"))
        .unwrap()
        .is_empty());
}

/// `[model] dtype = "bf16"`: the default model runs with bf16 weights, every request answered;
/// the manifest names the engine `prefix/bf16`, so an f32 run directory is not resumed with it
/// (exit 2, naming the engine); and its option distributions stay near the f32 run's (the
/// agreement with transformers' own bf16 forward is `model/tests/bf16_reference.rs`).
#[test]
fn bf16_weights_run_the_quickstart_arms_and_are_their_own_engine() {
    let dir = tempfile::tempdir().unwrap();
    let arith = bank_head(dir.path(), "arithmetic-dev.jsonl", 6);
    let lex = bank_head(dir.path(), "lexical-dev.jsonl", 6);
    let config = |dtype: &str| {
        write(
            dir.path(),
            &format!("{dtype}.toml"),
            &format!(
                "[model]\npath = {:?}\ndtype = \"{dtype}\"\n\n\
                 [[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
                 [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n",
                c2s_e2e::model_path().display().to_string(),
                arith.display().to_string(),
                lex.display().to_string()
            ),
        )
    };
    let (f32_cfg, bf16_cfg) = (config("f32"), config("bf16"));
    let (f32_dir, bf16_dir) = (dir.path().join("f32"), dir.path().join("bf16"));
    run_ok(&f32_cfg, &f32_dir);
    run_ok(&bf16_cfg, &bf16_dir);
    let engine = |d: &Path| -> String {
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).unwrap())
                .unwrap();
        m["model"]["engine"].as_str().unwrap().to_string()
    };
    assert_eq!(engine(&f32_dir), "prefix/f32");
    assert_eq!(engine(&bf16_dir), "prefix/bf16");
    let probabilities = |d: &Path| -> std::collections::HashMap<String, Vec<f64>> {
        read_requests(&d.join("requests"))
            .unwrap()
            .into_iter()
            .map(|r| {
                assert!(r.error.is_none(), "{}: {:?}", r.request_id, r.error);
                (r.request_id, r.probabilities.expect("scored"))
            })
            .collect()
    };
    let (exact, bf16) = (probabilities(&f32_dir), probabilities(&bf16_dir));
    assert_eq!(
        read_trajectories(&bf16_dir.join("trajectories"))
            .unwrap()
            .len(),
        24,
        "12 items × 2 arms"
    );
    let mut max_diff = 0f64;
    for (id, p) in &bf16 {
        // Scored requests follow the trajectory, so a different choice leads elsewhere; the
        // requests both runs made are compared.
        if let Some(q) = exact.get(id) {
            for (a, b) in p.iter().zip(q) {
                max_diff = max_diff.max((a - b).abs());
            }
        }
    }
    println!(
        "bf16 vs f32: {} and {} requests, max |Δp| {max_diff:.4}",
        bf16.len(),
        exact.len()
    );
    // transformers' own bf16 forward moves SmolLM2's probabilities by up to 0.03 from f32 on
    // the pipeline's prompts (fixtures/smollm2-bf16.json); ours stays within about 3× that.
    assert!(max_diff < 0.1, "bf16 moved a probability by {max_diff}");
    // Resuming the f32 directory with bf16 weights would mix two engines' answers.
    let out = run_config(&bf16_cfg, &f32_dir);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("engine was \"prefix/f32\" and is now \"prefix/bf16\""),
        "{stderr}"
    );
}

/// `bench engine --dtype bf16` loads the prefix engine in the bf16 mode (its identity says
/// so) and scores the panel; the dtype is refused for an engine that has no such mode.
#[test]
fn bench_engine_holds_the_prefix_weights_as_asked() {
    let model = c2s_e2e::model_path().display().to_string();
    let bench = |engine: &str| {
        c2s_e2e::run(&[
            "bench",
            "engine",
            "--model",
            &model,
            "--engine",
            engine,
            "--dtype",
            "bf16",
            "--per-domain",
            "2",
            "--rounds",
            "1",
        ])
    };
    let out = bench("prefix");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let shown = format!("{stdout}{stderr}");
    assert!(shown.contains("engine prefix (prefix/bf16)"), "{shown}");
    assert!(shown.contains("round 0:"), "{shown}");
    let out = bench("mistralrs");
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("--dtype bf16 is a mode of the prefix engine"),
        "{stderr}"
    );
}
