#!/usr/bin/env bash
# Installs the lexical bank's sources: WordNet 3.0 (Debian `wordnet-base`, database under
# /usr/share/wordnet) and wordfreq 3.1.1's `large_en.msgpack.gz` (from the PyPI wheel) into
# .tools/wordfreq/. A no-op when both are present.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools/wordfreq"

if [ ! -f /usr/share/wordnet/data.noun ]; then
  echo "installing WordNet 3.0 (wordnet-base)" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq >/dev/null || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq wordnet-base >/dev/null
fi

wf="$tools/wordfreq/large_en.msgpack.gz"
if [ ! -f "$wf" ]; then
  echo "fetching wordfreq 3.1.1 (large_en.msgpack.gz)" >&2
  tmp="$(mktemp -d)"
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" wordfreq==3.1.1
  python3 - "$tmp"/wordfreq-3.1.1-*.whl "$wf" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    data = z.read("wordfreq/data/large_en.msgpack.gz")
open(sys.argv[2] + ".part", "wb").write(data)
PY
  mv "$wf.part" "$wf"
  rm -rf "$tmp"
fi
echo "wordnet: /usr/share/wordnet  wordfreq: $wf" >&2
