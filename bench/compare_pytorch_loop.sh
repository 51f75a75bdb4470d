#!/usr/bin/env bash
# Training throughput against what users would run instead: the same GPT-2
# config, batch and sequence length trained by bench/pytorch_loop.py (plain
# PyTorch, torch.optim.AdamW; naive bf16 = model.to(torch.bfloat16)) and by
# this project's CLI in every mode (default statistics: per-layer stats
# every 5 steps, the 20-step update-lost window). fp32 is compared with the
# fp32 loop, the bf16 modes with the naive bf16 loop, and run with the
# all-bf16 plan as model.to(torch.bfloat16) is (every matrix product in
# bf16, the tied head included).
#   bench/compare_pytorch_loop.sh CONFIG.json [batch=8] [seq=64] [steps=20]
# Runs the loop with the torch of the project's .venv (the LibTorch the CLI
# is built against; PYTHON=... picks another) and a built
# build/app/precision-lab-cli (or PLAB_CLI=...).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
config="$(realpath "$1")"
batch="${2:-8}" seq="${3:-64}" steps="${4:-20}"
python="${PYTHON:-$root/.venv/bin/python}"
cli="${PLAB_CLI:-$root/build/app/precision-lab-cli}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

loop_fp32="$("$python" "$root/bench/pytorch_loop.py" "$config" --dtype fp32 --batch "$batch" --seq "$seq" --steps "$steps")"
loop_bf16="$("$python" "$root/bench/pytorch_loop.py" "$config" --dtype bf16 --batch "$batch" --seq "$seq" --steps "$steps")"
echo "config $config, batch $batch x $seq, $steps steps, $(nproc) cores"
printf '%-14s %14s %18s %8s\n' mode "ours tokens/s" "PyTorch tokens/s" ratio
for mode in fp32 bf16 bf16-nearest bf16-kahan bf16-sr mixed; do
  plan="all-bf16"
  [ "$mode" = fp32 ] && plan="all-fp32"
  cat > "$work/$mode.json" << JSON
{"name": "vs-pytorch-$mode", "model": {"source": "config", "path": "$config", "tokenizer": "bytes"},
 "plan": {"preset": "$plan"}, "mode": "$mode", "steps": $steps, "batch_size": $batch, "seq_len": $seq,
 "eval_every": 0, "device": "cpu"}
JSON
  "$cli" run "$work/$mode.json" --out "$work/$mode" --no-pdf > "$work/$mode.log" 2>&1 ||
    { echo "$mode: run failed"; tail -3 "$work/$mode.log"; continue; }
  # Steps 3.. as the loop counts them (2 warm-up steps left out on both sides),
  # statistics steps included: what a user's run pays.
  ours="$("$python" - "$work/$mode/metrics.jsonl" << 'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
per_token = [1 / r["tokens_per_second"] for r in rows if r["step"] >= 3]  # seconds per token, per step
print(round(len(per_token) / sum(per_token)))
PY
)"
  theirs="$loop_bf16"
  [ "$mode" = fp32 ] && theirs="$loop_fp32"
  printf '%-14s %14s %18s %8s\n' "$mode" "$ours" "$theirs" "$(awk -v a="$ours" -v b="$theirs" 'BEGIN{printf "%.2fx", a/b}')"
done
