#!/usr/bin/env bash
# Training throughput against what users would run instead: the same GPT-2
# config, batch and sequence length trained by resources/bench/pytorch_loop.py
# (plain PyTorch; naive bf16 = model.to(torch.bfloat16)) and by this
# project's CLI in every mode (default statistics: per-layer stats every 5
# steps, the 20-step update-lost window). Each mode is compared with the
# loops that do its job:
#   fp32          torch.optim.AdamW on fp32 (its default for-loop form and fused=True)
#   bf16 modes    the naive bf16 loop (torch.optim.AdamW, for-loop and fused=True)
#   bf16-kahan    also optimi.AdamW(kahan_sum=True) on bf16 weights
#   bf16-sr       also torchao's AdamW(bf16_stochastic_round=True)
# The bf16 modes run with the all-bf16 plan, as model.to(torch.bfloat16) is
# (every matrix product in bf16, the tied head included). Interleaved: each
# mode's run and its loops back to back, the loops first for every other
# mode, so that the machine's load touches both sides alike.
#   bench/compare_pytorch_loop.sh CONFIG.json [batch=8] [seq=64] [steps=20]
#   (bench/configs/gpt2-16m.json and gpt2-124m.json are the issue's shapes)
# Runs the loop with the torch of the project's .venv (the LibTorch the CLI
# is built against; PYTHON=... picks another) and a built
# build/app/precision-lab-cli (or PLAB_CLI=...). MODES="fp32 bf16" picks modes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
config="$(realpath "$1")"
batch="${2:-8}" seq="${3:-64}" steps="${4:-20}"
python="${PYTHON:-$root/.venv/bin/python}"
cli="${PLAB_CLI:-$root/build/app/precision-lab-cli}"
modes="${MODES:-fp32 bf16 bf16-nearest bf16-kahan bf16-sr mixed}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

loop() {  # dtype optimizer -> tokens/s
  "$python" -W ignore "$root/resources/bench/pytorch_loop.py" "$config" --dtype "$1" --optimizer "$2" \
    --batch "$batch" --seq "$seq" --steps "$steps" 2> "$work/loop.err" || { echo 0; return; }
}

ours() {  # mode -> tokens/s, or nothing when the run failed
  local mode="$1" plan="all-bf16"
  [ "$mode" = fp32 ] && plan="all-fp32"
  cat > "$work/$mode.json" << JSON
{"name": "vs-pytorch-$mode", "model": {"source": "config", "path": "$config", "tokenizer": "bytes"},
 "plan": {"preset": "$plan"}, "mode": "$mode", "steps": $steps, "batch_size": $batch, "seq_len": $seq,
 "eval_every": 0, "device": "cpu"}
JSON
  "$cli" run "$work/$mode.json" --out "$work/$mode" --no-pdf > "$work/$mode.log" 2>&1 || return 0
  # Steps 3.. as the loop counts them (2 warm-up steps left out on both sides),
  # statistics steps included: what a user's run pays.
  "$python" - "$work/$mode/metrics.jsonl" << 'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
per_token = [1 / r["tokens_per_second"] for r in rows if r["step"] >= 3]  # seconds per token, per step
print(round(len(per_token) / sum(per_token)))
PY
}

echo "config $config, batch $batch x $seq, $steps steps, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %12s  %s\n' mode "ours tok/s" "PyTorch loops: tokens/s (ours / theirs)"
i=0
for mode in $modes; do
  dtype=bf16
  [ "$mode" = fp32 ] && dtype=fp32
  optimizers="adamw adamw-fused"
  [ "$mode" = bf16-kahan ] && optimizers="$optimizers optimi-kahan"
  [ "$mode" = bf16-sr ] && optimizers="$optimizers torchao-sr"
  theirs=()
  run_loops() { for o in $optimizers; do theirs+=("$o $(loop "$dtype" "$o")"); done; }
  if [ $((i % 2)) -eq 1 ]; then run_loops; fi
  mine="$(ours "$mode")"
  if [ $((i % 2)) -eq 0 ]; then run_loops; fi
  i=$((i + 1))
  if [ -z "$mine" ]; then
    echo "$mode: run failed"; tail -3 "$work/$mode.log"; continue
  fi
  line=""
  for t in "${theirs[@]}"; do
    set -- $t
    line="$line  $dtype $1 $2 ($(awk -v a="$mine" -v b="$2" 'BEGIN{if (b > 0) printf "%.2fx", a/b; else printf "n/a"}'))"
  done
  printf '%-14s %12s %s\n' "$mode" "$mine" "$line"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
