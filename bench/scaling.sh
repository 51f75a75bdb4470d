#!/usr/bin/env bash
# Scaling efficiency of data-parallel training from 1 to 2 local processes:
# the same GPT-2 config, global batch, steps and mode trained by
# `precision-lab-cli run` and by `precision-lab-cli run --nproc 2` (Gloo on
# 127.0.0.1, optimizer state sharded), one intra-op thread per process.
#   bench/scaling.sh CONFIG.json [steps=8] [rounds=3]
# Environment: PLAB_CLI (default build/app/precision-lab-cli), BATCH (global
# batch, default 8, even), SEQ (default 128), WARMUP (steps left out at the
# start, default 2), MODES (default "fp32 bf16-kahan"), PLAN (the bf16 modes'
# plan preset, default all-bf16 as in compare_pytorch_loop.sh; fp32 ignores
# it), PYTHON (reads the metrics; default the project's .venv, else python3).
# Throughput of one run: tokens of the global batch over the summed step
# times of steps WARMUP+1.. as rank 0 records them in metrics.jsonl (start-up,
# model load and the final evaluation are outside the step times; the
# default statistics steps are inside, as in a user's run). The 1- and
# 2-process runs of a mode alternate (1,2 then 2,1, ...) so that a drift in
# the machine's load falls on both; the speed-up of a round is its 2-process
# figure over its 1-process figure, and the table gives the median and the
# range over the rounds.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: bench/scaling.sh CONFIG.json [steps=8] [rounds=3]" >&2; exit 2; }
[ -f "$1" ] || { echo "error: no config file $1" >&2; exit 2; }
config="$(realpath "$1")"
steps="${2:-8}" rounds="${3:-3}"
batch="${BATCH:-8}" seq="${SEQ:-128}" warmup="${WARMUP:-2}"
modes="${MODES:-fp32 bf16-kahan}" plan="${PLAN:-all-bf16}"
cli="${PLAB_CLI:-$root/build/app/precision-lab-cli}"
python="${PYTHON:-$root/.venv/bin/python}"
[ -x "$python" ] || python="$(command -v python3 || true)"
if [ ! -x "$cli" ]; then
  echo "error: no precision-lab-cli at $cli: build it first" >&2
  echo "  (cmake --build build --target precision-lab-cli), or set PLAB_CLI=/path/to/precision-lab-cli" >&2
  exit 1
fi
[ -n "$python" ] || { echo "error: no python to read the metrics (set PYTHON=...)" >&2; exit 1; }
[ $((batch % 2)) -eq 0 ] || { echo "error: BATCH=$batch must be even (2 ranks split it)" >&2; exit 2; }
[ "$steps" -gt "$warmup" ] || { echo "error: steps ($steps) must exceed WARMUP ($warmup)" >&2; exit 2; }
[ "$rounds" -ge 1 ] || { echo "error: rounds must be at least 1" >&2; exit 2; }

cores="$(nproc)"  # before OMP_NUM_THREADS=1, which GNU nproc obeys
work="$(mktemp -d "${TMPDIR:-/tmp}/plab-scaling.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# eval_batches 1: the run's one evaluation, after the last step, is outside
# the step times; it only costs wall time.
# One process, one thread: the CLI takes OMP_NUM_THREADS when the config's
# `threads` is 0; the config sets 1 as well, and each run's run_info.json is checked.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

# tokens/s of one run folder (rank 0's step times), after checking that it
# ran on the expected number of processes and intra-op threads.
throughput() {
  "$python" - "$1" "$2" "$warmup" "$3" << 'PY'
import json, sys
folder, nproc, warmup, expected_threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
info = json.load(open(folder + "/run_info.json"))
summary = json.load(open(folder + "/summary.json"))
threads = info.get("intra_op_threads")
world = summary.get("world_size", 1)
if threads != expected_threads or world != nproc:
    sys.exit(f"{folder}: ran with {threads} intra-op threads on {world} processes, not {expected_threads} on {nproc}")
rows = [json.loads(line) for line in open(folder + "/metrics.jsonl")]
seconds_per_token = [1 / r["tokens_per_second"] for r in rows if r["step"] > warmup]
if not seconds_per_token:
    sys.exit(f"{folder}: no step after the {warmup} warm-up steps")
print(f"{len(seconds_per_token) / sum(seconds_per_token):.1f}")
PY
}

