#!/usr/bin/env bash
# The GPU path, end to end, on a machine with an NVIDIA GPU, CUDA's nvcc and
# a Python torch package (its LibTorch is what we build against); no Qt and
# no internet needed. Run it whenever such a machine is available and put
# its figures in docs/performance.md.
#   packaging/gpu-check.sh [build-dir]      (default: build-gpu)
# Steps:
#   1. a headless build (core, CLI, benches; no Qt, no tests) with the CUDA kernels;
#   2. bench_kernel_twins: every fused kernel's CUDA twin against its CPU twin, bit for bit
#      (the quantized-moment step's too: 8bit, 4bit, fp8);
#   3. bench_optimizer on 25 M parameters on the GPU: ms/step, GB/s against the
#      device's copy bandwidth, allocator peak of a step;
#   4. a 124 M-parameter GPT-2 (random init) for 50 steps per mode, batch 8 x 1024:
#      tokens/s and the measured step peak from each run's summary.json.
# Exit status: 0 when every step ran and the twins agree, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-gpu}"
work="$build/gpu-check"

python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
  { echo "gpu-check: no CUDA device visible to torch" >&2; exit 1; }
command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
  { echo "gpu-check: nvcc not found (the CUDA kernels need it)" >&2; exit 1; }
export PATH="$PATH:/usr/local/cuda/bin"
prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
arch="$(python3 -c 'import torch; m, n = torch.cuda.get_device_capability(); print(f"{m}{n}")')"
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)

echo "== 1. headless build (LibTorch from $prefix, sm_$arch)"
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DPLAB_BUILD_GUI=OFF -DPLAB_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CUDA_ARCHITECTURES="$arch"
grep -q "PLAB_WITH_CUDA:INTERNAL=ON\|CUDA kernels compiled: ON" "$build/CMakeCache.txt" 2> /dev/null || true
cmake --build "$build" --parallel "$(nproc)" --target precision-lab-cli bench_optimizer bench_kernel_twins
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

status=0
echo "== 2. CUDA twin vs CPU twin"
"$build/bench/bench_kernel_twins" 1000003 20 || status=1

echo "== 3. optimizer bench, 25 M parameters on cuda"
"$build/bench/bench_optimizer" 25000000 20 3 cuda || status=1

echo "== 4. GPT-2 124 M, 50 steps per mode, batch 8 x 1024 on cuda"
mkdir -p "$work"
cat > "$work/gpt2-124m.json" << 'JSON'
{"model_type": "gpt2", "vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12,
 "n_head": 12, "layer_norm_epsilon": 1e-5, "tie_word_embeddings": true}
JSON
printf '%-14s %12s %16s %16s\n' mode tokens/s "state MiB" "step peak MiB"
for mode in fp32 bf16 bf16-nearest bf16-kahan bf16-sr mixed; do
  out="$work/run-$mode"
  rm -rf "$out"
  cat > "$work/$mode.json" << JSON
{"name": "gpu-check-$mode", "model": {"source": "config", "path": "$work/gpt2-124m.json", "tokenizer": "bytes"},
 "mode": "$mode", "steps": 50, "batch_size": 8, "seq_len": 1024, "eval_every": 0, "device": "cuda"}
JSON
  if "$build/app/precision-lab-cli" run "$work/$mode.json" --out "$out" --no-pdf > "$out.log" 2>&1; then
    python3 - "$out/summary.json" "$mode" << 'PY'
import json, sys
s = json.load(open(sys.argv[1]))
r = s.get("result", s)
peak = r.get("step_peak_bytes")
print(f"{sys.argv[2]:<14} {r['mean_tokens_per_second']:12.0f} {r['memory']['total'] / 2**20:16.1f} "
      f"{(peak / 2**20) if peak is not None else float('nan'):16.1f}")
PY
  else
    echo "$mode: run failed (see $out.log)"
    tail -5 "$out.log"
    status=1
  fi
done
exit $status
