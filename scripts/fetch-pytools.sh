#!/usr/bin/env bash
# A Python environment with the Arrow readers the tests check outputs with (pyarrow, DuckDB,
# polars), the Prometheus text-format parser (prometheus_client) and moto's S3 server (the
# store a restartable tansu broker keeps its log in: tests/kafka_restart.rs), in .tools/pyenv.
# A no-op when it is already there. Prints its python's path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
env="$root/.tools/pyenv"
if ! "$env/bin/python" -c "import pyarrow, duckdb, polars, prometheus_client, moto" 2>/dev/null \
  || [ ! -x "$env/bin/moto_server" ]; then
  echo "installing pyarrow, duckdb, polars, prometheus_client and moto[server] into $env" >&2
  python3 -m venv "$env"
  "$env/bin/python" -m pip install -q --disable-pip-version-check pyarrow duckdb polars prometheus_client 'moto[server]==5.2.1' >&2
fi
echo "$env/bin/python"
