#!/usr/bin/env bash
# One command from a fresh Debian 12 or 13 machine to a running Precision Lab:
# installs every Debian package with apt-get and the Python packages into a
# project-local virtual environment (.venv: torch, whose LibTorch the C++
# code builds against, and the reference libraries the tests compare with),
# builds the app and the CLI, then launches the desktop app (or, without a
# display, the CLI on the embedded default run).
# Environment: PLAB_LIBTORCH=<folder> builds against another LibTorch 2.x;
# PLAB_TORCH_PIP_ARGS adds pip arguments for torch (e.g. another index);
# PLAB_PYTHON_BIN is the Python that makes .venv (default python3).
#   packaging/setup-debian.sh              install, build, launch
#   packaging/setup-debian.sh --build-only install and build
#   packaging/setup-debian.sh --build-all  install and build every target:
#                                          the tests too (run-tests.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PLAB_BUILD_DIR:-$root/build}"
launch=1
# The app and the CLI, and what they need: no test, reference probe, fuzz
# replay or bench (run-tests.sh builds those).
targets=(--target precision-lab precision-lab-cli)
case "${1:-}" in
  --build-only) launch=0 ;;
  --build-all) launch=0 targets=() ;;
esac

sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"

packages=(
  build-essential cmake ninja-build ccache pkg-config dpkg-dev
  nlohmann-json3-dev libcurl4-openssl-dev libutf8proc-dev libonig-dev
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libgl-dev
  xvfb xauth fonts-dejavu-core python3 python3-venv python3-pip
  libgloo-dev poppler-utils
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

# The virtual environment: torch (LibTorch 2.x) and the reference libraries.
venv="$root/.venv"
[ -x "$venv/bin/python" ] || "${PLAB_PYTHON_BIN:-python3}" -m venv "$venv"
# shellcheck disable=SC2086  # PLAB_TORCH_PIP_ARGS is a list of pip arguments
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$root/packaging/requirements.txt" \
  ${PLAB_TORCH_PIP_ARGS:-}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
torch_cuda="$("$venv/bin/python" -c 'import torch; print(torch.version.cuda or "")')"
cuda_args=()
if [ -n "$torch_cuda" ] && [ -z "${PLAB_LIBTORCH:-}" ]; then
  command -v nvcc > /dev/null || {
    echo "torch $torch_cuda has CUDA but nvcc is not on PATH: install the CUDA toolkit (its nvcc builds the" >&2
    echo "fused optimizer kernels), or install a CPU torch: PLAB_TORCH_PIP_ARGS='--index-url <a CPU wheel index>'" >&2
    exit 1
  }
  arch="$("$venv/bin/python" -c 'import torch
if torch.cuda.is_available():
    m, n = torch.cuda.get_device_capability(); print(f"{m}{n}")' 2> /dev/null || true)"
  [ -n "$arch" ] && cuda_args=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
fi

export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/precision-lab-ccache}"
export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
# Relative paths in cache keys; note the precompiled torch header still ties
# most entries to one build folder, so ccache mainly speeds rebuilds in place.
export CCACHE_BASEDIR="$root"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPLAB_PYTHON="$venv/bin/python" \
  -DPLAB_LIBTORCH="${PLAB_LIBTORCH:-}" "${cuda_args[@]}"
cmake --build "$build" --parallel "$(nproc)" "${targets[@]}"
"$build/app/precision-lab-cli" --version

[ "$launch" -eq 1 ] || exit 0
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$build/app/precision-lab"
else
  echo "No display: running the CLI on the embedded default configuration"
  exec "$build/app/precision-lab-cli" run --default --out "$root/out/default-run"
fi
