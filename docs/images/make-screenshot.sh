#!/usr/bin/env bash
# Refreshes docs/images/default-comparison.png, the README's screenshot: the finished default
# comparison (precision-lab-cli run --default) as the desktop app shows it.
#
#   docs/images/make-screenshot.sh [OUTPUT.png]
#
# Needs the app and the CLI built (ninja -C build precision-lab precision-lab-cli) and, from Debian:
# xvfb (xvfb-run), imagemagick (import) and xdotool. Nothing outside a temporary folder is written
# except OUTPUT.png: the runs go into a throwaway workspace and the app's settings into a throwaway
# HOME, so your own workspace and settings are not touched. Takes a few minutes (the six runs train).
# Environment: PLAB_BUILD_DIR (default build/), SCREEN (default 1600x1000, the app's default size),
# PLAB_DEFAULT_RUNS (a finished `run --default` output folder to copy instead of training).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${PLAB_BUILD_DIR:-$root/build}"
out="$(realpath -m "${1:-$root/docs/images/default-comparison.png}")"
screen="${SCREEN:-1600x1000}"
for tool in xvfb-run import xdotool; do
  command -v "$tool" > /dev/null || { echo "missing $tool: apt-get install xvfb imagemagick xdotool" >&2; exit 1; }
done
for bin in precision-lab precision-lab-cli; do
  [ -x "$build/app/$bin" ] || { echo "missing $build/app/$bin: build it first" >&2; exit 1; }
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
workspace="$tmp/workspace"
mkdir -p "$workspace" "$tmp/home"

# 1. The default comparison, trained by the CLI into the throwaway workspace, or copied from
#    PLAB_DEFAULT_RUNS, the output folder of an earlier `precision-lab-cli run --default` of this code.
if [ -n "${PLAB_DEFAULT_RUNS:-}" ]; then
  cp -r "$PLAB_DEFAULT_RUNS" "$workspace/default"
else
  "$build/app/precision-lab-cli" run --default --out "$workspace/default" --no-pdf > "$tmp/cli.log" 2>&1 || {
    cat "$tmp/cli.log" >&2; exit 1; }
fi

# 2. The app on that workspace, in a virtual X server. A fresh HOME has no stored workspace, so the
#    app takes $PLAB_WORKSPACE. Run > Compare all modes (Ctrl+Shift+R) then finds every mode already
#    run with this exact config and asks whether to run only the missing ones (the default button,
#    Return): none is missing, so nothing trains, and the loss chart switches to "Loss minus fp32",
#    as the welcome panel's button does.
cat > "$tmp/shoot.sh" << 'EOF'
set -euo pipefail
"$APP" > "$TMP/app.log" 2>&1 &
app=$!
window="$(xdotool search --sync --onlyvisible --name 'Precision Lab' | head -1)"
sleep 5                                  # the workspace's runs are read when the window opens
xdotool windowactivate --sync "$window" 2> /dev/null || xdotool windowfocus --sync "$window"
xdotool key --window "$window" ctrl+shift+r
sleep 3
xdotool key Return                       # "Run only the missing modes": there are none
sleep 5                                  # charts redrawn
import -window root "$OUT"
kill "$app"
wait "$app" 2> /dev/null || true
EOF
HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share" \
  PLAB_WORKSPACE="$workspace" APP="$build/app/precision-lab" TMP="$tmp" OUT="$out" \
  xvfb-run -a -s "-screen 0 ${screen}x24" bash "$tmp/shoot.sh"
grep -h "queued a comparison" "$tmp/app.log" || true
echo "wrote $out"
