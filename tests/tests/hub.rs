//! Models by Hugging Face Hub id (`[model] hf`), against a Hub-shaped server on 127.0.0.1
//! (`hub/server.rs`; no network): a run downloads the tiny Qwen3 fixture checkpoint into the
//! Hugging Face cache layout and runs from its snapshot, recording repository, revision and
//! commit in the manifest; later runs read the cache with the endpoint down and in offline
//! mode, and resume; a wrong revision or a model not cached offline stops the run with exit 2
//! naming it. Through the library: a gated repository, a missing file and a corrupted blob
//! are errors naming repository and file, and nothing corrupted is left in the cache; GGUF
//! files (in a folder) and sharded safetensors resolve.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "hub/server.rs"]
mod server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use c2s_e2e::{bank_head, binary, repo_root, text, write};
use c2s_model::hub::{resolve, HubError, HubModel, HubSettings};
use c2s_sinks::read_trajectories;
use server::{sha256_hex, FakeHub, FakeRepo};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const REPO: &str = "tiny-org/qwen3-tiny";

/// The Qwen3 fixture checkpoint's files as a Hub repository holds them, with Qwen3's official
/// chat template and a context that fits the prompts (as `models.rs` prepares it), and the
/// files a download skips.
fn qwen3_files() -> BTreeMap<String, Vec<u8>> {
    let fixtures = repo_root().join("model/tests/fixtures");
    let src = fixtures.join("hf/qwen3");
    let read = |name: &str| std::fs::read(src.join(name)).unwrap();
    let mut config: serde_json::Value = serde_json::from_slice(&read("config.json")).unwrap();
    config["max_position_embeddings"] = serde_json::json!(16384);
    let mut tok: serde_json::Value =
        serde_json::from_slice(&read("tokenizer_config.json")).unwrap();
    tok["chat_template"] = serde_json::json!(std::fs::read_to_string(
        fixtures.join("chat_templates/qwen3.jinja")
    )
    .unwrap());
    tok["model_max_length"] = serde_json::json!(16384);
    let mut files = BTreeMap::new();
    files.insert("config.json".into(), config.to_string().into_bytes());
    files.insert("tokenizer_config.json".into(), tok.to_string().into_bytes());
    for name in [
        "tokenizer.json",
        "generation_config.json",
        "model.safetensors",
    ] {
        files.insert(name.to_string(), read(name));
    }
    files.insert("README.md".into(), b"# a tiny model\n".to_vec());
    files.insert("onnx/model.onnx".into(), b"not downloaded".to_vec());
    files
}

fn qwen3_repo() -> FakeRepo {
    FakeRepo {
        id: REPO.into(),
        commit: COMMIT.into(),
        revisions: vec!["main".into(), "v1.0".into()],
        files: qwen3_files(),
        ..Default::default()
    }
}

/// `choice2seq run CONFIG --run-dir RUN_DIR --quiet` with the Hub variables of `env` (and no
/// others from this process).
fn run_with(config: &Path, run_dir: &Path, env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(binary());
    cmd.args(["run", &config.display().to_string(), "--run-dir"])
        .arg(run_dir)
        .arg("--quiet")
        .current_dir(repo_root());
    for var in [
        "HF_ENDPOINT",
        "HF_HOME",
        "HF_HUB_CACHE",
        "HF_TOKEN",
        "HF_TOKEN_PATH",
        "HF_HUB_OFFLINE",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("running choice2seq")
}

fn manifest(run_dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap()).unwrap()
}

/// A config `name` of Native on 4 arithmetic dev items with `[model]` lines `model`.
fn config(dir: &Path, name: &str, model: &str) -> PathBuf {
    let bank = bank_head(dir, "arithmetic-dev.jsonl", 4);
    write(
        dir,
        name,
        &format!(
            "[model]\n{model}\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n[[arms]]\narm = \"Native\"\n",
            bank.display().to_string()
        ),
    )
}

