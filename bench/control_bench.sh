#!/usr/bin/env bash
# who-has through the control endpoint: single-key latency (p50, p99) and batched keys/s.
# Usage: bench/control_bench.sh BUILD_DIR [KEYS]
# Starts one daemon (squid-md5 keys, plaintext peer link on loopback, no peers), adds KEYS
# URLs (default 1000000), then runs `peerbloom bench`. Prints figures; asserts nothing.
set -euo pipefail
build=${1:-build}
keys=${2:-1000000}
work=$(mktemp -d /tmp/peerbloom-bench.XXXXXX)
pid=""
trap '[[ -n $pid ]] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

cat >"$work/bench.toml" <<TOML
node_id = "bench"
listen = "tcp://127.0.0.1:0"
data_dir = "$work/data"
curve = false
capacity = $((keys * 2))
snapshot_interval = 0
TOML
"$build/daemon/peerbloomd" --config "$work/bench.toml" --foreground 2>"$work/log" &
pid=$!
cli=("$build/cli/peerbloom" --config "$work/bench.toml")
for _ in $(seq 100); do "${cli[@]}" stats >/dev/null 2>&1 && break; sleep 0.1; done
start=$(date +%s%N)
seq 0 $((keys - 1)) | sed 's|^|http://bench.example/|' | "${cli[@]}" add - >/dev/null
echo "added $keys URLs in $(( ($(date +%s%N) - start) / 1000000 )) ms (through the CLI, batched)"
"${cli[@]}" --timeout 60000 bench --single 20000 --batch-size 10000 --batches 100
