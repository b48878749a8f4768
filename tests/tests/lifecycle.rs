//! How a run ends when the world interrupts it, through the binary with the real model:
//! SIGTERM (what orchestrators, systemd and Kubernetes send) drains like Ctrl-C, and a full
//! disk pauses the run until there is room, or stops it with an error after
//! `[output] max_write_wait_seconds`; every case resumes to the same results as an undisturbed
//! run.
//!
//! The full-disk tests mount a small tmpfs as the run directory (they run as root, as CI does).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use c2s_e2e::{
    assert_live_final_equals_offline, bank_head, binary, model_path, repo_root, run_config, text,
    write,
};
use c2s_sinks::{read_requests, read_trajectories};

/// Native and Serial/Full on 4 + 4 dev items with the real model, parts rolled after every row
/// (many small writes) and a small feeding window.
fn config(dir: &Path, extra: &str) -> PathBuf {
    let a = bank_head(dir, "arithmetic-dev.jsonl", 4);
    let l = bank_head(dir, "lexical-dev.jsonl", 4);
    write(
        dir,
        "run.toml",
        &format!(
            "[model]\npath = {:?}\nengine = \"prefix\"\n\n[[sources]]\nkind = \"jsonl\"\n\
             path = {:?}\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n[[arms]]\n\
             arm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
             [inference]\nmax_active_items = 4\n\n[stats]\nbootstrap_draws = 99\n\n\
             [output]\npart_rows = 1\npart_seconds = 0.2\n{extra}",
            model_path().display().to_string(),
            a.display().to_string(),
            l.display().to_string()
        ),
    )
}

/// A background run, killed on drop if still running (a failed assertion leaves no run
/// behind).
struct Running(Child);

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `choice2seq run` in the background, its output going to files in `logs`.
fn spawn(cfg: &Path, run_dir: &Path, logs: &Path) -> Running {
    Running(
        Command::new(binary())
            .args([
                "run",
                cfg.to_str().unwrap(),
                "--run-dir",
                run_dir.to_str().unwrap(),
                "--quiet",
            ])
            .current_dir(repo_root())
            .stdout(std::fs::File::create(logs.join("stdout")).unwrap())
            .stderr(std::fs::File::create(logs.join("stderr")).unwrap())
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

fn read_log(logs: &Path, name: &str) -> String {
    std::fs::read_to_string(logs.join(name)).unwrap_or_default()
}

/// Wait for the run to end, required with exit 0: its stderr.
fn exits_0(child: &mut Child, logs: &Path) -> String {
    let status = child.wait().unwrap();
    let (stdout, stderr) = (read_log(logs, "stdout"), read_log(logs, "stderr"));
    assert_eq!(status.code(), Some(0), "{stdout}\n{stderr}");
    stderr
}

/// Wait until `ready` holds, while the run goes on.
fn wait_for(child: &mut Child, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(600);
    while !ready() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before {what}"
        );
        assert!(Instant::now() < deadline, "no {what} after 10 minutes");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn manifest(run_dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap()).unwrap()
}

/// The finished run holds every trajectory of the 8 items once, one request row per call, and
/// its live metrics equal the offline recomputation.
fn assert_complete(run_dir: &Path) {
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    let keys: BTreeSet<(String, String)> = trajectories
        .iter()
        .map(|t| (t.item_id.clone(), t.arm.clone()))
        .collect();
    assert_eq!(keys.len(), trajectories.len(), "no duplicate trajectories");
    assert_eq!(keys.len(), 16, "8 items × 2 arms");
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    let ids: BTreeSet<&String> = requests.iter().map(|r| &r.request_id).collect();
    assert_eq!(ids.len(), requests.len(), "no duplicate request rows");
    let calls: u32 = trajectories.iter().map(|t| t.calls).sum();
    assert_eq!(requests.len() as u32, calls, "one request row per call");
    assert_live_final_equals_offline(run_dir);
}

#[test]
fn sigterm_finishes_the_items_in_flight_and_the_run_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "");
    let run_dir = dir.path().join("run");
    let mut child = spawn(&cfg, &run_dir, dir.path());
    wait_for(&mut child, "3 durable trajectories", || {
        read_trajectories(&run_dir.join("trajectories")).map_or(0, |t| t.len()) >= 3
    });
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let stderr = exits_0(&mut child, dir.path());
    assert!(stderr.contains("stopping (SIGTERM)"), "{stderr}");
    let m = manifest(&run_dir);
    assert_eq!(m["status"]["state"], "stopped", "{m}");
    assert!(
        m["status"]["reason"]
            .as_str()
            .unwrap()
            .contains("stopped by SIGTERM"),
        "{m}"
    );
    // Nothing in flight was lost: every item the run asked the model about has both of its
    // trajectories written.
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    let mut arms: BTreeMap<String, usize> = BTreeMap::new();
    for t in &trajectories {
        *arms.entry(t.item_id.clone()).or_default() += 1;
    }
    let asked: BTreeSet<String> = read_requests(&run_dir.join("requests"))
        .unwrap()
        .into_iter()
        .map(|r| r.item_id)
        .collect();
    for item in &asked {
        assert_eq!(arms.get(item), Some(&2), "item {item} was left half done");
    }
    let out = run_config(&cfg, &run_dir);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("resuming"), "{stderr}");
    assert_eq!(manifest(&run_dir)["status"]["state"], "completed");
    assert_complete(&run_dir);
}

