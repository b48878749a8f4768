//! The fuzzing harness: each target runs over its seed corpus, then over seeded random
//! mutations of it for a time budget. Inputs run in a child process (this test binary again,
//! [`executor`]) one at a time, so that whatever an input does to the process is seen and
//! attributed to it: a panic, an input that runs past [`INPUT_TIMEOUT`], a crash (a stack
//! overflow, an abort), or live memory past [`MEMORY_LIMIT`] (counted by [`FuzzAlloc`], this
//! binary's global allocator) is a finding — the test fails, naming the target and saving
//! the input. A child that stops with exit status 2 after the chat-template memory budget's
//! message is the pipeline's own guard refusing a template (as `choice2seq` would): counted,
//! and a new child takes over. A child that stops without saying why on its stderr (an exit
//! status 2 without the budget's message, any other status with an empty stderr) is a finding
//! of its own: a cause was lost.
//!
//! Mutations are the classic byte-level ones (bit flips, interesting bytes and integers,
//! deleted, duplicated, repeated and spliced ranges, dictionary tokens, rewritten numbers),
//! stacked, from the seeds and from earlier mutants; there is no coverage feedback (the
//! toolchain is stable). The sequence of inputs depends only on the seed
//! (`C2S_FUZZ_SEED`, default 0), so a longer run covers every shorter run's inputs.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The longest one input may run.
pub const INPUT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most live heap memory the executor may hold.
pub const MEMORY_LIMIT: usize = 1 << 30;

/// Seconds of mutated inputs per target when `C2S_FUZZ_SECONDS` is not set.
const DEFAULT_SECONDS: f64 = 10.0;

/// The environment variable that makes the `executor` test run a target's inputs.
pub const EXECUTOR_ENV: &str = "C2S_FUZZ_EXECUTOR";

/// What the executor prints once it reads inputs.
const READY: &str = "c2s-fuzz-executor-ready";

/// The chat-template memory budget's message (`c2s_model::tokenizer::render_budget`).
const RENDER_BUDGET_MESSAGE: &str = "the chat template allocated more than";

/// A fuzz target: what runs one input, where its seeds are, how its inputs grow.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
    /// Further seeds: files in the repository (relative to its root).
    pub seed_files: Vec<PathBuf>,
    /// Tokens that mutations insert (keywords, delimiters of the format).
    pub dictionary: &'static [&'static str],
    /// Mutants are cut to this length.
    pub max_len: usize,
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    c2s_e2e::repo_root()
}

/// The committed corpus of `target`: `tests/fuzz_corpus/<target>/`.
fn corpus_dir(target: &str) -> PathBuf {
    repo_root().join("tests/fuzz_corpus").join(target)
}

