#!/usr/bin/env bash
# llama.cpp through llama-cpp-python 0.3.36 (bundling ggml-org/llama.cpp@0c1e57098), in the venv
# .tools/llamacpp, with the `gguf` package beside it and the wheel's `server` extra (its
# OpenAI-compatible server, `python -m llama_cpp.server`). It is the independent reference the
# tokenizer fixtures are computed with (scripts/make-token-fixtures.py) and the real server of
# the remote-engine tests (scripts/test-remote.sh).
#
# llama-cpp-python builds llama.cpp from source (about 15 minutes on 2 cores). The build is
# portable, without -march=native and without AMX: on this machine's Intel CPUs, llama.cpp's AMX
# weight-repack path crashed with SIGILL when built with GGML_NATIVE. The wheel is cached as
# $HOME/.cache/c2s/wheels/llama_cpp_python-0.3.36-*.whl and reused when present; the build log
# goes to $HOME/.cache/c2s/wheels/llama_cpp_python-0.3.36.build.log.
#
# A no-op when the venv already imports llama_cpp 0.3.36. Prints the venv's python path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
env="$root/.tools/llamacpp"
version="0.3.36"
gguf_version="0.19.0"
cache="${C2S_WHEEL_CACHE:-$HOME/.cache/c2s/wheels}"
log="$cache/llama_cpp_python-$version.build.log"

ready() {
  "$env/bin/python" - "$version" 2>/dev/null <<'PY'
import sys
import gguf, llama_cpp
import llama_cpp.server.app, uvicorn
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] else 1)
PY
}
if ready; then
  echo "$env/bin/python"
  exit 0
fi

mkdir -p "$cache"
wheel="$(ls "$cache"/llama_cpp_python-"$version"-*.whl 2>/dev/null | head -n1 || true)"
if [ -z "$wheel" ]; then
  echo "building llama-cpp-python $version from source (log: $log); this takes a while" >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  # Option names as in vendor/llama.cpp/ggml/CMakeLists.txt of this version.
  export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF \
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
  export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
  if ! nice -n 10 python3 -m pip wheel --disable-pip-version-check --no-deps \
      --no-binary=llama-cpp-python -w "$tmp" "llama-cpp-python==$version" >"$log" 2>&1; then
    echo "llama-cpp-python build failed; see $log" >&2
    exit 1
  fi
  built="$(ls "$tmp"/llama_cpp_python-"$version"-*.whl)"
  mv "$built" "$cache/"
  wheel="$cache/$(basename "$built")"
  echo "cached wheel: $wheel" >&2
fi

echo "installing $(basename "$wheel") and gguf $gguf_version into $env" >&2
[ -x "$env/bin/python" ] || python3 -m venv "$env"
"$env/bin/python" -m pip install -q --disable-pip-version-check "$wheel[server]" "gguf==$gguf_version" >&2
ready || { echo "llama_cpp $version does not import from $env" >&2; exit 1; }
echo "$env/bin/python"
