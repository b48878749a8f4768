//! `choice2seq bench inference --against llamacpp`: after the pipeline's path (b) ran the
//! panel, the same scored requests are replayed through llama.cpp (llama-cpp-python in the venv
//! of `scripts/fetch-llamacpp.sh`, `scripts/llamacpp-replay.py`) in a child process, one after
//! the other on the same cores. The replay is the plain loop a user would write: one request at
//! a time, keeping the keys/values of the prefix shared with the previous request. Both sides
//! score the same token ids: the prompts are rendered and tokenized here with the run's own
//! tokenizer and chat template.
//!
//! **A fair replay computes the tokens we compute.** The requests are replayed sorted by their
//! prompt tokens, so each shares with the one before it the longest prefix any earlier request
//! offers: a previous-prefix loop in that order computes each distinct prefix once, what the
//! pipeline's prefix trie computes (in the order the run recorded them, the loop recomputed a
//! quarter more tokens and so looked slower than it is). Prints both requests/s and both
//! computed-token counts (a difference over 1% is a warning), the agreement (argmax, max |Δp|)
//! and the ratio.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use serde::Deserialize;

/// What the replay reports (`scripts/llamacpp-replay.py`'s output).
#[derive(Debug, Deserialize)]
pub struct Replay {
    pub requests: u64,
    pub computed_tokens: u64,
    /// The loop, model loading excluded.
    pub seconds: f64,
    pub load_seconds: f64,
    pub threads: usize,
    pub llama_cpp: String,
    pub probabilities: HashMap<String, Vec<f64>>,
}

/// How the two engines' distributions agree on the requests both answered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    pub compared: usize,
    pub same_argmax: usize,
    pub max_abs_diff: f64,
}

/// Index of the largest probability (the first on ties, as the pipeline's choice).
fn argmax(p: &[f64]) -> Option<usize> {
    p.iter()
        .enumerate()
        .fold(None, |best: Option<(usize, f64)>, (i, &v)| match best {
            Some((_, b)) if b >= v => best,
            _ => Some((i, v)),
        })
        .map(|(i, _)| i)
}

/// The agreement of `theirs` with `ours`, request by request.
pub fn agreement(
    ours: &HashMap<String, Vec<f64>>,
    theirs: &HashMap<String, Vec<f64>>,
) -> Agreement {
    let mut a = Agreement {
        compared: 0,
        same_argmax: 0,
        max_abs_diff: 0.0,
    };
    for (id, p) in ours {
        let Some(q) = theirs.get(id).filter(|q| q.len() == p.len()) else {
            continue;
        };
        a.compared += 1;
        a.same_argmax += usize::from(argmax(p) == argmax(q));
        for (x, y) in p.iter().zip(q) {
            a.max_abs_diff = a.max_abs_diff.max((x - y).abs());
        }
    }
    a
}

/// The python of the llama.cpp venv: `$C2S_LLAMACPP_PYTHON`, else `.tools/llamacpp/bin/python`.
fn llamacpp_python() -> anyhow::Result<PathBuf> {
    super::fetched_tool(
        "C2S_LLAMACPP_PYTHON",
        ".tools/llamacpp/bin/python",
        "scripts/fetch-llamacpp.sh",
    )
}

/// Write the scored requests of `run_dir` as the replay's input (their prompts and options as
/// token ids of `model`'s tokenizer), sorted by prompt tokens (module doc); returns their
/// probabilities as the run answered them.
fn write_requests(
    run_dir: &Path,
    model: &Path,
    out: &Path,
) -> anyhow::Result<HashMap<String, Vec<f64>>> {
    use std::io::Write;
    let tok = c2s_model::load_tokenizer(model)
        .with_context(|| format!("reading the tokenizer of {}", model.display()))?;
    let requests = c2s_sinks::read_requests(&run_dir.join("requests"))?;
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?,
    );
    let mut ours = HashMap::new();
    let mut lines = Vec::new();
    for r in requests.iter().filter(|r| r.error.is_none()) {
        let Some(p) = &r.probabilities else { continue };
        let prompt = tok.prompt_tokens(&c2s_model::PromptSpec {
            system: r.system.clone(),
            user: r.user.clone(),
            assistant_prefix: r.assistant_prefix.clone(),
        })?;
        let options = tok.option_tokens(&r.option_codes)?;
        lines.push((prompt, options, r.request_id.clone()));
        ours.insert(r.request_id.clone(), p.clone());
    }
    lines.sort();
    for (prompt, options, id) in lines {
        let line = serde_json::json!({"id": id, "prompt": prompt, "options": options});
        writeln!(file, "{line}")?;
    }
    file.flush()?;
    Ok(ours)
}

