#!/usr/bin/env bash
# A 3-node peerbloom cluster on loopback, shown step by step.
# Usage: scripts/demo.sh BUILD_DIR
# Fresh CURVE keys and a temporary data dir; every daemon binds a port the OS picks; all
# daemons started here are stopped on exit, whatever happens.
set -euo pipefail

build=${1:-build}
peerbloomd=$build/daemon/peerbloomd
peerbloom=$build/cli/peerbloom
for bin in "$peerbloomd" "$peerbloom"; do
  [[ -x $bin ]] || { echo "demo: '$bin' is not built (run: make build)" >&2; exit 2; }
done

work=$(mktemp -d /tmp/peerbloom-demo.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
say() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
run() { printf '$ %s\n' "$*"; "$@"; }
# wait_until SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds or time is up.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then echo "demo: timed out waiting for: $*" >&2; return 1; fi
    sleep 0.1
  done
}
ctl() { local node=$1; shift; "$peerbloom" --control "ipc://$work/$node/control.sock" "$@"; }

say "1. Keys: one CURVE key pair per node, every public key authorized"
for node in node-a node-b node-c; do
  "$peerbloom" keygen -o "$work/$node.key" >/dev/null
  "$peerbloom" keygen --authorized-line "$work/$node.key" "$node" >>"$work/authorized_keys"
done
cat "$work/authorized_keys"

start_node() {
  local node=$1 seed_endpoint=${2:-} seed_key=${3:-}
  mkdir -p "$work/$node"
  {
    echo "node_id = \"$node\""
    echo "listen = \"tcp://127.0.0.1:0\""
    echo "data_dir = \"$work/$node\""
    echo "key_file = \"$work/$node.key\""
    echo "authorized_keys = \"$work/authorized_keys\""
    echo "cluster_secret = \"demo-secret\""
    echo "key_scheme = \"squid-md5\""
    echo "capacity = 100000"
    echo "gossip_interval = \"300ms\""
    echo "failure_timeout = \"3s\""
    echo "anti_entropy_interval = \"1s\""
    if [[ -n $seed_endpoint ]]; then
      printf '[[seeds]]\nendpoint = "%s"\npublic_key = "%s"\n' "$seed_endpoint" "$seed_key"
    fi
  } >"$work/$node.toml"
  "$peerbloomd" --config "$work/$node.toml" --foreground 2>"$work/$node.log" &
  pids+=($!)
  wait_until 10 ctl "$node" stats
  echo "$node: peers on $(cat "$work/$node/peer.endpoint"), control on ipc://$work/$node/control.sock"
}

say "2. Start three daemons; node-b and node-c know only node-a"
start_node node-a
seed=$(cat "$work/node-a/peer.endpoint")
start_node node-b "$seed" "$(cat "$work/node-a.key.pub")"
start_node node-c "$seed" "$(cat "$work/node-a.key.pub")"

all_alive() {
  for node in node-a node-b node-c; do
    [[ $(ctl "$node" --json peers | grep -c '"alive": true') -eq 2 ]] || return 1
  done
}
wait_until 15 all_alive
run "$peerbloom" --control "ipc://$work/node-b/control.sock" peers

say "3. Each cache stores something: tell the local daemon"
run ctl node-a add http://example.com/index.html http://example.com/logo.png
run ctl node-b add http://example.com/video.mp4
run ctl node-c add http://example.com/index.html

say "4. Wait (polling) until every node's answers agree"
converged() {
  for node in node-a node-b node-c; do
    ctl "$node" who-has http://example.com/video.mp4 | grep -q node-b || return 1
    ctl "$node" who-has http://example.com/index.html | grep -q node-c || return 1
    ctl "$node" who-has http://example.com/logo.png | grep -q node-a || return 1
  done
}
start=$(date +%s%N)
wait_until 10 converged
echo "converged in $(( ($(date +%s%N) - start) / 1000000 )) ms (gossip interval 300 ms)"

say "5. who-has, asked at each node (answered locally, from the peers' summaries)"
for node in node-a node-b node-c; do
  echo "-- at $node"
  ctl "$node" who-has http://example.com/index.html http://example.com/logo.png \
    http://example.com/video.mp4 http://example.com/missing.css || true
done

say "6. node-a evicts logo.png"
run ctl node-a remove http://example.com/logo.png
gone() {
  for node in node-b node-c; do
    ! ctl "$node" who-has http://example.com/logo.png >/dev/null || return 1
  done
}
wait_until 10 gone
echo "-- at node-c"
ctl node-c who-has http://example.com/logo.png || echo "(exit status $?: no node holds it)"

say "7. Offline tools"
run "$peerbloom" calc --items 1000000 --fpr 0.01
ctl node-a summary -o "$work/node-a.summary" >/dev/null
run "$peerbloom" inspect "$work/node-a.summary"

say "Done: stopping the daemons"