# Trains one run; prints its tokens/s. "2t": one process with 2 intra-op
# threads, the control (what the same 2 cores give one process).
run_once() {
  local mode="$1" nproc="$2" round="$3" folder log config="$work/$mode.json" threads=1
  folder="$work/$mode-n$nproc-r$round"
  log="$folder.log"
  if [ "$nproc" = 2t ]; then
    config="$work/$mode-2t.json" nproc=1 threads=2
  fi
  if ! OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads "$cli" run "$config" --nproc "$nproc" --out "$folder" --no-pdf > "$log" 2>&1; then
    echo "error: $mode on $nproc process(es), round $round, failed:" >&2
    tail -5 "$log" >&2
    return 1
  fi
  throughput "$folder" "$nproc" "$threads"
}

echo "config $config (plan $plan): global batch $batch x $seq, $steps steps (steps $((warmup + 1))..$steps timed), $rounds rounds"
echo "$cores cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), one intra-op thread per process (the control: 2)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A figures  # "mode nproc" -> tokens/s of each round, space-separated
for mode in $modes; do
  cat > "$work/$mode.json" << JSON
{"name": "scaling-$mode", "model": {"source": "config", "path": "$config", "tokenizer": "bytes"},
 "plan": {"preset": "$plan"}, "mode": "$mode", "steps": $steps, "batch_size": $batch, "seq_len": $seq,
 "eval_every": 0, "eval_batches": 1, "device": "cpu", "threads": 1}
JSON
  sed 's/"threads": 1}/"threads": 2}/' "$work/$mode.json" > "$work/$mode-2t.json"
done
for ((round = 1; round <= rounds; ++round)); do
  order="1 2 2t"
  [ $((round % 2)) -eq 0 ] && order="2t 2 1"
  for mode in $modes; do
    for nproc in $order; do
      tps="$(run_once "$mode" "$nproc" "$round")"
      figures["$mode $nproc"]+="$tps "
      echo "  round $round  $mode  $nproc process(es): $tps tokens/s  (load average $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
printf '%-12s %-20s %-20s %-20s %-20s %-16s %-20s %s\n' mode "1 process tokens/s" "2 processes" "1 process 2 threads" "speed-up" "efficiency" "2 processes vs 2 threads" "reference"
for mode in $modes; do
  "$python" - "$mode" "${figures["$mode 1"]}" "${figures["$mode 2"]}" "${figures["$mode 2t"]}" << 'PY'
import statistics, sys
mode = sys.argv[1]
one, two, threads = ([float(x) for x in arg.split()] for arg in sys.argv[2:5])
ratios = [b / a for a, b in zip(one, two)]  # per round: the runs measured back to back
versus_threads = [b / t for b, t in zip(two, threads)]
def spread(xs, fmt):
    return f"{fmt(statistics.median(xs))} ({fmt(min(xs))}-{fmt(max(xs))})"
tok = lambda x: f"{x:.0f}"
times = lambda x: f"{x:.2f}x"
print(f"{mode:<12} {spread(one, tok):<20} {spread(two, tok):<20} {spread(threads, tok):<20} "
      f"{spread(ratios, times):<20} {spread([r / 2 for r in ratios], lambda x: f'{100 * x:.0f}%'):<16} "
      f"{spread(versus_threads, times):<20} ideal 2.00x / 100%")
PY
done
echo "(median over $rounds rounds, range in parentheses; speed-up and efficiency per round, 2 processes over 1;"
echo " the control: 2 processes over 1 process with 2 intra-op threads on the same cores)"
