#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a running Precision Lab:
# installs every package with apt-get, builds, then launches the desktop app
# (or, without a display, the CLI on the embedded default run).
#   packaging/setup-debian.sh              install, build, launch
#   packaging/setup-debian.sh --build-only install and build
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PLAB_BUILD_DIR:-$root/build}"
launch=1
[ "${1:-}" = "--build-only" ] && launch=0

sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"

# libopenblas0-pthread: LibTorch's fp32 matrix products go through libblas.so.3;
# without it Debian's reference BLAS serves them, ~28x slower on a GPT-2 forward.
packages=(
  build-essential cmake ninja-build ccache pkg-config dpkg-dev
  libtorch-dev libopenblas0-pthread nlohmann-json3-dev libcurl4-openssl-dev libutf8proc-dev
  qt6-base-dev qt6-base-dev-tools libqt6svg6-dev libgl-dev
  xvfb xauth fonts-dejavu-core python3
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

bash "$root/packaging/fetch-qcustomplot.sh"

export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/precision-lab-ccache}"
export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
# Relative paths in cache keys; note the precompiled torch header still ties
# most entries to one build folder, so ccache mainly speeds rebuilds in place.
export CCACHE_BASEDIR="$root"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" --parallel "$(nproc)"

[ "$launch" -eq 1 ] || exit 0
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$build/app/precision-lab"
else
  echo "No display: running the CLI on the embedded default configuration"
  exec "$build/app/precision-lab-cli" run --default --out "$root/out/default-run"
fi
