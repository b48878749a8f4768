#!/usr/bin/env bash
# The second model family on its real weights (minutes on 2 cores, so not part of the default
# suite, which covers the qwen2/qwen3 code paths on small random-weight models and the Qwen
# tokenizer against llama.cpp): fetches Qwen2.5-Coder-0.5B-Instruct (GGUF Q4_K_M), checks that
# the prefix engine and mistral.rs agree on it, and runs the Qwen quickstart end to end.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$CHOICE2SEQ_ROOT"
bash scripts/build-deps.sh
bash scripts/fetch-sources.sh
bash scripts/fetch-qwen.sh
cargo build --release --locked --workspace --bins
cargo test --release --locked -p c2s-model --test qwen -- --ignored --nocapture
run_dir="$(mktemp -d)/qwen-quickstart"
"$CHOICE2SEQ_BIN" run config/qwen-quickstart.toml --run-dir "$run_dir" --quiet
"$CHOICE2SEQ_BIN" stats "$run_dir"
