#!/usr/bin/env bash
# The shared-Redis-bitmap design of who-has (k GETBITs per key per filter), for comparison
# with bench/control_bench.sh: starts Debian's redis-server on 127.0.0.1 at a random free
# port, without persistence, runs bench/redis_bitmap_bench against it and stops it.
# Usage: bench/redis_bitmap_bench.sh BUILD_DIR [KEYS] [SINGLE_REQUESTS]
# Needs redis-server (scripts/install-deps.sh --with-bench). Prints rows; asserts nothing
# about time.
set -euo pipefail
build=${1:-build}
keys=${2:-1000000}
singles=${3:-20000}
server=$(command -v redis-server || echo /usr/bin/redis-server)
if [[ ! -x $server ]]; then
  echo "redis_bitmap_bench: error: no redis-server (scripts/install-deps.sh --with-bench)" >&2
  exit 1
fi
work=$(mktemp -d /tmp/peerbloom-redis.XXXXXX)
pid=""
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A port nobody listens on; a bind failure (someone took it meanwhile) tries another.
for _ in $(seq 20); do
  port=$((20000 + RANDOM % 40000))
  "$server" --bind 127.0.0.1 --port "$port" --save "" --appendonly no --protected-mode yes \
    --daemonize no --dir "$work" --logfile "$work/redis.log" &
  pid=$!
  for _ in $(seq 50); do
    if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then break 2; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
done
[[ -n $pid ]] || { echo "redis_bitmap_bench: error: redis-server did not start" >&2; exit 1; }
version=$("$server" --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')
echo "redis-server $version on 127.0.0.1:$port, no persistence"
"$build/bench/redis_bitmap_bench" "$port" "$keys" "$singles"
