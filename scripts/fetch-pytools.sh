#!/usr/bin/env bash
# A Python environment with the Arrow readers the tests check outputs with (pyarrow, DuckDB,
# polars) and the Prometheus text-format parser (prometheus_client), in .tools/pyenv. A no-op
# when it is already there. Prints its python's path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
env="$root/.tools/pyenv"
if ! "$env/bin/python" -c "import pyarrow, duckdb, polars, prometheus_client" 2>/dev/null; then
  echo "installing pyarrow, duckdb, polars and prometheus_client into $env" >&2
  python3 -m venv "$env"
  "$env/bin/python" -m pip install -q --disable-pip-version-check pyarrow duckdb polars prometheus_client >&2
fi
echo "$env/bin/python"
