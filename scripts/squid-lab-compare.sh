#!/usr/bin/env bash
# One request stream replayed on three real Squids (loopback) three times: without peers, as
# ICP siblings, and routed by peerbloom with the shipped recipe; figures from Squid's own
# counters and logs. Writes a Markdown report (default docs/results/squid-lab.md).
#
# Usage: scripts/squid-lab-compare.sh BUILD_DIR [REQUESTS] [URLS] [ALPHA] [OUT]
#   REQUESTS  requests in the stream (default 3000)
#   URLS      distinct URLs (default 1000), chosen Zipf(ALPHA) (default 0.8)
# Each request goes to one of the three Squids, uniformly (fixed seed: the same stream in
# every run), at RATE requests per second (environment, default 100; the cluster's rate, so
# that the summaries' update delay weighs as it would at that rate). Needs root and Debian's
# squid (like scripts/squid-testbed.sh); uses addresses 127.0.3.1-3.
#
#   run "none":      three Squids that know nothing of each other
#   run "icp":       each Squid has the other two as ICP siblings (no digests)
#   run "peerbloom": configs/squid/peerbloom-routing.conf.in rendered for each Squid by
#                    scripts/peerbloom-squid-routing, beside a peerbloomd fed by its
#                    store.log and reading its route log
# After the peerbloom replay, LATENCY (default 50) false hits (URLs node a's daemon claims and
# its Squid does not hold) and as many plain misses are timed at node b, interleaved.
set -euo pipefail
trap 'echo "squid-lab-compare: error: line $LINENO: $BASH_COMMAND failed" >&2' ERR
build=$(cd "${1:-build}" && pwd)
requests=${2:-3000}
urls=${3:-1000}
alpha=${4:-0.8}
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${5:-$repo/docs/results/squid-lab.md}
rate=${RATE:-100}
latency_n=${LATENCY:-50}
addrs=(127.0.3.1 127.0.3.2 127.0.3.3)
names=(cache-a cache-b cache-c)
nodes=(a b c)
work=$(mktemp -d /tmp/peerbloom-lab.XXXXXX)
chmod 755 "$work"
bed="$repo/scripts/squid-testbed.sh"
cli="$build/cli/peerbloom"
pids=()

cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for run in none icp peerbloom; do
    for addr in "${addrs[@]}"; do
      PEERBLOOM_SQUID_ROOT="$work/$run" bash "$bed" stop "$addr" >/dev/null 2>&1 || true
    done
  done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

others() {  # indexes of the other two Squids
  for j in 0 1 2; do [[ $j != "$1" ]] && echo "$j"; done
}

start_squid() {  # run index before_access extra origin
  PEERBLOOM_SQUID_ROOT="$work/$1" PEERBLOOM_ORIGIN="$5" SQUID_CONF_BEFORE_ACCESS="$3" \
    SQUID_CONF_EXTRA="$4" bash "$bed" start "${addrs[$2]}" 2>"$work/start.log" ||
    { cat "$work/start.log" >&2; exit 1; }
}

stop_run() {  # run
  local a
  for a in "${addrs[@]}"; do
    PEERBLOOM_SQUID_ROOT="$work/$1" bash "$bed" stop "$a" >/dev/null 2>&1 ||
      echo "squid-lab-compare: warning: stopping $a of run $1 failed" >&2
  done
}

