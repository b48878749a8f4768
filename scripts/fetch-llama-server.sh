#!/usr/bin/env bash
# llama.cpp's own server (`llama-server`), built from the llama.cpp that llama-cpp-python 0.3.36
# bundles (ggml-org/llama.cpp@0c1e57098, the same source as scripts/fetch-llamacpp.sh), into
# .tools/llama-server/bin/llama-server. It is the anchor of `choice2seq bench inference
# --against llama-server`: parallel slots, its prompt cache, driven by the pipeline's openai
# engine.
#
# The source is the package's sdist from PyPI (checked against its sha256); cmake and ninja come
# from PyPI wheels in a venv beside the binary. The build is portable and has the same CPU
# options as scripts/fetch-llamacpp.sh (AVX2/FMA/F16C, no AVX-512 and no AMX: llama.cpp's AMX
# weight-repack path crashed with SIGILL on this project's Intel machines when built native),
# static, without the web UI, HTTPS or the other tools. About 17 minutes on 2 cores; the binary
# is cached as $HOME/.cache/c2s/wheels/llama-server-0.3.36 and reused when present; the build
# log goes to $HOME/.cache/c2s/wheels/llama-server-0.3.36.build.log.
#
# A no-op when the binary is in place. Prints its path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.tools/llama-server"
version="0.3.36"
sdist_url="https://files.pythonhosted.org/packages/ec/e9/e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/llama_cpp_python-$version.tar.gz"
sdist_sha256="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
cache="${C2S_WHEEL_CACHE:-$HOME/.cache/c2s/wheels}"
cached="$cache/llama-server-$version"
log="$cache/llama-server-$version.build.log"
bin="$dest/bin/llama-server"

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache" "$dest/bin"
if [ ! -x "$cached" ]; then
  echo "building llama-server from llama-cpp-python $version's llama.cpp (log: $log); this takes a while" >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  curl -fsSL --retry 3 -o "$tmp/sdist.tar.gz" "$sdist_url"
  echo "$sdist_sha256  $tmp/sdist.tar.gz" | sha256sum -c --quiet -
  tar -xzf "$tmp/sdist.tar.gz" -C "$tmp"
  python3 -m venv "$tmp/venv"
  "$tmp/venv/bin/pip" install -q --disable-pip-version-check cmake ninja >&2
  src="$tmp/llama_cpp_python-$version/vendor/llama.cpp"
  # Option names as in $src/CMakeLists.txt and $src/ggml/CMakeLists.txt of this version.
  if ! {
    PATH="$tmp/venv/bin:$PATH" cmake -S "$src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON \
      -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF \
      -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
      -DGGML_AMX_BF16=OFF -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
      -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF \
      -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
      && nice -n 10 "$tmp/venv/bin/ninja" -C "$tmp/build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" llama-server
  } >"$log" 2>&1; then
    echo "llama-server build failed; see $log" >&2
    exit 1
  fi
  cp "$tmp/build/bin/llama-server" "$cached.partial"
  mv "$cached.partial" "$cached"
  echo "cached binary: $cached" >&2
fi
cp "$cached" "$bin"
"$bin" --version >/dev/null 2>&1 || { echo "$bin does not run" >&2; exit 1; }
echo "$bin"
