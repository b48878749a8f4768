#!/usr/bin/env bash
# The CUDA 13.0 toolkit pieces that `cargo build --features cuda` (mistral.rs → candle, cudarc,
# mistralrs-quant, mistralrs-paged-attn) needs, taken from NVIDIA's PyPI wheels, on a machine
# with no GPU and no system CUDA. Installs into .tools/cuda (git-ignored) and lays out a
# CUDA_ROOT-like tree at .tools/cuda/root:
#   bin/nvcc (+ptxas, cicc under nvvm/), include/ (cuda_fp16/bf16/fp8, CCCL under include/cccl),
#   lib/ and lib64/ with the unversioned .so links the linker wants, and lib/stubs/libcuda.so,
#   a link-time stand-in for the driver library (the real libcuda.so.1 comes with the GPU
#   host's driver; the stub is never shipped).
# Pinned to CUDA 13.0.x: the GPU host's driver is CUDA 13.0, and PTX written by a newer nvcc
# would not load there.
# A no-op when the tree is already there. Prints the environment to export (source it with
#   eval "$(scripts/fetch-cuda.sh)"
# or use scripts/build-cuda.sh, which does).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.tools/cuda"
site="$dest/site"
cuda="$dest/root"
stamp="$dest/.complete-13.0"

# One line per wheel: the CUDA 13.0 (update 2) versions.
wheels=(
  nvidia-cuda-nvcc==13.0.88     # nvcc, ptxas, fatbinary, nvlink, cudafe++, bin2c
  nvidia-cuda-crt==13.0.88      # include/crt/* (host_config.h, …) nvcc needs
  nvidia-nvvm==13.0.88          # nvvm/bin/cicc, libdevice
  nvidia-cuda-runtime==13.0.96  # cuda_runtime.h, cuda.h, cuda_fp16/bf16/fp8.h, libcudart.so.13
  nvidia-cuda-cccl==13.0.85     # include/cccl: cub, thrust, libcu++ (cuda/std/…)
  nvidia-cuda-nvrtc==13.0.88    # libnvrtc.so.13 (cudarc links it)
  nvidia-cublas==13.0.2.14      # libcublas.so.13, libcublasLt.so.13 (cudarc links them)
  nvidia-curand==10.4.0.35      # libcurand.so.10 (cudarc links it)
)

print_env() {
  cat <<EOF
export CUDA_ROOT="$cuda"
export CUDA_PATH="$cuda"
export CUDA_HOME="$cuda"
export CUDA_TOOLKIT_ROOT_DIR="$cuda"
export NVCC="$cuda/bin/nvcc"
export NVCC_CCBIN="\${NVCC_CCBIN:-$(command -v g++ || echo g++)}"
export CUDA_COMPUTE_CAP=90
export CUDARC_CUDA_VERSION=13000
export PATH="$cuda/bin:\$PATH"
export LIBRARY_PATH="$cuda/lib:$cuda/lib/stubs\${LIBRARY_PATH:+:\$LIBRARY_PATH}"
EOF
}

if [[ -f "$stamp" && -x "$cuda/bin/nvcc" ]]; then
  print_env
  exit 0
fi

echo "installing the CUDA 13.0 toolkit wheels into $site" >&2
py="$(command -v python3)"
rm -rf "$site.tmp"
specs=()
for w in "${wheels[@]}"; do specs+=("${w%% *}"); done
"$py" -m pip install -q --disable-pip-version-check --no-deps --no-compile \
  --target "$site.tmp" "${specs[@]}" >&2
rm -rf "$site"
mv "$site.tmp" "$site"
top="$site/nvidia/cu13"
[[ -x "$top/bin/nvcc" ]] || { echo "fetch-cuda: no nvidia/cu13/bin/nvcc in the wheels" >&2; exit 1; }

# The tree: root -> site/nvidia/cu13, completed with what a system toolkit would have.
ln -sfn "site/nvidia/cu13" "$cuda"
(
  cd "$top"
  # nvcc.profile looks for headers and libraries under targets/x86_64-linux.
  mkdir -p targets/x86_64-linux
  ln -sfn ../../include targets/x86_64-linux/include
  ln -sfn ../../lib targets/x86_64-linux/lib
  ln -sfn lib lib64
  # Unversioned names for the linker (-lcudart -lcublas -lcublasLt -lcurand -lnvrtc).
  cd lib
  for so in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcurand.so.10 libnvrtc.so.13; do
    [[ -e "$so" ]] || { echo "fetch-cuda: missing lib/$so" >&2; exit 1; }
    ln -sfn "$so" "${so%.so.*}.so"
  done
  # libcuda.so stub: every driver entry point cuda.h 13.0 declares, as empty functions, with
  # the driver's soname, so the binary records NEEDED libcuda.so.1 and resolves it on the host.
  mkdir -p stubs
  gcc -E -P ../include/cuda.h \
    | grep -oE '\bcu[A-Z][A-Za-z0-9_]*[[:space:]]*\(' | tr -d '( \t' | sort -u \
    | sed 's/.*/void &(void) {}/' > stubs/libcuda-stub.c
  gcc -shared -fPIC -o stubs/libcuda.so -Wl,-soname,libcuda.so.1 stubs/libcuda-stub.c
  ln -sfn libcuda.so stubs/libcuda.so.1
)
"$cuda/bin/nvcc" --version >&2
touch "$stamp"
print_env