# Replays the stream; prints its duration in ms. Also writes $work/servable: the misses
# another Squid could have served (one of the others had fetched the URL before, this one not;
# nothing is evicted at these sizes), counted from the stream itself.
replay() {  # run
  python3 - "$1" "$origin" "$requests" "$urls" "$alpha" "$rate" "$work/servable" "${addrs[@]}" <<'PY'
import http.client, random, sys, time
run, origin, n, m, alpha, rate, servable_out = sys.argv[1:8]
n, m, alpha, rate = int(n), int(m), float(alpha), float(rate)
proxies = sys.argv[8:]
rng = random.Random(20001)
weights = [1.0 / (i + 1) ** alpha for i in range(m)]
stream = rng.choices(range(m), weights=weights, k=n)
where = [rng.randrange(len(proxies)) for _ in range(n)]
held, servable = set(), 0
for url, p in zip(stream, where):
    if (p, url) not in held and any((q, url) in held for q in range(len(proxies))):
        servable += 1
    held.add((p, url))
open(servable_out, "w").write("%d\n" % servable)
conns = [http.client.HTTPConnection(p, 3128, timeout=30) for p in proxies]
bad = 0
start = time.monotonic()
for i, (url, p) in enumerate(zip(stream, where)):
    delay = start + i / rate - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    conns[p].request("GET", "%s/lab%d.html" % (origin, url))
    r = conns[p].getresponse()
    r.read()
    bad += r.status != 200
if bad:
    sys.exit("%s: %d requests were not answered 200" % (run, bad))
print(int((time.monotonic() - start) * 1000))
PY
}

counter() {  # addr name
  curl -s --max-time 20 "http://$1:3128/squid-internal-mgr/counters" |
    awk -v n="$2" '$1 == n { print $3 }'
}

icp_packets() {
  local sum=0 a
  for a in "${addrs[@]}"; do sum=$((sum + $(counter "$a" icp.pkts_sent))); done
  echo "$sum"
}

# Classifies every access.log line of a run into one line of key=value figures, once every
# client request is logged (Squid logs a transaction when it ends, after the answer).
tally() {  # run
  python3 - "$work/$1" "$requests" "${addrs[@]}" <<'PY'
import sys, time
root, n, squids = sys.argv[1], int(sys.argv[2]), set(sys.argv[3:])
for _ in range(300):
    local = remote = direct = false_hits = peer_requests = client = 0
    for addr in squids:
        for line in open("%s/%s/logs/access.log" % (root, addr)):
            f = line.split()
            if len(f) < 10 or "/lab" not in f[6]:
                continue
            code, status, hier = f[3].split("/")[0], f[3].split("/")[-1], f[8].split("/")[0]
            if code.startswith("UDP_"):  # an ICP query Squid logged (log_icp_queries)
                continue
            if f[2] in squids:  # a request from another Squid of the lab
                peer_requests += 1
                # not served by that Squid: a 504 to only-if-cached (ICP), a reset (peerbloom)
                false_hits += status in ("504", "000")
                continue
            client += 1
            if hier == "HIER_NONE" and "HIT" in code:
                local += 1
            elif "PARENT" in hier or "SIBLING" in hier:
                remote += 1
            elif "DIRECT" in hier:  # HIER_DIRECT, TIMEOUT_DIRECT (ICP answered too late), ...
                direct += 1
    if client >= n:
        break
    time.sleep(0.1)
print("client=%d local=%d remote=%d direct=%d false_hits=%d peer_requests=%d"
      % (client, local, remote, direct, false_hits, peer_requests))
PY
}

# ---- run 1: no peers
mkdir -p "$work/none"
origin=""
for i in 0 1 2; do
  start_squid none "$i" "" "icp_port 0"$'\n'"htcp_port 0" "$origin"
  [[ -n $origin ]] || origin=$(PEERBLOOM_SQUID_ROOT="$work/none" bash "$bed" origin "${addrs[0]}")
done
none_ms=$(replay none)
none_tally=$(tally none)
servable=$(cat "$work/servable")
stop_run none