/// A tmpfs of `kib` KiB mounted at `path`, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(path: &Path, kib: u64) -> Tmpfs {
        std::fs::create_dir_all(path).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "mounting a tmpfs (this test runs as root, as CI does): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(path.to_path_buf())
    }

    fn resize(&self, kib: u64) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,size={kib}k")])
            .arg(&self.0)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Lines of the log that report a failed write.
fn write_errors(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.contains("No space left on device"))
        .count()
}

#[test]
fn a_full_disk_pauses_the_run_until_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "");
    let disk = Tmpfs::mount(&dir.path().join("disk"), 96);
    let run_dir = dir.path().join("disk/run");
    let mut child = spawn(&cfg, &run_dir, dir.path());
    wait_for(&mut child, "a write failure", || {
        read_log(dir.path(), "stderr").contains("retrying with backoff")
    });
    // Paused: a few seconds later the run is still waiting, and has said so a few times only.
    std::thread::sleep(Duration::from_secs(3));
    assert!(child.try_wait().unwrap().is_none(), "the run did not wait");
    let logged = write_errors(&read_log(dir.path(), "stderr"));
    assert!(
        (1..=10).contains(&logged),
        "{logged} error lines in 3 s of a full disk"
    );
    disk.resize(64 * 1024);
    let stderr = exits_0(&mut child, dir.path());
    assert!(stderr.contains("writing again"), "{stderr}");
    assert_eq!(manifest(&run_dir)["status"]["state"], "completed");
    assert_complete(&run_dir);
}

/// `GET /api/state` of the run's live monitor, whose address the run logs.
fn api_state(logs: &Path) -> Option<serde_json::Value> {
    use std::io::{Read, Write};
    let log = read_log(logs, "stderr");
    let addr = log.split("http://").nth(1)?.split('/').next()?.to_string();
    let mut s = std::net::TcpStream::connect(&addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET /api/state HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    serde_json::from_str(text.split_once("\r\n\r\n")?.1).ok()
}

/// Blocked outputs over `[output] max_buffered_mb` hold the model requests back: the run says
/// so, its answered requests stop moving while the disk stays full, and once there is room it
/// goes on to the complete result.
#[test]
fn blocked_outputs_over_their_byte_budget_hold_the_requests_back() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        "max_buffered_mb = 0.0001\n\n[serve]\naddress = \"127.0.0.1:0\"\n",
    );
    let disk = Tmpfs::mount(&dir.path().join("disk"), 96);
    let run_dir = dir.path().join("disk/run");
    let mut child = spawn(&cfg, &run_dir, dir.path());
    wait_for(&mut child, "requests held back", || {
        read_log(dir.path(), "stderr").contains("model requests wait")
    });
    let state = api_state(dir.path()).expect("the live monitor's state");
    assert_eq!(state["writes"]["requests_held"], true, "{state:#}");
    assert!(
        state["writes"]["held_bytes"].as_u64() > Some(104),
        "{state:#}"
    );
    // The calls sent before the hold come back (nothing left in the engine); then nothing
    // moves.
    let engine = || api_state(dir.path()).expect("state")["engine"].clone();
    let deadline = Instant::now() + Duration::from_secs(120);
    while engine()["in_flight"].as_u64() != Some(0) {
        assert!(
            Instant::now() < deadline,
            "the engine kept requests: {:#}",
            engine()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let requests = || engine()["answered"].as_u64();
    let settled = requests();
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(requests(), settled, "requests were answered while held");
    assert!(child.try_wait().unwrap().is_none(), "the run did not wait");
    disk.resize(64 * 1024);
    let stderr = exits_0(&mut child, dir.path());
    assert!(stderr.contains("model requests go on"), "{stderr}");
    println!("held at {settled:?} answered requests while the disk was full");
    assert_eq!(manifest(&run_dir)["status"]["state"], "completed");
    assert_complete(&run_dir);
}

#[test]
fn outputs_that_cannot_be_written_stop_the_run_and_it_resumes_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "max_write_wait_seconds = 2.0\n");
    let _disk = Tmpfs::mount(&dir.path().join("disk"), 96);
    let run_dir = dir.path().join("disk/run");
    let out = run_config(&cfg, &run_dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("giving up after"), "{stderr}");
    assert!(
        stderr.contains("stopping: outputs cannot be written")
            && stderr.contains("No space left on device"),
        "{stderr}"
    );
    // Moved to a disk with room, the run resumes to the complete result.
    let moved = dir.path().join("moved");
    let copied = Command::new("cp")
        .arg("-a")
        .arg(&run_dir)
        .arg(&moved)
        .status()
        .unwrap();
    assert!(copied.success());
    let out = run_config(&cfg, &moved);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("resuming"), "{stderr}");
    assert_complete(&moved);
}