#[test]
fn a_hub_model_runs_then_runs_from_the_cache_offline_and_with_the_endpoint_down() {
    let dir = tempfile::tempdir().unwrap();
    let mut hub = FakeHub::start(vec![qwen3_repo()]);
    let hf_home = dir.path().join("hf-home");
    let endpoint = hub.endpoint();
    let env = |extra: &[(&'static str, &str)]| {
        let mut env: Vec<(&'static str, String)> = vec![
            ("HF_ENDPOINT", endpoint.clone()),
            ("HF_HOME", hf_home.display().to_string()),
        ];
        env.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        env
    };
    let cfg = config(dir.path(), "main.toml", &format!("hf = \"{REPO}\""));

    // 1. Online: resolved, downloaded into the cache layout, run.
    let run1 = dir.path().join("run1");
    let out = run_with(&cfg, &run1, &env(&[]));
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        read_trajectories(&run1.join("trajectories")).unwrap().len(),
        4
    );
    let model = manifest(&run1)["model"].clone();
    assert_eq!(
        model["hub"],
        serde_json::json!({ "repo": REPO, "revision": "main", "commit": COMMIT })
    );
    assert_eq!(model["name"], "qwen3-tiny");
    let repo_dir = hf_home.join("hub/models--tiny-org--qwen3-tiny");
    let snapshot = repo_dir.join("snapshots").join(COMMIT);
    assert_eq!(model["path"], snapshot.display().to_string());
    assert_eq!(
        std::fs::read_to_string(repo_dir.join("refs/main")).unwrap(),
        COMMIT
    );
    let weights = qwen3_files()["model.safetensors"].clone();
    let link = std::fs::read_link(snapshot.join("model.safetensors")).unwrap();
    assert_eq!(
        link,
        Path::new("../../blobs").join(sha256_hex(&weights)),
        "LFS blobs are named by their sha256"
    );
    assert_eq!(
        std::fs::read(snapshot.join("model.safetensors")).unwrap(),
        weights
    );
    let mut names: Vec<String> = std::fs::read_dir(&snapshot)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "config.json",
            "generation_config.json",
            "model.safetensors",
            "tokenizer.json",
            "tokenizer_config.json"
        ],
        "only what the loaders read"
    );
    assert_eq!(hub.requests("/resolve/"), 5);
    assert_eq!(
        hub.requests("/cdn/"),
        1,
        "the weights come through the redirect"
    );
    let blobs = std::fs::read_dir(repo_dir.join("blobs")).unwrap().count();
    assert_eq!(blobs, 5, "no partial download left behind");

    // 2. Online again, a tag naming the same commit: nothing downloaded.
    let run2 = dir.path().join("run2");
    let tagged = config(
        dir.path(),
        "tag.toml",
        &format!("path = \"hf:{REPO}@v1.0\""),
    );
    let out = run_with(&tagged, &run2, &env(&[]));
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(hub.requests("/resolve/"), 5, "the snapshot was complete");
    assert_eq!(manifest(&run2)["model"]["hub"]["revision"], "v1.0");
    assert_eq!(
        manifest(&run2)["model"]["file_sha256"],
        model["file_sha256"]
    );

    // 3. The endpoint down: the cached snapshot of `main` stands in.
    hub.stop();
    let run3 = dir.path().join("run3");
    let out = run_with(&cfg, &run3, &env(&[]));
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(manifest(&run3)["model"]["hub"]["commit"], COMMIT);
    assert_eq!(
        read_trajectories(&run3.join("trajectories")).unwrap().len(),
        4
    );

    // 4. Offline mode: the cache only; the first run resumes with the same commit.
    let out = run_with(&cfg, &run1, &env(&[("HF_HUB_OFFLINE", "1")]));
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(manifest(&run1)["model"]["hub"]["commit"], COMMIT);

    // 5. Offline, a revision never downloaded: exit 2 before any work, naming it.
    let v2 = config(
        dir.path(),
        "v2.toml",
        &format!("hf = \"{REPO}\"\nrevision = \"v2.0\""),
    );
    let run5 = dir.path().join("run5");
    let out = run_with(&v2, &run5, &env(&[("HF_HUB_OFFLINE", "1")]));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!("{REPO}@v2.0 is not in the Hugging Face cache"))
            && stderr.contains("HF_HUB_OFFLINE"),
        "{stderr}"
    );
    assert!(!run5.join("trajectories").exists());
}

#[test]
fn a_wrong_revision_or_a_gated_repository_exits_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let gated = FakeRepo {
        id: "gated-org/qwen3-tiny".into(),
        token: Some("s3cret".into()),
        ..qwen3_repo()
    };
    let hub = FakeHub::start(vec![qwen3_repo(), gated]);
    let env = vec![
        ("HF_ENDPOINT", hub.endpoint()),
        ("HF_HOME", dir.path().join("hf").display().to_string()),
    ];
    let cases = [
        (
            format!("hf = \"{REPO}\"\nrevision = \"no-such-branch\""),
            format!("{REPO}: no revision `no-such-branch`"),
        ),
        (
            "hf = \"gated-org/qwen3-tiny\"".to_string(),
            "gated-org/qwen3-tiny: access denied (HTTP 401)".to_string(),
        ),
        (
            "hf = \"nobody/nothing\"".to_string(),
            "nobody/nothing: no such repository".to_string(),
        ),
        (
            format!("path = \"hf:{REPO}/missing.gguf\""),
            format!("{REPO}@main: no file `missing.gguf`"),
        ),
    ];
    for (i, (model, says)) in cases.iter().enumerate() {
        let cfg = config(dir.path(), &format!("case{i}.toml"), model);
        let run_dir = dir.path().join(format!("run{i}"));
        let out = run_with(&cfg, &run_dir, &env);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{model}: {stdout}\n{stderr}");
        assert!(stderr.contains(says), "{model}: {stderr}");
        assert!(!run_dir.join("trajectories").exists(), "{model}");
    }
    assert_eq!(hub.requests("/resolve/"), 0, "nothing was downloaded");
}

