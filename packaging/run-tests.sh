#!/usr/bin/env bash
# Installs and builds as setup-debian.sh does, the tests too, then runs every test.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PLAB_BUILD_DIR:-$root/build}"
start=$(date +%s)
bash "$root/packaging/setup-debian.sh" --build-all
echo "setup + build: $(( $(date +%s) - start )) s"
cd "$build"
# ctest runs one test per core: one LibTorch thread each (OMP_NUM_THREADS, as
# torchrun sets it), so two OpenMP teams never spin against each other.
OMP_NUM_THREADS=1 QT_QPA_PLATFORM=offscreen ctest --output-on-failure --parallel "$(nproc)" --timeout 900
echo "total: $(( $(date +%s) - start )) s"
