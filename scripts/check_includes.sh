#!/usr/bin/env bash
# Checks who may include whom (docs/architecture.md, "Parts"):
#   cli/                     nothing of daemon/
#   lib/ (the core)          nothing of daemon/, cli/ or the client library
#   lib/client/ and its      nothing of daemon/ or cli/
#   headers (peerbloom/client/)
# Prints each offending line as FILE:LINE: ... and exits 1; exits 0 when the graph is clean.
# Usage: scripts/check_includes.sh [SOURCE_DIR]   (default: the repository holding this script)
set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
failed=0

# check PART PATTERN FILES...: every #include line of FILES naming PATTERN is a violation.
check() {
  local part=$1 pattern=$2
  shift 2
  [ $# -gt 0 ] || return 0
  local hits
  hits=$(grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"](\.\./)*(${pattern})" "$@" || true)
  if [ -n "$hits" ]; then
    while IFS= read -r hit; do
      local where included
      where=$(cut -d: -f1,2 <<<"$hit")
      included=$(sed -E 's/^[^:]*:[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]*).*/\1/' \
                 <<<"$hit")
      echo "${where}: ${part} may not include '${included}'"
    done <<<"$hits"
    failed=1
  fi
}

sources() { find "$@" -type f \( -name '*.h' -o -name '*.cc' \) 2>/dev/null | sort; }

mapfile -t cli_files < <(sources cli)
mapfile -t core_files < <(sources lib | grep -vE '^lib/(client/|include/peerbloom/client/)')
mapfile -t client_files < <(sources lib/client lib/include/peerbloom/client)

if [ ${#core_files[@]} -eq 0 ]; then
  echo "check_includes: no sources under '$root/lib'" >&2
  exit 2
fi

check "cli/" 'daemon/' "${cli_files[@]}"
check "the core library (lib/)" 'daemon/|cli/|peerbloom/client/|lib/client/' "${core_files[@]}"
check "the client library (lib/client/)" 'daemon/|cli/' "${client_files[@]}"

if [ $failed -ne 0 ]; then
  echo "check_includes: include graph violated (see docs/architecture.md)" >&2
  exit 1
fi
echo "check_includes: ${#cli_files[@]} cli, ${#core_files[@]} core and ${#client_files[@]} client files clean"