/// Library settings: the fake Hub's endpoint and a cache in `dir`.
fn settings(hub: &FakeHub, dir: &Path) -> HubSettings {
    HubSettings {
        endpoint: hub.endpoint(),
        cache_dir: dir.join("hub"),
        token: None,
        offline: false,
    }
}

fn model(repo: &str, revision: &str, file: Option<&str>) -> HubModel {
    HubModel {
        repo: repo.into(),
        revision: revision.into(),
        file: file.map(str::to_string),
    }
}

#[test]
fn a_gated_repository_needs_a_token_which_goes_to_the_endpoint_only() {
    let dir = tempfile::tempdir().unwrap();
    let hub = FakeHub::start(vec![FakeRepo {
        token: Some("s3cret".into()),
        ..qwen3_repo()
    }]);
    let mut s = settings(&hub, dir.path());
    let e = resolve(&model(REPO, "main", None), &s).unwrap_err();
    assert!(matches!(e, HubError::Denied { status: 401, .. }), "{e}");
    let message = e.to_string();
    assert!(
        message.contains(REPO) && message.contains("HF_TOKEN") && message.contains("restricted"),
        "{message}"
    );
    s.token = Some("wrong".into());
    let e = resolve(&model(REPO, "main", None), &s).unwrap_err();
    assert!(e.to_string().contains("has no access"), "{e}");
    s.token = Some("s3cret".into());
    hub.log.lock().unwrap().clear();
    let snapshot = resolve(&model(REPO, "main", None), &s).unwrap();
    assert_eq!(snapshot.commit, COMMIT);
    assert_eq!(snapshot.downloaded.len(), 5);
    let log = hub.log.lock().unwrap().clone();
    for line in &log {
        assert!(
            line.ends_with("+auth"),
            "the token goes with every Hub request: {line}"
        );
    }
}