# ---- run 2: ICP siblings (each run has its own origin: stopping a run's first Squid stops
# the origin it started)
mkdir -p "$work/icp"
origin=""
for i in 0 1 2; do
  before=""
  for j in $(others "$i"); do
    before+="cache_peer ${addrs[$j]} sibling 3128 3130 no-digest no-netdb-exchange name=${names[$j]}"$'\n'
  done
  extra=$(printf 'htcp_port 0\ndigest_generation off\ntcp_outgoing_address %s\nminimum_direct_rtt 0\nminimum_direct_hops 0\n' "${addrs[$i]}")
  start_squid icp "$i" "$before" "$extra" "$origin"
  [[ -n $origin ]] || origin=$(PEERBLOOM_SQUID_ROOT="$work/icp" bash "$bed" origin "${addrs[0]}")
done
icp_ms=$(replay icp)
icp_sent=$(icp_packets)
icp_tally=$(tally icp)
stop_run icp

# ---- run 3: peerbloom, the shipped recipe. The daemons start first, so that each Squid's
# helper finds its daemon from the first request; Squid's helper runs as 'proxy' and asks over
# the who-has socket, which the daemon gives to group proxy.
mkdir -p "$work/peerbloom"
origin=""
for i in 0 1 2; do
  n=${nodes[$i]}
  mkdir -p "$work/pb-$n"
  chmod 711 "$work/pb-$n"
  {
    echo "node_id = \"$n\""
    echo "listen = \"tcp://127.0.0.1:0\""
    echo "data_dir = \"$work/pb-$n\""
    echo "curve = false"
    echo "key_scheme = \"squid-md5\""
    echo "capacity = 100000"
    echo "snapshot_interval = 0"
    echo "gossip_interval = \"200ms\""
    echo "who_has_socket_group = \"proxy\""
    echo "squid_peer_names = { a = \"cache-a\", b = \"cache-b\", c = \"cache-c\" }"
    echo "squid_route_log = \"$work/peerbloom/${addrs[$i]}/logs/peerbloom-routes.log\""
    if [[ $i -gt 0 ]]; then
      printf '[[seeds]]\nendpoint = "%s"\n' "$(cat "$work/pb-a/peer.endpoint")"
    fi
    echo "[[feeds]]"
    echo "path = \"$work/peerbloom/${addrs[$i]}/logs/store.log\""
    echo "format = \"squid-store-log\""
  } >"$work/pb-$n.toml"
  chmod 644 "$work/pb-$n.toml"
  "$build/daemon/peerbloomd" --config "$work/pb-$n.toml" --foreground 2>"$work/pb-$n.log" &
  pids+=($!)
  for _ in $(seq 200); do "$cli" --config "$work/pb-$n.toml" stats >/dev/null 2>&1 && break; sleep 0.1; done
  "$cli" --config "$work/pb-$n.toml" stats >/dev/null || { cat "$work/pb-$n.log" >&2; exit 1; }
done
for i in 0 1 2; do
  n=${nodes[$i]}
  peers=()
  for j in $(others "$i"); do peers+=("${names[$j]}=${addrs[$j]}"); done
  "$repo/scripts/peerbloom-squid-routing" --self "${addrs[$i]}" --peerbloom "$cli" \
    --config "$work/pb-$n.toml" \
    --routes-log "$work/peerbloom/${addrs[$i]}/logs/peerbloom-routes.log" "${peers[@]}" \
    >"$work/routing-$n.conf"
  chmod 644 "$work/routing-$n.conf"
  start_squid peerbloom "$i" "include $work/routing-$n.conf" "" "$origin"
  [[ -n $origin ]] || origin=$(PEERBLOOM_SQUID_ROOT="$work/peerbloom" bash "$bed" origin "${addrs[0]}")
done
gossip() {  # total messages_out and bytes_out of the three daemons
  local n m b msgs=0 bytes=0
  for n in "${nodes[@]}"; do
    read -r m b < <("$cli" --config "$work/pb-$n.toml" --json stats |
      python3 -c 'import json,sys; g=json.load(sys.stdin)["gossip"]; print(g["messages_out"], g["bytes_out"])')
    msgs=$((msgs + m))
    bytes=$((bytes + b))
  done
  echo "$msgs $bytes"
}
read -r gossip_before _ < <(gossip)
pb_ms=$(replay peerbloom)
pb_icp=$(icp_packets)
read -r gossip_msgs gossip_bytes < <(gossip)
gossip_msgs=$((gossip_msgs - gossip_before))
pb_tally=$(tally peerbloom)
route_false=0
for a in "${addrs[@]}"; do
  route_false=$((route_false + $(grep -c ' HIER_DIRECT/' "$work/peerbloom/$a/logs/peerbloom-routes.log" || true)))
