#!/usr/bin/env bash
# Set-up and the main job. Installs the default model (SmolLM2-135M-Instruct, Q4_1) and the
# bank sources, builds the release binary, and runs the quickstart panel (config/quickstart.toml:
# a small dev panel of both domains, Native and Serial/Full) into runs/quickstart.
# Pass another run directory as the first argument to keep several runs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$CHOICE2SEQ_ROOT"
bash scripts/build-deps.sh
# The downloads need no build and the build needs no download: they run beside the compile.
(
  bash scripts/fetch-model.sh
  bash scripts/fetch-sources.sh
) &
fetching=$!
cargo build --release --locked --bins
if ! wait "$fetching"; then
  echo "installing the model or the bank sources failed (see above)" >&2
  exit 1
fi
"$CHOICE2SEQ_BIN" run config/quickstart.toml --run-dir "${1:-runs/quickstart}"
