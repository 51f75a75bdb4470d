#!/usr/bin/env bash
# Refreshes docs/images/advisor-moment-stores.png and report-moment-error.png (docs/app.md): the
# advisor dialog's *Moment stores* tab after a short advice, and the page of an exported PDF with the
# moment-error maps, both from the real app in a virtual X server at 1280x800.
#
#   docs/images/make-moment-screenshots.sh [OUT_DIR]
#
# Needs the app and the CLI built (ninja -C build precision-lab precision-lab-cli), python3 and, from
# Debian: xvfb (xvfb-run), imagemagick (import, convert), xdotool and poppler-utils (pdftoppm). Nothing
# outside a temporary folder is written except the two PNGs: the runs go into a throwaway workspace
# and the app's settings into a throwaway HOME. About a minute (six runs of 100 steps, then an advice
# of 8 steps of batch 2 x 16 over three seeds). The clicks are at the places the dialog's tab bar and
# the export button have at 1280x800 with these settings (training on CPU is deterministic, so the
# advice's text, and with it the tab bar's height, comes out the same).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${PLAB_BUILD_DIR:-$root/build}"
out="$(realpath -m "${1:-$root/docs/images}")"
for tool in xvfb-run import convert xdotool pdftoppm python3; do
  command -v "$tool" > /dev/null || {
    echo "missing $tool: apt-get install xvfb imagemagick xdotool poppler-utils python3" >&2; exit 1; }
done
for bin in precision-lab precision-lab-cli; do
  [ -x "$build/app/$bin" ] || { echo "missing $build/app/$bin: build it first" >&2; exit 1; }
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
workspace="$tmp/workspace"
mkdir -p "$workspace" "$tmp/home" "$tmp/export" "$out"

# 1. Runs with every moment store (the states experiment, short), for the PDF's maps; and a run
#    config small enough for a quick advice, loaded into the app below.
OMP_NUM_THREADS=1 QT_QPA_PLATFORM=offscreen "$build/app/precision-lab-cli" run --default-states --steps 100 \
  --out "$workspace/states" --no-pdf > "$tmp/cli.log" 2>&1 || { cat "$tmp/cli.log" >&2; exit 1; }
"$build/app/precision-lab-cli" default-config > "$tmp/base.json"
python3 - "$tmp/base.json" "$tmp/tiny.json" << 'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(name="tiny-advice", batch_size=2, seq_len=16, steps=8, warmup_steps=0, eval_every=0,
         eval_batches=1, update_window=2, layer_stats_every=1)
json.dump(c, open(sys.argv[2], "w"), indent=1)
EOF

# 2. The app: load the small config (File > Load config, Ctrl+L), open Run > Suggest a plan…, Start,
#    show the Moment stores tab; then Escape and Export report… into $tmp/export.
cat > "$tmp/shoot.sh" << 'EOF'
set -euo pipefail
"$APP" > "$TMP/app.log" 2>&1 &
app=$!
window="$(xdotool search --sync --onlyvisible --name 'Precision Lab' | head -1)"
sleep 6                                   # the workspace's runs are read when the window opens
xdotool windowactivate --sync "$window" 2> /dev/null || xdotool windowfocus --sync "$window"
xdotool key ctrl+l
sleep 2
xdotool key ctrl+a
xdotool type --delay 30 "$TMP/tiny.json"
xdotool key Return
sleep 3
xdotool mousemove 56 8 click 1            # the Run menu
sleep 1
xdotool mousemove 119 95 click 1          # Suggest a plan…
sleep 3
dialog="$(xdotool search --name 'Suggest a plan' | head -1)"
xdotool mousemove 180 84 click 1          # Start
sleep 30                                  # a few seconds of training, with room for a loaded machine
xdotool mousemove 289 435 click 1         # the Moment stores tab
sleep 2
import -window "$dialog" "$OUT/advisor-moment-stores.png"
xdotool key Escape
sleep 1
xdotool mousemove 393 727 click 1         # Export report…
sleep 2
xdotool key ctrl+a
xdotool type --delay 30 "$TMP/export"
xdotool key Return
sleep 40                                  # charts drawn and written
kill "$app"
wait "$app" 2> /dev/null || true
EOF
HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share" \
  PLAB_WORKSPACE="$workspace" APP="$build/app/precision-lab" TMP="$tmp" OUT="$out" OMP_NUM_THREADS=1 \
  xvfb-run -a -s "-screen 0 1280x800x24" bash "$tmp/shoot.sh"

# 3. The PDF's page with the moment maps (page 4 of the six runs' report), its note and first two rows.
pdf="$(ls "$tmp"/export/*/report.pdf)"
pdftoppm -r 110 -f 4 -l 4 -png "$pdf" "$tmp/page"
convert "$(ls "$tmp"/page*.png)" -crop 910x650+0+30 +repage "$out/report-moment-error.png"
echo "wrote $out/advisor-moment-stores.png and $out/report-moment-error.png"
