#!/usr/bin/env bash
# Builds the choice2seq binary with mistral.rs on CUDA (`--features cuda`), here on a machine
# with no GPU and no system CUDA, for compute capability 9.0 (H100/H200), against the CUDA
# 13.0 toolkit that scripts/fetch-cuda.sh installs from PyPI wheels into .tools/cuda.
# Uses its own target directory (default $HOME/.cache/c2s/target-cuda), so the CPU build in
# $HOME/.cache/c2s/target is never invalidated. Extra arguments go to cargo.
#   scripts/build-cuda.sh            # -> $HOME/.cache/c2s/target-cuda/release/choice2seq
# Set C2S_BUILD_JOBS (default 2) and C2S_NICE (default 5) on a shared machine.
# A cold build compiles ~100 CUDA kernel files with nvcc; see docs/models.md (GPU build) for timings.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
eval "$("$root/scripts/fetch-cuda.sh")"
export CARGO_TARGET_DIR="${C2S_CUDA_TARGET_DIR:-$HOME/.cache/c2s/target-cuda}"
jobs="${C2S_BUILD_JOBS:-2}"
# cudaforge (the kernel build of candle-kernels, mistralrs-quant, -paged-attn and -core) runs
# its nvcc processes on its own thread pool, outside cargo's -j: up to jobs x threads nvcc at
# once. Half the job count each keeps the machine near -j.
threads=$(( jobs / 2 )); (( threads >= 1 )) || threads=1
export CUDAFORGE_THREADS="${CUDAFORGE_THREADS:-$threads}"
# What ships runs on another machine's CPU: x86-64-v3 (AVX2/FMA, which candle's quantized CPU
# kernels need at compile time), as .cargo/config.toml sets for every build; gemm's AVX-512
# f32 kernels are compiled in (`gemm-f32/x86-v4`) and chosen at run time where the CPU has
# them. RUSTFLAGS replaces the config's flags, so it names the same target here.
export RUSTFLAGS="${C2S_CUDA_RUSTFLAGS:--C target-cpu=x86-64-v3}"
cd "$root"
bash scripts/build-deps.sh
echo "building choice2seq with --features cuda (CUDA 13.0, sm_${CUDA_COMPUTE_CAP}) into $CARGO_TARGET_DIR" >&2
nice -n "${C2S_NICE:-5}" cargo build --release --locked --features cuda -p choice2seq -j "$jobs" "$@"
bin="$CARGO_TARGET_DIR/release/choice2seq"
echo "built $bin" >&2
echo "$bin"
