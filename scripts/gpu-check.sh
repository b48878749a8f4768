#!/usr/bin/env bash
# The GPU check (issue 9): our mistral.rs CUDA engine against a plain transformers loop, on
# random-weight models of two shapes created on the GPU host itself (SmolLM2-135M and an
# 8B-class Qwen3), on the same fixed panel of real requests and the same token ids. Prints, per
# shape, the agreement of the option distributions (max and mean |Δp|, argmax agreement) and
# requests/s of both, and writes them to $OUT (or /tmp/gpu-check).
#
# Runs on a machine with one GPU, its own CUDA/PyTorch/transformers, no Rust and no network,
# from a copy of this repository that carries gpu/ (made here by scripts/pack-gpu-check.sh:
# the compressed cuda binary and the two tokenizers). About 6 minutes on one H200.
#
#   bash scripts/gpu-check.sh                  # on the GPU host
#   bash scripts/gpu-check.sh --cpu-dry-run    # here: tiny shapes, CPU binary, CPU torch
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${OUT:-/tmp/gpu-check}"
mkdir -p "$out"
work="${C2S_GPU_WORK:-/tmp/c2s-gpu}"
mkdir -p "$work"
python="${C2S_PYTHON:-python3}"
if [ "${1:-}" = "--cpu-dry-run" ]; then
  device=cpu
  shapes="tiny-llama:gpu/tok-smollm2 tiny-qwen3:gpu/tok-qwen"
  bin="${CHOICE2SEQ_BIN:?set CHOICE2SEQ_BIN to a CPU build}"
  per_domain=4
  mode=native
else
  device=cuda
  shapes="smollm2-135m:gpu/tok-smollm2 qwen3-8b:gpu/tok-qwen"
  bin="$work/choice2seq"
  xz -dc gpu/choice2seq.xz > "$bin"
  chmod +x "$bin"
  mkdir -p "$work/lib"
  xz -dc gpu/lib/libcudart.so.13.xz > "$work/lib/libcudart.so.13"
  # cuBLAS/cuBLASLt/cuRAND 13.x from the host: PyTorch's nvidia wheels or the CUDA toolkit;
  # libcuda.so.1 from the driver.
  nv="$("$python" -c 'import glob, os, nvidia; print(":".join(sorted({os.path.dirname(f) for p in nvidia.__path__ for f in glob.glob(p + "/**/lib*.so*", recursive=True)})))' 2>/dev/null || true)"
  export LD_LIBRARY_PATH="$work/lib:${nv}:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  if ldd "$bin" | grep "not found"; then
    echo "the cuda binary's libraries above are missing on this host (it needs CUDA 13.x libraries)" >&2
    exit 1
  fi
  per_domain=24
  mode=native
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
fi
"$bin" --version | tee "$out/versions.txt"
"$python" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)' | tee -a "$out/versions.txt"
for entry in $shapes; do
  shape="${entry%%:*}"
  tok="${entry#*:}"
  model="$work/$shape"
  echo "== $shape"
  template=()
  case "$shape" in
    *qwen3*) template=(--chat-template model/tests/fixtures/chat_templates/qwen3.jinja) ;;
  esac
  if [ ! -f "$model/config.json" ]; then
    "$python" scripts/gpu/make_model.py --shape "$shape" --tokenizer "$tok" --out "$model" --device "$device" "${template[@]}" | tee "$out/$shape-model.json"
  fi
  # Our engine: mistral.rs, native mode (weights as stored in bf16, PagedAttention on CUDA),
  # batched; two rounds over the panel, the second is the measured one. Its prefix cache is
  # off, so both sides compute every prompt cold (reference.py has no cache either).
  "$bin" bench engine --model "$model" --engine mistralrs --mode "$mode" --prefix-cache 0 \
    --per-domain "$per_domain" --batch 32 --rounds 2 --scores-out "$out/$shape-mistralrs.jsonl" \
    2>&1 | tee "$out/$shape-mistralrs.txt"
  "$python" scripts/gpu/reference.py --model "$model" --scores "$out/$shape-mistralrs.jsonl" \
    --device "$device" --batch 16 --out "$out/$shape-agreement.json"
  rm -f "$out/$shape-mistralrs.jsonl"
done
echo "figures: $out/*-mistralrs.txt (engine requests/s) and $out/*-agreement.json (agreement, transformers requests/s)"
