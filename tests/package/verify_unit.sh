#!/usr/bin/env bash
# `systemd-analyze verify` on configs/peerbloomd.service, with its ExecStart pointing at the
# built peerbloomd (the installed path may not exist here). Passes when systemd has nothing
# to say: a misspelled directive is only a warning to systemd, so any output fails the test.
# Man pages are checked by the package test, where they are installed.
# Usage: verify_unit.sh SOURCE_DIR PEERBLOOMD_BINARY
set -euo pipefail
src=$1 bin=$2
if ! command -v systemd-analyze >/dev/null; then
  echo "skipped: systemd-analyze is not installed (Debian package systemd)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed -e "s#/usr/bin/peerbloomd#$bin#g" "$src/configs/peerbloomd.service" >"$dir/peerbloomd.service"
if ! out=$(systemd-analyze verify --man=no "$dir/peerbloomd.service" 2>&1) || [[ -n $out ]]; then
  echo "systemd-analyze verify: $out"
  exit 1
fi
grep -qx 'Type=notify' "$dir/peerbloomd.service"
grep -q '^WatchdogSec=' "$dir/peerbloomd.service"
echo "configs/peerbloomd.service verifies"
