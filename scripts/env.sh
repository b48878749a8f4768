# Shared settings of the project's scripts (sourced, not run).
# One cargo target directory under $HOME, shared by set-up, tests and CI runs on this machine,
# and one build profile (release) for tests, benchmarks and the binary, so nothing builds twice.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/c2s/target}"
export CHOICE2SEQ_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CHOICE2SEQ_BIN="$CARGO_TARGET_DIR/release/choice2seq"
