#!/usr/bin/env bash
# Prepares what scripts/gpu-check.sh needs on the GPU host, in gpu/ (git-ignored; name it in
# the device run's carry): the cuda build of choice2seq, stripped and xz-compressed (~23 MiB),
# libcudart.so.13 beside it (the host brings libcuda from its driver and cuBLAS/cuRAND 13.x
# from its CUDA toolkit or PyTorch's cu13 wheels), and the tokenizers of the two shapes
# (SmolLM2's and Qwen2.5's, exported from their GGUFs as tokenizer.json +
# tokenizer_config.json). The whole upload must stay within 60 MiB.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$CHOICE2SEQ_ROOT"
bash scripts/fetch-model.sh
bash scripts/fetch-qwen.sh
bash scripts/build-cuda.sh
cuda_bin="${C2S_CUDA_TARGET_DIR:-$HOME/.cache/c2s/target-cuda}/release/choice2seq"
cargo build --release --locked --bins
rm -rf gpu
mkdir -p gpu/lib
"$CHOICE2SEQ_BIN" model export-tokenizer models/SmolLM2-135M-Instruct.Q4_1.gguf gpu/tok-smollm2
"$CHOICE2SEQ_BIN" model export-tokenizer models/Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf gpu/tok-qwen
strip -o gpu/choice2seq.stripped "$cuda_bin"
xz -T2 -9 -c gpu/choice2seq.stripped > gpu/choice2seq.xz
rm gpu/choice2seq.stripped
cp -L .tools/cuda/root/lib/libcudart.so.13 gpu/lib/
xz -9 gpu/lib/libcudart.so.13
du -sh gpu gpu/* gpu/lib/*
