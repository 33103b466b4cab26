#!/usr/bin/env bash
# Cluster figures with N real daemons on loopback (default 16), CURVE on:
#  1. convergence: add a URL at one node, time until every node's who-has lists it, in ms
#     and in gossip intervals (median of R rounds, each at a different node);
#  2. gossip bytes per second per node (median over nodes) at rest and at 1 % churn per
#     minute of ITEMS keys per node (each change is one remove and one add).
# Usage: bench/cluster_bench.sh BUILD_DIR [NODES] [ITEMS] [WINDOW_S]
# Prints figures; asserts nothing. Every daemon started here is stopped on exit.
set -euo pipefail
build=${1:-build}
nodes=${2:-16}
items=${3:-10000}
window=${4:-30}
interval_ms=500
rounds=5
work=$(mktemp -d /tmp/peerbloom-cbench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT
pb=$build/cli/peerbloom
ctl() { local n=$1; shift; "$pb" --control "ipc://$work/n$n/control.sock" "$@"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

for ((i = 0; i < nodes; i++)); do
  "$pb" keygen -o "$work/n$i.key" >/dev/null
  "$pb" keygen --authorized-line "$work/n$i.key" "n$i" >>"$work/authorized_keys"
done
for ((i = 0; i < nodes; i++)); do
  mkdir -p "$work/n$i"
  {
    echo "node_id = \"n$i\""; echo 'listen = "tcp://127.0.0.1:0"'
    echo "data_dir = \"$work/n$i\""; echo "key_file = \"$work/n$i.key\""
    echo "authorized_keys = \"$work/authorized_keys\""; echo 'cluster_secret = "bench"'
    echo "capacity = $((items * 4))"; echo "gossip_interval = \"${interval_ms}ms\""
    echo 'snapshot_interval = 0'; echo 'log_level = "warn"'
    if ((i > 0)); then
      printf '[[seeds]]\nendpoint = "%s"\npublic_key = "%s"\n' \
        "$(cat "$work/n0/peer.endpoint")" "$(cat "$work/n0.key.pub")"
    fi
  } >"$work/n$i.toml"
  "$build/daemon/peerbloomd" --config "$work/n$i.toml" --foreground 2>"$work/n$i.log" &
  pids+=($!)
  for _ in $(seq 100); do ctl $i stats >/dev/null 2>&1 && break; sleep 0.05; done
done
start=$(now_ms)
until (( $(for ((i = 0; i < nodes; i++)); do ctl $i --json peers | grep -c '"alive": true'; done |
          awk -v n=$((nodes - 1)) '$1 == n' | wc -l) == nodes )); do
  (( $(now_ms) - start < 60000 )) || { echo "membership did not converge" >&2; exit 1; }
  sleep 0.2
done
echo "$nodes daemons: membership converged $(( $(now_ms) - start )) ms after the last start"

results=()
for ((r = 0; r < rounds; r++)); do
  origin=$(( (r * 5) % nodes )); url="http://bench.example/converge/$r"
  ctl $origin add "$url" >/dev/null
  t0=$(now_ms)
  for ((i = 0; i < nodes; i++)); do
    until ctl $i who-has "$url" | grep -q "n$origin "; do
      (( $(now_ms) - t0 < 30000 )) || { echo "round $r did not converge" >&2; exit 1; }
    done
  done
  results+=($(( $(now_ms) - t0 )))
done
median=$(printf '%s\n' "${results[@]}" | sort -n | sed -n "$(( (rounds + 1) / 2 ))p")
echo "add at one node -> visible at all $nodes: median ${median} ms over $rounds rounds" \
     "(= $(awk -v m=$median -v g=$interval_ms 'BEGIN{printf "%.1f", m/g}') gossip intervals of" \
     "${interval_ms} ms; rounds: ${results[*]} ms; includes polling $nodes nodes through the CLI)"

for ((i = 0; i < nodes; i++)); do
  seq 1 $items | sed "s|^|http://bench.example/n$i/|" | ctl $i add - >/dev/null
done
sleep 3
bytes_out() { for ((i = 0; i < nodes; i++)); do ctl $i --json stats | grep -m1 -A0 '"bytes_out"' |
              tr -dc '0-9'; echo; done; }
measure() {  # measure LABEL CHURN_PER_NODE_PER_S
  local before after t0 t1
  mapfile -t before < <(bytes_out); t0=$(now_ms)
  local changes=0 next=$items
  while (( $(now_ms) - t0 < window * 1000 )); do
    # Catch up with the target rate: changes due so far = elapsed seconds x rate.
    local due
    due=$(awk -v e=$(( $(now_ms) - t0 )) -v c=$2 'BEGIN{printf "%d", e / 1000 * c}')
    while (( changes < due )); do
      for ((i = 0; i < nodes; i++)); do
        ctl $i remove "http://bench.example/n$i/$((next - items + 1))" >/dev/null
        ctl $i add "http://bench.example/n$i/$((next + 1))" >/dev/null
      done
      next=$((next + 1)); changes=$((changes + 1))
    done
    sleep 0.05
  done
  mapfile -t after < <(bytes_out); t1=$(now_ms)
  for ((i = 0; i < nodes; i++)); do
    echo $(( (after[i] - before[i]) * 1000 / (t1 - t0) ))
  done | sort -n | sed -n "$(( (nodes + 1) / 2 ))p" | {
    read -r rate; echo "gossip bytes out per node, $1: median $rate B/s over ${window} s" \
                       "($changes changes per node, $(awk -v c=$changes -v w=$window 'BEGIN{printf "%.2f", c/w}')/s)"; }
}
# 1 % of the items per minute, each a remove and an add.
per_s=$(awk -v n=$items 'BEGIN{printf "%.4f", n * 0.01 / 60}')
measure "at rest ($items keys per node)" 0
measure "at 1 % churn per minute ($per_s changes/s per node)" "$per_s"
