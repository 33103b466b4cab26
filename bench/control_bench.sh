#!/usr/bin/env bash
# who-has through the control endpoint and the who-has socket against a Redis bit string
# probed with GETBIT, the same URLs, in one run: single-key latency (p50, p99, p99.9) and
# batched keys/s.
# Usage: bench/control_bench.sh BUILD_DIR [KEYS] [SINGLE]
# Starts one daemon (squid-md5 keys, plaintext peer link on loopback, no peers) and adds KEYS
# URLs (default 1000000); when redis-server is installed (Debian's redis-server package,
# scripts/install-deps.sh --with-results) starts one on 127.0.0.1 at a free port without
# persistence and sets the k = 7 probes of the same URLs in a bit string
# (build/bench/redis_getbit_bench). Then times SINGLE (default 20000) single-key lookups in
# five rounds, `peerbloom bench` and Redis GETBIT in turn, and batches on both. Prints one
# table, then the same figures as "row<TAB>name<TAB>value<TAB>unit" lines (the keys of `make
# bench`'s report, scripts/bench_report.py); asserts nothing.
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
added_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "added $keys URLs in $added_ms ms (through the CLI, batched)"
redis_port=""
if command -v redis-server >/dev/null; then
  redis_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
    --daemonize no --dir "$work" --logfile "$work/redis.log" &
  redis_pid=$!
  for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  "$build/bench/redis_getbit_bench" 127.0.0.1 "$redis_port" "$prefix" "$keys" 0 1000 load
else
  echo "redis-server is not installed (apt-get install redis-server): no Redis figures"
fi
redis() {
  if [[ -n $redis_port ]]; then
    "$build/bench/redis_getbit_bench" 127.0.0.1 "$redis_port" "$prefix" "$keys" "$@"
  fi
}
bench=("${cli[@]}" --timeout 60000 --json bench --busy-poll "${CLIENT_BUSY_POLL:-0}"
  --who-has-socket "$work/data/who-has.sock" --prefix "$prefix" --batch-size 10000)
# Single keys in rounds, peerbloom and Redis in turn, so both see the machine's load alike.
rounds=5
for r in $(seq $rounds); do
  "${bench[@]}" --single $((single / rounds)) --batches 0 >"$work/single-$r.json"
  redis $((single / rounds)) 1000 single >"$work/redis-single-$r.txt"
done
"${bench[@]}" --single 0 --batches 100 >"$work/batch.json"
redis 0 1000 pipelined >"$work/redis-batch.txt"

python3 - "$work" "$rounds" "$keys" "$added_ms" <<'PY'
import json, statistics, sys
work, rounds, keys, added_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def redis(name):
    try:
        return dict(line.split() for line in open(f"{work}/{name}") if line.strip())
    except FileNotFoundError:
        return {}
singles = [json.load(open(f"{work}/single-{r}.json")) for r in range(1, rounds + 1)]
rsingles = [redis(f"redis-single-{r}.txt") for r in range(1, rounds + 1)]
batch = json.load(open(f"{work}/batch.json"))
rbatch = redis("redis-batch.txt")
def med(rows, key):
    vals = [float(row[key]) for row in rows if key in row]
    return statistics.median(vals) if vals else None
def f(v, unit):
    return "-" if v is None else (f"{float(v):,.1f} us" if unit == "us" else f"{float(v):,.0f}")
rows = [
    ("peerbloom who-has, control endpoint (ZeroMQ)", med(singles, "single_p50_us"),
     med(singles, "single_p99_us"), med(singles, "single_p999_us"),
     batch.get("batched_keys_per_s_median")),
    ("peerbloom who-has, who-has socket", med(singles, "socket_single_p50_us"),
     med(singles, "socket_single_p99_us"), med(singles, "socket_single_p999_us"),
     batch.get("socket_batched_keys_per_s_median")),
    ("redis GETBIT (1 probe) / pipelined, one k=7 filter", med(rsingles, "redis_single_p50_us"),
     med(rsingles, "redis_single_p99_us"), med(rsingles, "redis_single_p999_us"),
     rbatch.get("redis_keys_per_s_one_filter")),
    ("redis pipelined, 16 per-peer k=7 filters", None, None, None,
     rbatch.get("redis_keys_per_s_16_filters")),
]
print(f"{'':52} {'p50':>11} {'p99':>11} {'p99.9':>11} {'batched keys/s':>15}")
for name, a, b, c, d in rows:
    print(f"{name:52} {f(a,'us'):>11} {f(b,'us'):>11} {f(c,'us'):>11} {f(d,''):>15}")
print("single keys: median over", rounds, "interleaved rounds of each round's percentiles;",
      "per-round p50 socket",
      [round(s.get("socket_single_p50_us", 0), 1) for s in singles],
      "redis", [float(r["redis_single_p50_us"]) for r in rsingles if r])
if rbatch:
    print(f"redis pipelined GETBITs/s (1000 in flight): {float(rbatch['redis_pipelined_getbits_per_s']):,.0f}")
print(f"peerbloom batches: 10,000 URLs per request, median of 100; client busy poll {batch['busy_poll_us']} us")
# The same figures for scripts/bench_report.py, one "row<TAB>name<TAB>value<TAB>unit" line each;
# a figure not measured (no redis-server) has no line.
figures = [
    ("keys", keys, ""), ("added_ms", added_ms, "ms"), ("rounds", rounds, ""),
    ("single_requests", sum(s.get("single_requests", 0) for s in singles), ""),
    ("batch_size", batch.get("batch_size"), ""), ("batches", batch.get("batches"), ""),
    ("busy_poll_us", batch.get("busy_poll_us"), "us"),
    ("zmq_single_p50", med(singles, "single_p50_us"), "us"),
    ("zmq_single_p99", med(singles, "single_p99_us"), "us"),
    ("zmq_single_p999", med(singles, "single_p999_us"), "us"),
    ("zmq_batched_keys_per_s", batch.get("batched_keys_per_s_median"), "1/s"),
    ("socket_single_p50", med(singles, "socket_single_p50_us"), "us"),
    ("socket_single_p99", med(singles, "socket_single_p99_us"), "us"),
    ("socket_single_p999", med(singles, "socket_single_p999_us"), "us"),
    ("socket_batched_keys_per_s", batch.get("socket_batched_keys_per_s_median"), "1/s"),
    ("redis_getbit_p50", med(rsingles, "redis_single_p50_us"), "us"),
    ("redis_getbit_p99", med(rsingles, "redis_single_p99_us"), "us"),
    ("redis_getbit_p999", med(rsingles, "redis_single_p999_us"), "us"),
    ("redis_pipelined_getbits_per_s", rbatch.get("redis_pipelined_getbits_per_s"), "1/s"),
    ("redis_pipelined_keys_per_s_1", rbatch.get("redis_keys_per_s_one_filter"), "1/s"),
    ("redis_pipelined_keys_per_s_16", rbatch.get("redis_keys_per_s_16_filters"), "1/s"),
]
for name, value, unit in figures:
    if value is not None:
        print(f"row\t{name}\t{float(value):.3f}\t{unit}")
PY
