#!/usr/bin/env bash
# Runs every benchmark and prints its figures. Nothing here asserts time; a benchmark exits
# non-zero only on a correctness failure (for example a false negative).
# Usage: scripts/bench-all.sh BUILD_DIR [--quick]   (`make bench-all`; `make bench` writes the
# report of the headline figures instead: scripts/bench.sh)
set -euo pipefail
build=${1:-build}
quick=${2:-}
cd "$(dirname "$0")/.."

run() {
  echo
  echo "=== $*"
  "$@"
}

cmake --build "$build" -j2 >/dev/null
run "$build/bench/hash_bench"
run "$build/bench/sign_bench" ${quick:+--quick}
run "$build/bench/summary_bench" ${quick:+--quick}
if [[ -n $quick ]]; then
  run "$build/bench/peer_index_bench" 100000 65536
  run "$build/bench/who_has_bench" 100000 65536
  run "$build/bench/gossip_sim_bench" 100000 2000 200
  run "$build/bench/swim_sim_bench" 16,100
  run "$build/bench/rest_sim_bench" 4,16,100
  run "$build/bench/relay_sim_bench" 1000 12
  run "$build/bench/squid_bench"
  run bash bench/control_bench.sh "$build" 100000
  run bash bench/squid_helper_bench.sh "$build" 100000 100000
  run bash bench/nginx_feed_bench.sh "$build" 20000 10000
  run bash bench/cluster_bench.sh "$build" 8 10000 10
else
  run "$build/bench/filter_bench"
  run "$build/bench/peer_index_bench"
  run "$build/bench/who_has_bench"
  run "$build/bench/gossip_sim_bench"
  run "$build/bench/swim_sim_bench"
  run "$build/bench/rest_sim_bench"
  run "$build/bench/relay_sim_bench"
  run "$build/bench/squid_bench"
  run bash bench/control_bench.sh "$build"
  run bash bench/squid_helper_bench.sh "$build"
  run bash bench/feed_bench.sh "$build"
  run bash bench/nginx_feed_bench.sh "$build"
  run bash bench/cluster_bench.sh "$build"
  run python3 bench/rest_cost_bench.py "$build"
fi