fn env_seconds() -> f64 {
    std::env::var("C2S_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(DEFAULT_SECONDS)
}

fn env_seed() -> u64 {
    std::env::var("C2S_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Run `target` over its corpus and then mutants for the time budget; panics on a finding.
pub fn fuzz(target: Target) {
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    let dir = corpus_dir(target.name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file());
    files.sort();
    files.extend(target.seed_files.iter().map(|f| repo_root().join(f)));
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        seeds.push((f.display().to_string(), bytes));
    }
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    let mut executor = Executor::start(target.name);
    for (name, bytes) in &seeds {
        executor.check(bytes, &format!("seed {name}"));
    }
    let seed = env_seed();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ fnv(target.name.as_bytes()));
    let budget = Duration::from_secs_f64(env_seconds());
    let started = Instant::now();
    let mut recent: Vec<Vec<u8>> = Vec::new();
    let mut executions = 0u64;
    while started.elapsed() < budget {
        let base = if !recent.is_empty() && rng.random_bool(0.3) {
            &recent[rng.random_range(0..recent.len())]
        } else {
            &seeds[rng.random_range(0..seeds.len())].1
        };
        let other = &seeds[rng.random_range(0..seeds.len())].1;
        let input = mutate(base, other, target.dictionary, target.max_len, &mut rng);
        executor.check(
            &input,
            &format!("mutant {executions} (C2S_FUZZ_SEED={seed})"),
        );
        executions += 1;
        if recent.len() < 64 {
            recent.push(input);
        } else {
            let i = rng.random_range(0..recent.len());
            recent[i] = input;
        }
    }
    // Straight to stderr, past the test harness's capture: CI's log shows the executions.
    let _ = writeln!(
        std::io::stderr(),
        "fuzz {}: {} seeds and {executions} mutants in {:.1} s ({} stopped by the chat-template \
         memory budget), no finding",
        target.name,
        seeds.len(),
        started.elapsed().as_secs_f64(),
        executor.budget_stops
    );
}

/// Run `inputs` of `target` in a fresh executor, as [`fuzz`] runs its inputs (a finding
/// panics): the inputs the chat-template budget stopped, and the stderr of the last stop.
pub fn run_inputs(target: &'static str, inputs: &[&[u8]]) -> (u64, String) {
    let mut executor = Executor::start(target);
    for (i, input) in inputs.iter().enumerate() {
        executor.check(input, &format!("input {i}"));
    }
    (
        executor.budget_stops,
        std::mem::take(&mut executor.last_stop),
    )
}

/// The child process that runs a target's inputs, one at a time.
struct Executor {
    target: &'static str,
    child: Child,
    stdin: ChildStdin,
    replies: mpsc::Receiver<String>,
    /// The child's standard error (its last 64 KiB), and the thread that reads it.
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
    /// Inputs after which the chat-template memory budget stopped the child.
    budget_stops: u64,
    /// The stderr of the latest child the budget stopped.
    last_stop: String,
}

impl Executor {
    fn start(target: &'static str) -> Executor {
        let exe = std::env::current_exe().expect("the test executable");
        let mut child = Command::new(exe)
            .args([
                "executor",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(EXECUTOR_ENV, target)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting the fuzz executor");
        let stdin = child.stdin.take().expect("the executor's stdin");
        let stdout = child.stdout.take().expect("the executor's stdout");
        let mut err = child.stderr.take().expect("the executor's stderr");
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            // Skip what the test harness prints before the executor starts.
            let mut ready = false;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if ready {
                    if tx.send(line).is_err() {
                        break;
                    }
                } else {
                    ready = line.ends_with(READY);
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                let n = match err.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    // A signal is no end of the child's stderr: stopping here would drop
                    // what it writes last (why it stopped).
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let mut s = sink.lock().unwrap_or_else(|p| p.into_inner());
                s.extend_from_slice(&buf[..n]);
                let excess = s.len().saturating_sub(64 << 10);
                s.drain(..excess);
            }
        });
        Executor {
            target,
            child,
            stdin,
            replies,
            stderr,
            stderr_reader: Some(stderr_reader),
            budget_stops: 0,
            last_stop: String::new(),
        }
    }

    /// Run `input`; a panic, a crash or a timeout fails the test.
    fn check(&mut self, input: &[u8], what: &str) {
        let mut frame = (input.len() as u64).to_le_bytes().to_vec();
        frame.extend_from_slice(input);
        let sent = self
            .stdin
            .write_all(&frame)
            .and_then(|()| self.stdin.flush());
        let reply = match sent {
            Ok(()) => self.replies.recv_timeout(INPUT_TIMEOUT),
            Err(_) => Err(mpsc::RecvTimeoutError::Disconnected),
        };
        match reply {
            Ok(line) if line == "ok" => {}
            Ok(line) => self.finding(input, what, &line),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                self.finding(
                    input,
                    what,
                    &format!("did not finish within {} s", INPUT_TIMEOUT.as_secs()),
                )
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().ok();
                // The reader ends at the end of the child's stderr, with its last bytes read.
                if let Some(reader) = self.stderr_reader.take() {
                    let _ = reader.join();
                }
                let stderr = self.stderr_text();
                let code = status.and_then(|s| s.code());
                if code == Some(2) && stderr.contains(RENDER_BUDGET_MESSAGE) {
                    let mut fresh = Executor::start(self.target);
                    fresh.budget_stops = self.budget_stops + 1;
                    fresh.last_stop = stderr;
                    *self = fresh;
                    return;
                }
                let status = status.map_or("no status".into(), |s| s.to_string());
                let problem = if stderr.trim().is_empty() {
                    // Whatever stopped the child, its cause must be on its stderr.
                    format!(
                        "stopped the executor ({status}) with an empty stderr: its cause was lost"
                    )
                } else if code == Some(2) {
                    format!(
                        "stopped the executor ({status}) without the chat-template budget's \
                         message; its stderr:\n{stderr}"
                    )
                } else {
                    format!("crashed the executor ({status}); its stderr:\n{stderr}")
                };
                self.finding(input, what, &problem)
            }
        }
    }

    fn stderr_text(&self) -> String {
        self.stderr
            .lock()
            .map(|s| String::from_utf8_lossy(&s).into_owned())
            .unwrap_or_default()
    }

    fn finding(&self, input: &[u8], what: &str, problem: &str) -> ! {
        let saved = save_finding(self.target, input);
        panic!(
            "fuzz {}: {what}: {problem}\ninput saved to {}\ninput: {}",
            self.target,
            saved.display(),
            preview(input)
        );
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The executor's side: read length-prefixed inputs from stdin and run each on a worker
/// thread (with the default stack size, as the pipeline's worker threads have), answering
/// `ok` or `panicked: …` on stdout.
pub fn executor(target: &Target) {
    let (inputs, rx) = mpsc::channel::<Vec<u8>>();
    let (tx, results) = mpsc::channel::<Result<(), String>>();
    let run = target.run;
    std::thread::Builder::new()
        .name(format!("fuzz-{}", target.name))
        .spawn(move || {
            for input in rx {
                let outcome =
                    std::panic::catch_unwind(|| run(&input)).map_err(|p| panic_message(p.as_ref()));
                if tx.send(outcome).is_err() {
                    break;
                }
            }
        })
        .expect("spawning the executor's worker");
    let mut out = std::io::stdout();
    let _ = writeln!(out, "\n{READY}");
    let _ = out.flush();
    let mut stdin = std::io::stdin().lock();
    loop {
        let mut len = [0u8; 8];
        if stdin.read_exact(&mut len).is_err() {
            return;
        }
        let mut input = vec![0u8; u64::from_le_bytes(len) as usize];
        if stdin.read_exact(&mut input).is_err() || inputs.send(input).is_err() {
            return;
        }
        let reply = match results.recv() {
            Ok(Ok(())) => "ok".to_string(),
            Ok(Err(message)) => format!("panicked: {}", message.escape_debug()),
            Err(_) => return,
        };
        let _ = writeln!(out, "{reply}");
        let _ = out.flush();
    }
}

/// Save a finding's input under the target directory's temporary folder.
fn save_finding(target: &str, input: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-findings");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{target}-{:016x}", fnv(input)));
    let _ = std::fs::write(&path, input);
    path
}