done

# What a false hit costs at b, beside a plain miss: URLs a's daemon claims but a's Squid does
# not hold, and URLs nobody claims, fetched alternately.
fh=() pm=()
for ((k = 1; k <= latency_n; k++)); do
  fh+=("$origin/false$k.html")
  pm+=("$origin/miss$k.html")
done
"$cli" --config "$work/pb-a.toml" add "${fh[@]}" >/dev/null
for _ in $(seq 300); do
  # who-has exits 1 while nothing is claimed yet
  listed=$({ "$cli" --config "$work/pb-b.toml" --json who-has "${fh[@]}" || true; } |
    python3 -c 'import json,sys; print(sum(any(x["node_id"]=="a" for x in json.loads(l)["nodes"]) for l in sys.stdin))')
  ((listed == latency_n)) && break
  sleep 0.1
done
latency=$(for ((k = 0; k < latency_n; k++)); do
  curl -s -o /dev/null -w 'false %{http_code} %{time_total}\n' -x "http://${addrs[1]}:3128" "${fh[k]}"
  curl -s -o /dev/null -w 'miss %{http_code} %{time_total}\n' -x "http://${addrs[1]}:3128" "${pm[k]}"
done | python3 -c 'import statistics, sys
t = {"false": [], "miss": []}
for kind, code, s in (l.split() for l in sys.stdin):
    assert code == "200", (kind, code)
    t[kind].append(float(s) * 1000)
print("%.2f %.2f %d" % (statistics.median(t["false"]), statistics.median(t["miss"]), len(t["miss"])))')
read -r false_ms miss_ms latency_count <<<"$latency"
# The false hits were stored at b: asked again, each is a local hit.
for u in "${fh[@]}"; do curl -s -o /dev/null -x "http://${addrs[1]}:3128" "$u"; done
for _ in $(seq 300); do
  again=$(grep -c "HIT/200 .* $origin/false[0-9]*.html .* HIER_NONE/" \
    "$work/peerbloom/${addrs[1]}/logs/access.log" || true)
  ((again >= latency_n)) && break
  sleep 0.1
done
# B's daemon settles a request that went direct once it hears from the peer after it.
for _ in $(seq 300); do
  daemon_false=$("$cli" --config "$work/pb-b.toml" --json stats |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["routing"]; print(r["false_hits"], r["hits"], r["unreachable"], r["pending"])')
  [[ "$daemon_false" == *" 0" ]] && break
  sleep 0.1
done

# ---- report
python3 - "$out" "$requests" "$urls" "$alpha" "$rate" "$servable" "$none_ms" "$none_tally" \
  "$icp_ms" "$icp_sent" "$icp_tally" "$pb_ms" "$pb_icp" "$pb_tally" "$gossip_msgs" \
  "$gossip_bytes" "$route_false" "$false_ms" "$miss_ms" "$latency_count" "$daemon_false" \
  "$again" <<'PY'
import os, platform, subprocess, sys
(out, n, m, alpha, rate, servable, none_ms, none_tally, icp_ms, icp_sent, icp_tally, pb_ms,
 pb_icp, pb_tally, gossip_msgs, gossip_bytes, route_false, false_ms, miss_ms, latency_count,
 daemon_b, again) = sys.argv[1:]
n, servable, rate = int(n), int(servable), float(rate)
def parse(t): return {k: int(v) for k, v in (kv.split("=") for kv in t.split())}
none, icp, pb = parse(none_tally), parse(icp_tally), parse(pb_tally)
def row(name, t, icp_pkts, ms):
    hits = t["local"] + t["remote"]
    msgs = icp_pkts + t["peer_requests"]
    return ("| %s | %.1f %% | %d | %d | %d of %d (%.1f %%) | %d | %d | %d | %.2f | %d | %d |"
            % (name, 100.0 * hits / t["client"], t["local"], t["remote"], t["remote"], servable,
               100.0 * t["remote"] / servable, t["false_hits"], icp_pkts, t["peer_requests"],
               msgs / t["client"], t["direct"], int(ms)))
cpu = platform.processor() or platform.machine()
try:
    cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
except Exception:
    pass
squid = subprocess.run(["/usr/sbin/squid", "-v"], capture_output=True, text=True).stdout.splitlines()[0]
b_false, b_hits, b_unreachable, _ = daemon_b.split()
os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
with open(out, "w") as f:
    f.write(f"""# Three real Squids without peers, as ICP siblings and routed by peerbloom

Written by `scripts/squid-lab-compare.sh` (reproduce with `sudo scripts/squid-lab-compare.sh
build {n} {m} {alpha}`, `RATE={rate:g}`). One stream of {n} requests over {m} URLs (Zipf, alpha
{alpha}, fixed seed), each sent to one of three Squids at random, {rate:g} requests a second,
replayed from empty caches three times: on Squids that know nothing of each other, on the same
Squids as ICP siblings, and routed by peerbloom with the shipped recipe
(`configs/squid/peerbloom-routing.conf.in` rendered by `scripts/peerbloom-squid-routing`: no
ICP, no digests; a peer resets a member's miss, the member fetches direct). Figures come from
each Squid's access.log and its `counters` (icp.pkts_sent).

| run | hit ratio | local hits | remote hits | peer-servable misses served by a peer | false hits | ICP packets | inter-cache HTTP requests | inter-node messages / request | origin fetches | replay ms |
|---|---|---|---|---|---|---|---|---|---|---|
{row("no peers", none, 0, none_ms)}
{row("ICP siblings", icp, int(icp_sent), icp_ms)}
{row("peerbloom", pb, int(pb_icp), pb_ms)}

- Local hits are the same in the three runs when no false hit is lost: every Squid keeps a copy
  of what it serves, fetched from the origin or from a peer, so a peer adds remote hits and
  takes no local one. A peer-servable miss is a request whose URL another Squid had fetched
  before and this one had not ({servable} in this stream, counted from the stream itself).
- False hits: requests one Squid sent another that the other did not serve (ICP: a 504 to
  only-if-cached after a stale ICP hit; peerbloom: a reset, {route_false} in the route logs).
  B's daemon counted {b_hits} hits and {b_false} false hits ({b_unreachable} unreachable)
  from its route log during the replay and the latency run below.
- ICP packets: queries and replies sent by all three Squids. Inter-cache HTTP requests: requests
  one Squid sent another. Messages per request counts both, per client request.
- peerbloom's own traffic is gossip between the daemons, independent of the request rate:
  {gossip_msgs} messages ({int(gossip_bytes) // 1024} KiB in all since start, probes
  included) during the replay of {pb_ms} ms, not counted in the column above.
- A remote hit missed by peerbloom is a URL another Squid got before its summary reached the
  asking daemon (gossip interval 200 ms here): the update delay.
- What a false hit costs: at node b, {latency_count} false hits (URLs node a's daemon claims
  and its Squid does not hold) and as many plain misses, alternately: median {false_ms} ms
  against {miss_ms} ms: one loopback round trip to the peer and its reset. Asked again, {again}
  of the {latency_count} were local hits at b: the false hit cost that hop and nothing more.
- Machine: {cpu}, {os.cpu_count()} cores shared with other builds; {squid}; loopback only.
""")
print(open(out).read())
PY
