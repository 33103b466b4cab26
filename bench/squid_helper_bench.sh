#!/usr/bin/env bash
# `peerbloom squid-helper` as Squid drives it: median added latency per lookup and lookups/s
# of one helper process (build/bench/squid_helper_bench).
# Usage: bench/squid_helper_bench.sh BUILD_DIR [KEYS] [LOOKUPS]
# Starts two daemons on loopback (plaintext peer link): "holder" with KEYS URLs (default
# 100000) and "router", which learns holder's summary by gossip; the helper asks router, so
# half the lookups are answered "OK peer=holder", half "ERR". Prints figures; asserts nothing.
set -euo pipefail
build=${1:-build}
keys=${2:-100000}
lookups=${3:-200000}
work=$(mktemp -d /tmp/peerbloom-helper-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

conf() {  # conf NAME [SEED_ENDPOINT]
  cat >"$work/$1.toml" <<TOML
node_id = "$1"
listen = "tcp://127.0.0.1:0"
data_dir = "$work/$1"
curve = false
capacity = $((keys * 2))
snapshot_interval = 0
gossip_interval = "200ms"
TOML
  if [[ -n ${2:-} ]]; then printf '[[seeds]]\nendpoint = "%s"\n' "$2" >>"$work/$1.toml"; fi
}
wait_up() {
  for _ in $(seq 200); do "$build/cli/peerbloom" --config "$work/$1.toml" stats >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "daemon $1 did not start" >&2; exit 1
}

conf holder
"$build/daemon/peerbloomd" --config "$work/holder.toml" --foreground 2>"$work/holder.log" &
pids+=($!)
wait_up holder
seq 0 $((keys - 1)) | sed 's|^|http://bench.example/|' |
  "$build/cli/peerbloom" --config "$work/holder.toml" add - >/dev/null
endpoint=$(cat "$work/holder/peer.endpoint")
conf router "$endpoint"
"$build/daemon/peerbloomd" --config "$work/router.toml" --foreground 2>"$work/router.log" &
pids+=($!)
wait_up router
for _ in $(seq 300); do
  "$build/cli/peerbloom" --config "$work/router.toml" who-has http://bench.example/0 >/dev/null 2>&1 && break
  sleep 0.1
done
control="ipc://$work/router/control.sock"
"$build/bench/squid_helper_bench" "$build/cli/peerbloom" "$control" http://bench.example/ "$keys" "$lookups" 1000