#[test]
fn a_missing_file_or_a_corrupted_blob_is_an_error_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let vanished = FakeRepo {
        id: "o/vanished".into(),
        vanished: vec!["tokenizer.json".into()],
        files: {
            let mut f = qwen3_files();
            f.remove("tokenizer.json");
            f
        },
        ..qwen3_repo()
    };
    let corrupted = FakeRepo {
        id: "o/corrupted".into(),
        corrupted: vec!["model.safetensors".into()],
        ..qwen3_repo()
    };
    let no_weights = FakeRepo {
        id: "o/no-weights".into(),
        files: {
            let mut f = qwen3_files();
            f.remove("model.safetensors");
            f
        },
        ..qwen3_repo()
    };
    let hub = FakeHub::start(vec![vanished, corrupted, no_weights]);
    let s = settings(&hub, dir.path());

    // Listed, but the Hub answers "Entry not found".
    let e = resolve(&model("o/vanished", "main", None), &s).unwrap_err();
    assert!(matches!(e, HubError::FileNotFound { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "o/vanished@main: no file `tokenizer.json` in the repository"
    );

    // The weights' sha256 differs from X-Linked-Etag: refused, no blob, no link.
    let e = resolve(&model("o/corrupted", "main", None), &s).unwrap_err();
    let HubError::Checksum {
        file,
        expected,
        actual,
        ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!(file, "model.safetensors");
    assert_eq!(expected, &sha256_hex(&qwen3_files()["model.safetensors"]));
    assert_ne!(expected, actual);
    assert!(e.to_string().contains("o/corrupted@"), "{e}");
    let repo_dir = dir.path().join("hub/models--o--corrupted");
    let blobs: Vec<String> = std::fs::read_dir(repo_dir.join("blobs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !blobs
            .iter()
            .any(|b| b == expected || b.ends_with(".incomplete")),
        "{blobs:?}"
    );
    assert!(!repo_dir
        .join("snapshots")
        .join(COMMIT)
        .join("model.safetensors")
        .exists());
    assert!(
        !repo_dir.join("refs/main").exists(),
        "no ref to an incomplete snapshot"
    );
    // Offline, the incomplete snapshot is not taken for the model.
    let offline = HubSettings {
        offline: true,
        ..s.clone()
    };
    let e = resolve(&model("o/corrupted", "main", None), &offline).unwrap_err();
    assert!(matches!(e, HubError::NotCached { .. }), "{e}");

    // No weights at all: not a checkpoint, and the message says how to name a GGUF file.
    let e = resolve(&model("o/no-weights", "main", None), &s).unwrap_err();
    assert!(
        e.to_string().contains("no *.safetensors") && e.to_string().contains("hf_file"),
        "{e}"
    );
}

#[test]
fn gguf_files_sharded_weights_and_commit_revisions_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let gguf_bytes = b"GGUF not really, but bytes".to_vec();
    let shard = |n: u8| vec![n; 1000];
    let index = serde_json::json!({
        "metadata": {},
        "weight_map": {
            "a.weight": "model-00001-of-00002.safetensors",
            "b.weight": "model-00002-of-00002.safetensors",
            "c.weight": "model-00001-of-00002.safetensors"
        }
    });
    let mut sharded_files = qwen3_files();
    sharded_files.remove("model.safetensors");
    sharded_files.insert(
        "model.safetensors.index.json".into(),
        index.to_string().into_bytes(),
    );
    sharded_files.insert("model-00001-of-00002.safetensors".into(), shard(1));
    sharded_files.insert("model-00002-of-00002.safetensors".into(), shard(2));
    let hub = FakeHub::start(vec![
        FakeRepo {
            id: "o/tiny-GGUF".into(),
            files: BTreeMap::from([("q4/tiny-Q4_0.gguf".to_string(), gguf_bytes.clone())]),
            ..qwen3_repo()
        },
        FakeRepo {
            id: "o/sharded".into(),
            files: sharded_files,
            ..qwen3_repo()
        },
    ]);
    let s = settings(&hub, dir.path());

    let gguf = model("o/tiny-GGUF", COMMIT, Some("q4/tiny-Q4_0.gguf"));
    let snapshot = resolve(&gguf, &s).unwrap();
    let expected = dir
        .path()
        .join("hub/models--o--tiny-GGUF/snapshots")
        .join(COMMIT)
        .join("q4/tiny-Q4_0.gguf");
    assert_eq!(snapshot.path, expected);
    assert_eq!(std::fs::read(&snapshot.path).unwrap(), gguf_bytes);
    assert_eq!(snapshot.name(), "tiny-Q4_0");
    assert!(
        !dir.path()
            .join("hub/models--o--tiny-GGUF/refs")
            .join(COMMIT)
            .exists(),
        "a commit revision writes no ref"
    );
    // Offline, a commit revision finds its snapshot without a ref.
    let offline = HubSettings {
        offline: true,
        ..s.clone()
    };
    assert_eq!(resolve(&gguf, &offline).unwrap().path, expected);

    let snapshot = resolve(&model("o/sharded", "main", None), &s).unwrap();
    let mut got = snapshot.downloaded.clone();
    got.sort();
    assert_eq!(
        got,
        [
            "config.json",
            "generation_config.json",
            "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors",
            "model.safetensors.index.json",
            "tokenizer.json",
            "tokenizer_config.json"
        ]
    );
    assert_eq!(
        std::fs::read(snapshot.path.join("model-00002-of-00002.safetensors")).unwrap(),
        shard(2)
    );
    let again = resolve(&model("o/sharded", "main", None), &offline).unwrap();
    assert_eq!(again.path, snapshot.path);
    assert!(again.cache_only.is_some() && again.downloaded.is_empty());
}

#[test]
fn settings_come_from_the_hugging_face_variables() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| std::ffi::OsString::from(v))
        }
    };
    let s = HubSettings::from_lookup(&env(&[("HOME", "/home/u")]));
    assert_eq!(s.endpoint, "https://huggingface.co");
    assert_eq!(s.cache_dir, Path::new("/home/u/.cache/huggingface/hub"));
    assert!(!s.offline);
    let s = HubSettings::from_lookup(&env(&[
        ("HOME", "/home/u"),
        ("HF_HOME", "/data/hf"),
        ("HF_ENDPOINT", "http://mirror.local/"),
        ("HF_TOKEN", " hf_abc \n"),
        ("HF_HUB_OFFLINE", "1"),
    ]));
    assert_eq!(s.endpoint, "http://mirror.local");
    assert_eq!(s.cache_dir, Path::new("/data/hf/hub"));
    assert_eq!(s.token.as_deref(), Some("hf_abc"));
    assert!(s.offline);
    let s = HubSettings::from_lookup(&env(&[
        ("HF_HOME", "/data/hf"),
        ("HF_HUB_CACHE", "/fast/hub"),
        ("HF_HUB_OFFLINE", "0"),
    ]));
    assert_eq!(s.cache_dir, Path::new("/fast/hub"));
    assert!(!s.offline);
}