/// Replay (b)'s scored requests through llama.cpp and print the comparison.
pub fn compare(
    model: &Path,
    work: &Path,
    run_dir: &Path,
    ours_seconds: f64,
    ours_computed_tokens: u64,
) -> anyhow::Result<()> {
    let python = llamacpp_python()?;
    let input = work.join("llamacpp-requests.jsonl");
    let output = work.join("llamacpp-replay.json");
    let ours = write_requests(run_dir, model, &input)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    eprintln!(
        "llama.cpp: replaying {} scored requests one at a time, sorted by prompt, reusing the \
         previous request's prefix ({threads} threads) …",
        ours.len()
    );
    let status = Command::new(&python)
        .arg("scripts/llamacpp-replay.py")
        .arg(model)
        .arg(&input)
        .arg(&output)
        .arg(threads.to_string())
        .status()
        .with_context(|| format!("running {}", python.display()))?;
    if !status.success() {
        bail!("scripts/llamacpp-replay.py failed ({status})");
    }
    let text = std::fs::read_to_string(&output)
        .with_context(|| format!("reading {}", output.display()))?;
    let replay: Replay =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", output.display()))?;
    let agree = agreement(&ours, &replay.probabilities);
    let n = ours.len() as f64;
    println!();
    println!(
        "| engine | scored requests | wall s | requests/s | computed tokens | computed tokens/s |"
    );
    println!("|---|---|---|---|---|---|");
    println!(
        "| choice2seq (b), prefix engine | {} | {ours_seconds:.1} | {:.2} | {ours_computed_tokens} | {:.0} |",
        ours.len(),
        n / ours_seconds.max(1e-9),
        ours_computed_tokens as f64 / ours_seconds.max(1e-9)
    );
    println!(
        "| llama.cpp {} loop, sorted, previous-prefix reuse, {} threads | {} | {:.1} | {:.2} | {} | {:.0} |",
        replay.llama_cpp,
        replay.threads,
        replay.requests,
        replay.seconds,
        replay.requests as f64 / replay.seconds.max(1e-9),
        replay.computed_tokens,
        replay.computed_tokens as f64 / replay.seconds.max(1e-9)
    );
    println!();
    println!(
        "choice2seq / llama.cpp (requests/s): {:.2}x; (b)'s wall time includes model loading and \
         the dataflow, llama.cpp's excludes its {:.1} s load",
        (n / ours_seconds.max(1e-9)) / (replay.requests as f64 / replay.seconds.max(1e-9)),
        replay.load_seconds
    );
    let token_ratio = replay.computed_tokens as f64 / (ours_computed_tokens as f64).max(1.0);
    println!(
        "computed tokens: llama.cpp {} / choice2seq {} = {token_ratio:.3}{}",
        replay.computed_tokens,
        ours_computed_tokens,
        if (token_ratio - 1.0).abs() > 0.01 {
            " (WARNING: the two sides computed more than 1% different numbers of tokens, so \
             the ratio above is not only per-token speed)"
        } else {
            ""
        }
    );
    println!(
        "agreement: {} requests compared, same argmax on {}, max |Δp| = {:.3} (llama.cpp's \
         quantized-activation kernels against exact f32 scores)",
        agree.compared, agree.same_argmax, agree.max_abs_diff
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_counts_argmax_and_the_largest_difference() {
        let ours: HashMap<String, Vec<f64>> = [
            ("a".to_string(), vec![0.7, 0.3]),
            ("b".to_string(), vec![0.4, 0.6]),
            ("c".to_string(), vec![0.5, 0.5]),
        ]
        .into_iter()
        .collect();
        let theirs: HashMap<String, Vec<f64>> = [
            ("a".to_string(), vec![0.65, 0.35]),
            ("b".to_string(), vec![0.55, 0.45]),
        ]
        .into_iter()
        .collect();
        let a = agreement(&ours, &theirs);
        assert_eq!(a.compared, 2);
        assert_eq!(a.same_argmax, 1);
        assert!((a.max_abs_diff - 0.15).abs() < 1e-12);
        // Ties go to the first option, as the pipeline's choice.
        assert_eq!(argmax(&[0.5, 0.5]), Some(0));
        assert_eq!(argmax(&[]), None);
    }
}
