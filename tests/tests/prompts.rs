//! What the model saw, end to end with the default model: `choice2seq model render`, the
//! `prompts/` dataset (every request's prompt reads back by `prompt_sha256`, equals `model
//! render`'s text for the request's parts and has the engine's prompt token count; each
//! prompt is written once, over two workers and after a resume, and a resume writes what
//! `prompts/` lacks), `choice2seq show`, and the live page's `/request/ID` over the run
//! (`choice2seq view`).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "serve/http.rs"]
mod http;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use c2s_e2e::{bank_head, binary, model_path, repo_root, run, text, write};
use c2s_sinks::{read_prompts, read_requests, PromptRow, RequestRow};

/// `choice2seq model render MODEL … --json`, which must succeed.
fn render_json(model: &Path, r: &RequestRow) -> Value {
    // `--flag=VALUE`: a value that starts with `-` stays a value.
    let mut args = vec![
        "model".to_string(),
        "render".into(),
        model.display().to_string(),
        format!("--user={}", r.user),
        "--json".into(),
    ];
    if let Some(s) = &r.system {
        args.push(format!("--system={s}"));
    }
    if let Some(p) = &r.assistant_prefix {
        args.push(format!("--assistant-prefix={p}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    serde_json::from_str(&stdout).expect("one JSON object")
}

#[test]
fn model_render_prints_the_prompt_its_token_ids_and_tokens() {
    let model = model_path();
    let m = model.display().to_string();
    let out = run(&[
        "model",
        "render",
        &m,
        "--system",
        "Answer with one code.",
        "--user",
        "Which is 2+2? A: 4, B: 5",
        "--assistant-prefix",
        "The answer is",
        "--json",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        v.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["prompt", "token_ids", "tokens"]
    );
    let prompt = v["prompt"].as_str().unwrap();
    assert!(
        prompt.starts_with("<|im_start|>system\nAnswer with one code.<|im_end|>\n")
            && prompt.contains("<|im_start|>user\nWhich is 2+2? A: 4, B: 5<|im_end|>\n")
            && prompt.ends_with("<|im_start|>assistant\nThe answer is"),
        "{prompt:?}"
    );
    let ids = v["token_ids"].as_array().unwrap();
    let tokens = v["tokens"].as_array().unwrap();
    assert_eq!(ids.len(), tokens.len());
    assert_eq!(
        tokens[0], "<|im_start|>",
        "a control token is one vocabulary piece"
    );
    assert!(tokens.iter().any(|t| t == "Ġanswer"), "{tokens:?}");

    // The text form: the prompt verbatim, then one line per token.
    let out = run(&["model", "render", &m, "--user", "hello"]);
    let (stdout, _) = text(&out);
    assert!(out.status.success());
    assert!(
        stdout.contains("<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("index") && stdout.contains("\"<|im_start|>\""),
        "{stdout}"
    );

    // A model that cannot be read, and one without a chat template: exit 2, named.
    let out = run(&["model", "render", "models/absent.gguf", "--user", "x"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("models/absent.gguf"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let hf = dir.path().join("hf");
    let out = run(&["model", "export-tokenizer", &m, &hf.display().to_string()]);
    assert!(out.status.success(), "{:?}", text(&out));
    let cfg_path = hf.join("tokenizer_config.json");
    let mut cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    cfg.as_object_mut().unwrap().remove("chat_template");
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    let out = run(&["model", "render", &hf.display().to_string(), "--user", "x"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no chat template"), "{stderr}");
}

/// `model render --time` and `--run`: a template that prints the date (Llama 3.2's official
/// one) renders the date given, or the one a run recorded, so the text equals that run's
/// `prompts/` row; a bad time or a directory that is not a run exits 2, named.
#[test]
fn model_render_takes_the_template_time_of_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let hf = dir.path().join("hf");
    let m = model_path().display().to_string();
    let out = run(&["model", "export-tokenizer", &m, &hf.display().to_string()]);
    assert!(out.status.success(), "{:?}", text(&out));
    let cfg_path = hf.join("tokenizer_config.json");
    let mut cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    cfg["chat_template"] = Value::String(
        std::fs::read_to_string(
            repo_root().join("model/tests/fixtures/chat_templates/llama-3.2.jinja"),
        )
        .unwrap(),
    );
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    let h = hf.display().to_string();
    let rendered = |extra: &[&str]| {
        let mut args = vec!["model", "render", &h, "--user", "hi", "--json"];
        args.extend(extra);
        let out = run(&args);
        let (stdout, stderr) = text(&out);
        (out.status.code(), stdout, stderr)
    };
    let (code, stdout, stderr) = rendered(&["--time", "2026-07-26T10:30:00+02:00"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("Today Date: 26 Jul 2026"), "{stdout}");
    let run_dir = dir.path().join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    let manifest = serde_json::json!({
        "format": 1, "run": "r", "started_at_ms": 0, "updated_at_ms": 0, "config": {},
        "model": {}, "chat_template_time": "2025-03-09T08:00:00+00:00", "crate_version": "0"
    });
    std::fs::write(run_dir.join("manifest.json"), manifest.to_string()).unwrap();
    let (code, stdout, stderr) = rendered(&["--run", &run_dir.display().to_string()]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("Today Date: 09 Mar 2025"), "{stdout}");
    let (code, _, stderr) = rendered(&["--time", "yesterday"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--time") && stderr.contains("RFC 3339"),
        "{stderr}"
    );
    let (code, _, stderr) = rendered(&["--run", &hf.display().to_string()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no manifest.json"), "{stderr}");
}

/// Every prompt row once, by key.
fn prompts_by_key(run_dir: &Path) -> BTreeMap<String, PromptRow> {
    let rows = read_prompts(&run_dir.join("prompts")).unwrap();
    let n = rows.len();
    let by_key: BTreeMap<String, PromptRow> = rows
        .into_iter()
        .map(|p| (p.prompt_sha256.clone(), p))
        .collect();
    assert_eq!(by_key.len(), n, "each prompt is written once per run");
    by_key
}

#[test]
fn every_request_prompt_reads_back_equals_model_render_and_show_prints_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = bank_head(dir.path(), "arithmetic-dev.jsonl", 1);
    let l = bank_head(dir.path(), "lexical-dev.jsonl", 1);
    let model = model_path();
    // Native, Serial, PrefixContinue (an assistant prefix) and a readout arm (a system
    // message): every part of a prompt.
    let cfg = write(
        dir.path(),
        "run.toml",
        &format!(
            "[model]\npath = {:?}\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
             [[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
             [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
             [[arms]]\narm = \"PrefixContinue\"\ncontract = \"char\"\n\n\
             [[arms]]\narm = \"GoldCopy\"\ntemplate = \"T0\"\norder = 0\nevidence = \"indexed\"\n\n\
             [stats]\nbootstrap_draws = 99\n",
            model.display().to_string(),
            a.display().to_string(),
            l.display().to_string(),
        ),
    );
    let run_dir = dir.path().join("run");
    let rd = run_dir.display().to_string();
    let cfg_s = cfg.display().to_string();
    // Two workers: a prompt is written by the worker that owns its key, once.
    let out = run(&["run", &cfg_s, "--run-dir", &rd, "--quiet", "-w", "2"]);
    assert!(out.status.success(), "{:?}", text(&out));

    let requests = read_requests(&run_dir.join("requests")).unwrap();
    assert!(!requests.is_empty());
    let prompts = prompts_by_key(&run_dir);
    let keys: BTreeSet<&String> = requests.iter().map(|r| &r.prompt_sha256).collect();
    assert_eq!(
        prompts.keys().collect::<BTreeSet<_>>(),
        keys,
        "one prompt row per distinct prompt of the requests"
    );
    assert!(requests.iter().any(|r| r.system.is_some()));
    assert!(requests.iter().any(|r| r.assistant_prefix.is_some()));
    let mut rendered: BTreeSet<&String> = BTreeSet::new();
    for r in &requests {
        let p = &prompts[&r.prompt_sha256];
        assert_eq!(p.rendering, c2s_sinks::Rendering::ChatTemplate);
        let text = p.prompt.as_deref().expect("rendered here");
        assert_eq!(
            p.n_tokens,
            Some(r.prompt_tokens),
            "the engine's prompt tokens for {}",
            r.request_id
        );
        assert!(text.contains(&r.user), "{}", r.request_id);
        if rendered.insert(&r.prompt_sha256) {
            let v = render_json(&model, r);
            assert_eq!(v["prompt"], text, "model render for {}", r.request_id);
            assert_eq!(
                v["token_ids"].as_array().unwrap().len() as u32,
                r.prompt_tokens
            );
        }
    }

    // `show`: the prompt verbatim, the options with token ids, the answer.
    let mut shown = BTreeSet::new();
    for r in requests.iter().filter(|r| shown.insert(r.arm.clone())) {
        let out = run(&["show", &rd, &r.request_id]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stderr}");
        let text = prompts[&r.prompt_sha256].prompt.as_deref().unwrap();
        assert!(
            stdout.contains(&format!("----- prompt (verbatim) -----\n{text}")),
            "{stdout}"
        );
        assert!(stdout.contains(&r.request_id), "{stdout}");
        let out = run(&["show", &rd, &r.request_id, "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["prompt"]["text"], text);
        let options = v["options"].as_array().unwrap();
        assert_eq!(options.len(), r.option_codes.len());
        for o in options {
            assert!(
                o["token_ids"].as_array().is_some_and(|t| !t.is_empty()),
                "{v:#}"
            );
        }
        if let Some(p) = &r.probabilities {
            assert_eq!(options[0]["probability"], p[0]);
        }
    }
    let out = run(&["show", &rd, "no-such-request"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no-such-request"), "{stderr}");
    let absent = dir.path().join("absent").display().to_string();
    let out = run(&["show", &absent, &requests[0].request_id]);
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));

    // The live page over the run opens the same request.
    let first = &requests[0];
    let text0 = prompts[&first.prompt_sha256].prompt.clone().unwrap();
    let (addr, mut view) = serve(&run_dir);
    let v = http::get_json(&addr, &format!("/api/request/{}", first.request_id));
    assert_eq!(v["prompt"]["text"], text0.as_str(), "{v:#}");
    assert_eq!(v["request_id"], first.request_id.as_str());
    let (status, page) = http::request(
        &addr,
        &format!("GET /request/{} HTTP/1.1\r\nHost: {addr}", first.request_id),
    );
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("&lt;|im_start|&gt;user"), "{page}");
    let (status, _) = http::request(
        &addr,
        &format!("GET /api/request/nope HTTP/1.1\r\nHost: {addr}"),
    );
    assert_eq!(status, 404);
    let _ = view.kill();
    let _ = view.wait();

    // A resume replays every answer (trajectories redone from requests/): no prompt and no
    // request is written again.
    let parts_before = std::fs::read_dir(run_dir.join("prompts")).unwrap().count();
    for d in ["trajectories", "outcomes", "metrics"] {
        std::fs::remove_dir_all(run_dir.join(d)).unwrap();
    }
    let out = run(&["run", &cfg_s, "--run-dir", &rd, "--quiet", "-w", "2"]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(
        prompts_by_key(&run_dir),
        prompts,
        "prompts/ unchanged by the resume"
    );
    assert_eq!(
        std::fs::read_dir(run_dir.join("prompts")).unwrap().count(),
        parts_before
    );
    assert_eq!(
        read_requests(&run_dir.join("requests")).unwrap().len(),
        requests.len()
    );

    // A run whose prompts/ lacks recorded requests' prompts (killed between the two datasets'
    // parts, or begun before prompts/ existed) gets them back at its next resume.
    std::fs::remove_dir_all(run_dir.join("prompts")).unwrap();
    let out = run(&["run", &cfg_s, "--run-dir", &rd, "--quiet"]);
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "recorded the prompts of {} earlier requests",
            prompts.len()
        )),
        "{stderr}"
    );
    assert_eq!(
        prompts_by_key(&run_dir),
        prompts,
        "prompts/ written again in full"
    );
}

/// `choice2seq view RUN --serve 127.0.0.1:0`: its address and process.
fn serve(run_dir: &Path) -> (String, std::process::Child) {
    let mut child = Command::new(binary())
        .args([
            "view",
            &run_dir.display().to_string(),
            "--serve",
            "127.0.0.1:0",
        ])
        .current_dir(repo_root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting choice2seq view");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_secs(1)) {
            if let Some(rest) = line.split("http://").nth(1) {
                let addr = rest.split('/').next().unwrap_or_default().to_string();
                return (addr, child);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("choice2seq view printed no address");
}
