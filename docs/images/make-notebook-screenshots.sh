#!/usr/bin/env bash
# Screenshots of the app on a workspace of ~50 real runs (issue 35): two
# models (the embedded tiny GPT-2 and a tiny Llama built from a config), three
# seeds, an lr sweep and the GEMM formats, made with the CLI, then the real
# window under Xvfb at 1600x1000 and 1280x720: grouped by mode and model, the
# seed groups' bands (loss minus fp32), and the formats comparison.
#   docs/images/make-notebook-screenshots.sh [WORKSPACE] [OUT]
# WORKSPACE is made when it holds no runs (about 50 runs of 80 steps: tens of
# minutes on 2 cores); OUT (default docs/images) gets the PNGs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cli="$root/build/app/precision-lab-cli"
ws="${1:-/tmp/plab-notebook-workspace}"
out="${2:-$root/docs/images}"
steps=80
mkdir -p "$ws" "$out"

if [ -z "$(ls -A "$ws" 2>/dev/null)" ]; then
  llama="$ws/.tiny-llama"
  mkdir -p "$llama"
  cat > "$llama/config.json" <<'JSON'
{"model_type": "llama", "hidden_size": 64, "intermediate_size": 172, "num_hidden_layers": 2,
 "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 260, "max_position_embeddings": 128,
 "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": false}
JSON
  base="$("$cli" default-config)"
  python3 - "$ws" "$llama/config.json" "$base" <<'PY'
import json, sys
ws, llama, base = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
llama_base = dict(base, name="tiny-llama", model={"source": "config", "path": llama, "revision": "main", "tokenizer": "bytes"})
llama_base["adamw"] = dict(base["adamw"], lr=1e-3)
json.dump({"base": llama_base, "sweep": {"mode": ["fp32", "bf16", "bf16-kahan", "bf16-sr"], "seed": [1, 2, 3]}},
          open(ws + "/.llama-sweep.json", "w"), indent=1)
json.dump({"base": dict(base, name="gpt2-lr"), "sweep": {"adamw.lr": [1e-4, 2e-4], "mode": ["fp32", "bf16-sr"],
           "seed": [1, 2, 3]}}, open(ws + "/.lr-sweep.json", "w"), indent=1)
PY
  "$cli" run --default --seeds 1-3 --steps "$steps" --out "$ws/default" --no-pdf
  "$cli" run "$ws/.llama-sweep.json" --steps "$steps" --out "$ws/llama" --no-pdf
  "$cli" run "$ws/.lr-sweep.json" --steps "$steps" --out "$ws/lr" --no-pdf
  "$cli" run --default-formats --steps "$steps" --out "$ws/formats" --no-pdf
fi

home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" QT_QPA_PLATFORM=xcb \
  PLAB_NOTEBOOK_WORKSPACE="$ws" PLAB_SCREENSHOT_DIR="$out" \
  xvfb-run -a -s '-screen 0 1600x1000x24' "$root/build/tests/plab_ui_tests" test_notebook screenshotsOfARealWorkspace
ls -la "$out"/grouped-mode-model-*.png "$out"/seed-bands-*.png "$out"/compare-formats-*.png