/// The start of an input, escaped.
fn preview(input: &[u8]) -> String {
    let shown = &input[..input.len().min(2000)];
    let mut text = String::from_utf8_lossy(shown).escape_debug().to_string();
    if input.len() > shown.len() {
        text.push_str(&format!("… ({} bytes)", input.len()));
    }
    text
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// FNV-1a, for stable seeds and file names.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

const INTERESTING_BYTES: &[u8] = b"\x00\x01\x7f\x80\xff09\"\\{}[]<>%\n =-.,'";
const INTERESTING_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "255",
    "65536",
    "2147483648",
    "4294967296",
    "9007199254740993",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "1e308",
    "1e309",
    "-0.0",
    "1.5",
    "100000000",
];
const INTERESTING_INTEGERS: &[u64] = &[
    0,
    1,
    2,
    3,
    7,
    8,
    9,
    31,
    32,
    255,
    1 << 16,
    (1 << 31) - 1,
    1 << 31,
    u32::MAX as u64,
    1 << 32,
    1 << 40,
    1 << 62,
    1 << 63,
    u64::MAX - 1,
    u64::MAX,
];

/// One mutant of `base` (1 to 8 stacked mutations; `other` is a splice partner).
fn mutate(
    base: &[u8],
    other: &[u8],
    dictionary: &[&str],
    max_len: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<u8> {
    let mut data = base.to_vec();
    let rounds = 1 << rng.random_range(0..4);
    for _ in 0..rounds {
        let len = data.len();
        let at = |rng: &mut ChaCha8Rng, len: usize| rng.random_range(0..=len);
        match rng.random_range(0..11) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                data[i] ^= 1 << rng.random_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.random_range(0..len);
                data[i] = INTERESTING_BYTES[rng.random_range(0..INTERESTING_BYTES.len())];
            }
            2 if len > 0 => {
                let start = rng.random_range(0..len);
                let n = rng.random_range(1..=(len - start).min(64));
                data.drain(start..start + n);
            }
            3 if len > 0 => {
                let start = rng.random_range(0..len);
                let n = rng.random_range(1..=(len - start).min(256));
                let chunk = data[start..start + n].to_vec();
                let to = at(rng, len);
                data.splice(to..to, chunk);
            }
            4 if !dictionary.is_empty() => {
                let token = dictionary[rng.random_range(0..dictionary.len())].as_bytes();
                let to = at(rng, len);
                data.splice(to..to, token.iter().copied());
            }
            5 => {
                // Rewrite a number (a run of ASCII digits) as an interesting one.
                let starts: Vec<usize> = (0..len)
                    .filter(|&i| {
                        data[i].is_ascii_digit() && (i == 0 || !data[i - 1].is_ascii_digit())
                    })
                    .collect();
                if let Some(&start) = starts.get(rng.random_range(0..starts.len().max(1))) {
                    let end = (start..len)
                        .find(|&i| !data[i].is_ascii_digit())
                        .unwrap_or(len);
                    let number =
                        INTERESTING_NUMBERS[rng.random_range(0..INTERESTING_NUMBERS.len())];
                    data.splice(start..end, number.bytes());
                }
            }
            6 if len >= 4 => {
                // An interesting little-endian integer over 4 or 8 bytes (binary formats).
                let width = if len >= 8 && rng.random_bool(0.5) {
                    8
                } else {
                    4
                };
                let i = rng.random_range(0..=len - width);
                let v = INTERESTING_INTEGERS[rng.random_range(0..INTERESTING_INTEGERS.len())];
                data[i..i + width].copy_from_slice(&v.to_le_bytes()[..width]);
            }
            7 if !other.is_empty() => {
                // Splice: this input's head, the other's tail.
                let cut = at(rng, len);
                let from = rng.random_range(0..other.len());
                data.truncate(cut);
                data.extend_from_slice(&other[from..]);
            }
            8 if len > 0 => {
                data.truncate(rng.random_range(0..len));
            }
            9 if len > 0 => {
                // Repeat a short range many times (long tokens, deep nesting).
                let start = rng.random_range(0..len);
                let n = rng.random_range(1..=(len - start).min(8));
                let chunk = data[start..start + n].to_vec();
                let times = rng.random_range(2..=256);
                let to = at(rng, len);
                data.splice(to..to, chunk.iter().copied().cycle().take(n * times));
            }
            _ => {
                let i = at(rng, len);
                data.insert(i, rng.random());
            }
        }
        data.truncate(max_len);
    }
    data
}

