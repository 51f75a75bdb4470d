#!/usr/bin/env bash
# The quantized moment stores' optimizer step beside torchao's AdamW8bit,
# AdamW4bit and AdamWFp8 on the CPU, same shapes and thread count,
# interleaved: ROUNDS times, this project's rows
# (build/bench/bench_optimizer: the "moments" rows, and the
# fused bf16-sr step with its default bf16-sr moments) then torchao's
# (bench/torchao_optimizer_step.py, torch.compile'd as users run it), so a
# load that comes and goes moves both alike.
#   bench/compare_torchao_states.sh [elements=4000000] [steps=20] [threads=1] [rounds=2]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
elements="${1:-4000000}" steps="${2:-20}" threads="${3:-1}" rounds="${4:-2}"
python="${PYTHON:-$root/.venv/bin/python}"
bench="${PLAB_BENCH:-$root/build/bench/bench_optimizer}"
for round in $(seq 1 "$rounds"); do
  echo "== round $round: this project"
  "$bench" "$elements" "$steps" 3 cpu "$threads" "moments" | grep -v "^LibTorch"
  "$bench" "$elements" "$steps" 3 cpu "$threads" "bf16-sr fused" | grep -E "^bf16-sr fused +[0-9]"
  echo "== round $round: torchao"
  "$python" "$root/bench/torchao_optimizer_step.py" "$elements" "$steps" 3 "$threads" 2>&1 |
    grep "^torchao AdamW"
done
