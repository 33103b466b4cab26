#!/usr/bin/env bash
# who-has through the control endpoint and the who-has socket against a Redis bit string
# probed with GETBIT, the same URLs, in one run: single-key latency (p50, p99, p99.9) and
# batched keys/s.
# Usage: bench/control_bench.sh BUILD_DIR [KEYS] [SINGLE]
# Starts one daemon (squid-md5 keys, plaintext peer link on loopback, no peers), adds KEYS
# URLs (default 1000000), runs `peerbloom bench`; then, when redis-server is installed
# (Debian's redis-server package, scripts/install-deps.sh --with-results), starts one on
# 127.0.0.1 at a free port without persistence and runs build/bench/redis_getbit_bench with
# the same URLs (k = 7 probes each). Prints figures in one table; asserts nothing.
# Everything it started is stopped on exit. CONTROL_BUSY_POLL (e.g. "50us") sets the
# daemon's control_busy_poll, CLIENT_BUSY_POLL (us) the client's.
set -euo pipefail
build=${1:-build}
keys=${2:-1000000}
single=${3:-20000}
work=$(mktemp -d /tmp/peerbloom-bench.XXXXXX)
pid=""
redis_pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null
  [[ -n $redis_pid ]] && kill "$redis_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
prefix=http://bench.example/

cat >"$work/bench.toml" <<TOML
node_id = "bench"
listen = "tcp://127.0.0.1:0"
data_dir = "$work/data"
curve = false
capacity = $((keys * 2))
snapshot_interval = 0
${CONTROL_BUSY_POLL:+control_busy_poll = \"$CONTROL_BUSY_POLL\"}
TOML
"$build/daemon/peerbloomd" --config "$work/bench.toml" --foreground 2>"$work/log" &
pid=$!
cli=("$build/cli/peerbloom" --config "$work/bench.toml")
for _ in $(seq 100); do "${cli[@]}" stats >/dev/null 2>&1 && break; sleep 0.1; done
start=$(date +%s%N)
seq 0 $((keys - 1)) | sed "s|^|$prefix|" | "${cli[@]}" add - >/dev/null
echo "added $keys URLs in $(( ($(date +%s%N) - start) / 1000000 )) ms (through the CLI, batched)"
"${cli[@]}" --timeout 60000 --json bench --single "$single" --batch-size 10000 --batches 100 \
  --busy-poll "${CLIENT_BUSY_POLL:-0}" --who-has-socket "$work/data/who-has.sock" \
  --prefix "$prefix" >"$work/peerbloom.json"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=""

if command -v redis-server >/dev/null; then
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --daemonize no \
    --dir "$work" --logfile "$work/redis.log" &
  redis_pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  "$build/bench/redis_getbit_bench" 127.0.0.1 "$port" "$prefix" "$keys" "$single" 1000 \
    >"$work/redis.txt"
else
  echo "redis-server is not installed (apt-get install redis-server): no Redis figures"
  : >"$work/redis.txt"
fi

python3 - "$work/peerbloom.json" "$work/redis.txt" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
r = dict(line.split() for line in open(sys.argv[2]) if line.strip())
def f(v, unit):
    return "-" if v is None else (f"{float(v):,.1f} us" if unit == "us" else f"{float(v):,.0f}")
rows = [
    ("peerbloom who-has, control endpoint (ZeroMQ)", p.get("single_p50_us"), p.get("single_p99_us"),
     p.get("single_p999_us"), p.get("batched_keys_per_s_median")),
    ("peerbloom who-has, who-has socket", p.get("socket_single_p50_us"),
     p.get("socket_single_p99_us"), p.get("socket_single_p999_us"),
     p.get("socket_batched_keys_per_s_median")),
    ("redis GETBIT (1 probe) / pipelined, one k=7 filter", r.get("redis_single_p50_us"),
     r.get("redis_single_p99_us"), r.get("redis_single_p999_us"),
     r.get("redis_keys_per_s_one_filter")),
    ("redis pipelined, 16 per-peer k=7 filters", None, None, None,
     r.get("redis_keys_per_s_16_filters")),
]
print(f"{'':52} {'p50':>11} {'p99':>11} {'p99.9':>11} {'batched keys/s':>15}")
for name, a, b, c, d in rows:
    print(f"{name:52} {f(a,'us'):>11} {f(b,'us'):>11} {f(c,'us'):>11} {f(d,''):>15}")
if r:
    print(f"redis pipelined GETBITs/s (1000 in flight): {float(r['redis_pipelined_getbits_per_s']):,.0f}")
print(f"peerbloom batches: 10,000 URLs per request; client busy poll {p['busy_poll_us']} us")
PY