static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Set once the limit's message is being written (which must not report itself again).
static OVER_LIMIT: AtomicBool = AtomicBool::new(false);

/// Counts live heap bytes; an allocation past [`MEMORY_LIMIT`] aborts the process (the
/// executor), after a message the harness reports with the input. Wraps `A` (the pipeline's
/// own allocator).
pub struct FuzzAlloc<A>(pub A);

impl<A> FuzzAlloc<A> {
    fn charge(&self, bytes: usize) {
        let live = LIVE
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        if live > MEMORY_LIMIT && !OVER_LIMIT.swap(true, Ordering::Relaxed) {
            over_limit(live);
        }
    }
}

#[cold]
fn over_limit(live: usize) -> ! {
    use c2s_model::tokenizer::render_budget::{write_stderr, StackText};
    // Formatted on the stack and written to fd 2 directly: this runs inside an allocation.
    let mut message = StackText::<160>::new();
    let _ = std::fmt::Write::write_fmt(
        &mut message,
        format_args!("fuzz: an input brought live memory to {live} bytes (limit {MEMORY_LIMIT})\n"),
    );
    write_stderr(message.as_bytes());
    std::process::abort()
}

// SAFETY: every call is forwarded to `A` unchanged; the counter is an atomic, and the limit's
// message is written without allocating before the process aborts.
unsafe impl<A: GlobalAlloc> GlobalAlloc for FuzzAlloc<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.charge(layout.size());
        self.0.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.charge(layout.size());
        self.0.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        self.0.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            self.charge(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        self.0.realloc(ptr, layout, new_size)
    }
}
