#!/usr/bin/env bash
# Checks who may include whom (docs/architecture.md, "Parts"):
#   cli/                     nothing of daemon/
#   lib/ (the core)          nothing of daemon/, cli/ or the client library
#   lib/client/ and its      nothing of daemon/ or cli/
#   headers (peerbloom/client/)
# and between the daemon's rooms (daemon/*/README.md; docs/architecture.md, "The daemon's rooms"):
#   daemon/store/            of the other rooms only config/ and observe/log_limiter.h (the
#                            node's state and its files)
#   daemon/transport/        of the other rooms only observe/log_limiter.h
#   daemon/config/           no other room (a leaf: what the config file says, checked)
#   daemon/digests/          of the other rooms only config/ and observe/log_limiter.h
#   daemon/feeds/            of the other rooms only config/, store/, observe/log_limiter.h and
#                            observe/route_outcomes.h: never control/, relay/, digests/,
#                            transport/ or loop/
#   daemon/relay/            of the other rooms only config/, store/, transport/ and
#                            digests/http_client.h: never control/, feeds/, observe/ or loop/
#   daemon/control/          of the other rooms only config/, loop/clock.h, observe/, relay/, store/:
#                            the feeds and the rest reach it through DaemonParts
#   daemon/ outside loop/    of loop/ only clock.h (Daemon is the loop's)
#   daemon/ outside observe/ nothing of observe/registry/ (the renderers' tables)
#   daemon/ outside loop/,   neither renderer (observe/stats_report.h, observe/metrics_report.h)
#   observe/ and
#   control/control_ops.*
# Prints each offending line as FILE:LINE: ... and exits 1; exits 0 when the graph is clean.
# Usage: scripts/check_includes.sh [SOURCE_DIR]   (default: the repository holding this script)
set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
failed=0

# report PART HITS: each grep hit (FILE:LINE:#include ...) as "FILE:LINE: PART may not include
# 'X'"; any hit fails the check.
report() {
  local part=$1 hits=$2
  [ -n "$hits" ] || return 0
  while IFS= read -r hit; do
    local where included
    where=$(cut -d: -f1,2 <<<"$hit")
    included=$(sed -E 's/^[^:]*:[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]*).*/\1/' \
               <<<"$hit")
    echo "${where}: ${part} may not include '${included}'"
  done <<<"$hits"
  failed=1
}

# check PART PATTERN FILES...: every #include line of FILES naming PATTERN is a violation.
check() {
  local part=$1 pattern=$2
  shift 2
  [ $# -gt 0 ] || return 0
  local hits
  hits=$(grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"](\.\./)*(${pattern})" "$@" || true)
  report "$part" "$hits"
}

# check_only PART SCOPE ALLOWED FILES...: every #include line of FILES naming SCOPE but not
# ALLOWED is a violation.
check_only() {
  local part=$1 scope=$2 allowed=$3
  shift 3
  [ $# -gt 0 ] || return 0
  local include='[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](\.\./)*'
  local hits
  hits=$(grep -HnE "^${include}(${scope})" "$@" | grep -vE "^[^:]*:[0-9]+:${include}(${allowed})" ||
         true)
  report "$part" "$hits"
}

sources() { find "$@" -type f \( -name '*.h' -o -name '*.cc' \) 2>/dev/null | sort; }

mapfile -t cli_files < <(sources cli)
mapfile -t core_files < <(sources lib | grep -vE '^lib/(client/|include/peerbloom/client/)')
mapfile -t client_files < <(sources lib/client lib/include/peerbloom/client)
mapfile -t daemon_files < <(sources daemon)
room() { sources "daemon/$1"; }

if [ ${#core_files[@]} -eq 0 ]; then
  echo "check_includes: no sources under '$root/lib'" >&2
  exit 2
fi

check "cli/" 'daemon/' "${cli_files[@]}"
check "the core library (lib/)" 'daemon/|cli/|peerbloom/client/|lib/client/' "${core_files[@]}"
check "the client library (lib/client/)" 'daemon/|cli/' "${client_files[@]}"

# Between the daemon's rooms.
rooms_checked=0
check_room() {
  local name=$1 allowed=$2 files
  mapfile -t files < <(room "$name")
  if [ ${#files[@]} -eq 0 ]; then
    echo "check_includes: no sources under '$root/daemon/$name' (a room renamed?)" >&2
    exit 2
  fi
  check_only "daemon/$name/" 'daemon/' "daemon/${name}/|${allowed}" "${files[@]}"
  rooms_checked=$((rooms_checked + 1))
}
check_room store 'daemon/config/|daemon/observe/log_limiter\.h'
check_room transport 'daemon/observe/log_limiter\.h'
check_room config '$^'
check_room digests 'daemon/config/|daemon/observe/log_limiter\.h'
check_room feeds 'daemon/config/|daemon/store/|daemon/observe/(log_limiter|route_outcomes)\.h'
check_room relay 'daemon/config/|daemon/store/|daemon/transport/|daemon/digests/http_client\.h'
check_room control 'daemon/config/|daemon/loop/clock\.h|daemon/observe/|daemon/relay/|daemon/store/'
mapfile -t outside_loop < <(printf '%s\n' "${daemon_files[@]}" | grep -v '^daemon/loop/')
check_only "daemon/ outside loop/" 'daemon/loop/' 'daemon/loop/clock\.h' \
  "${outside_loop[@]}"
mapfile -t outside_observe < <(printf '%s\n' "${daemon_files[@]}" | grep -v '^daemon/observe/')
check "daemon/ outside observe/" 'daemon/observe/registry/' "${outside_observe[@]}"
mapfile -t not_renderers_readers < <(printf '%s\n' "${daemon_files[@]}" |
  grep -vE '^daemon/(loop|observe)/|^daemon/control/control_ops\.')
check "daemon/ outside loop/, observe/ and control_ops" \
  'daemon/observe/(stats_report|metrics_report)\.h' "${not_renderers_readers[@]}"

if [ $failed -ne 0 ]; then
  echo "check_includes: include graph violated (see docs/architecture.md)" >&2
  exit 1
fi
echo "check_includes: ${#cli_files[@]} cli, ${#core_files[@]} core, ${#client_files[@]} client and" \
  "${#daemon_files[@]} daemon files (${rooms_checked} rooms) clean"
