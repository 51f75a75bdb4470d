#!/usr/bin/env bash
# Unpacks QCustomPlot 2.1 from Debian's source package into
# third_party/qcustomplot. Debian's binary package targets Qt 5 only; we
# compile the same sources against Qt 6. Nothing here is committed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/third_party/qcustomplot"
[ -f "$dest/qcustomplot.cpp" ] && [ -f "$dest/qcustomplot.h" ] && exit 0

sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"

# apt-get source needs a deb-src entry for bookworm main.
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "Adding a deb-src entry for Debian bookworm main"
  $sudo_cmd tee /etc/apt/sources.list.d/precision-lab-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  $sudo_cmd apt-get update -q
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source -q --download-only qcustomplot >/dev/null 2>&1 \
  || { $sudo_cmd apt-get update -q >/dev/null && apt-get source -q --download-only qcustomplot; })
(cd "$work" && dpkg-source -q -x qcustomplot_*.dsc src >/dev/null)
mkdir -p "$dest"
cp "$work/src/qcustomplot.h" "$work/src/qcustomplot.cpp" "$dest/"
echo "QCustomPlot sources in $dest"
