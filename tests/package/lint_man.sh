#!/usr/bin/env bash
# The generated man pages format without a warning from groff.
# Usage: lint_man.sh PAGE...
set -euo pipefail
if ! command -v groff >/dev/null; then
  echo "skipped: groff is not installed"
  exit 77
fi
for page in "$@"; do
  out=$(groff -man -ww -z "$page" 2>&1)
  if [[ -n $out ]]; then
    echo "$page: $out"
    exit 1
  fi
  grep -q '^\.SH NAME' "$page"
done
echo "man pages format cleanly: $*"
