#!/usr/bin/env bash
# The remote-engine suite: the `openai` engine against a real OpenAI-compatible server,
# llama.cpp's server through llama-cpp-python 0.3.36 on the default GGUF. Not part of the
# default suite: the server is built from source (about 15 minutes on 2 cores the first time;
# the wheel is cached in $HOME/.cache/c2s/wheels). Runs the quickstart panel through the server
# against the local engine (agreement and requests/s are printed), outages of every kind through
# a fault-injecting proxy (killed connections, 503s, a stall, a truncated body, the server
# restarted) against a clean run, the same panel through llama.cpp's own server (llama-server,
# built from the same llama.cpp by scripts/fetch-llama-server.sh) with logit_bias scoring, an outage past max_outage_seconds (exit 1) then resumed, and
# the error cases (nothing listening, 401, unknown model, timeout, a server that
# cannot score, resuming against another served model).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$CHOICE2SEQ_ROOT"
bash scripts/build-deps.sh
bash scripts/fetch-sources.sh
bash scripts/fetch-model.sh
export C2S_LLAMA_PYTHON="$(bash scripts/fetch-llamacpp.sh)"
export C2S_LLAMA_SERVER="$(bash scripts/fetch-llama-server.sh)"
cargo build --release --locked --workspace --bins
# One test at a time: each starts its own servers on the machine's two cores.
cargo test --release --locked --workspace --test remote -- --ignored --nocapture --test-threads=1
