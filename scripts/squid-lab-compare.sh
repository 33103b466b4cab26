#!/usr/bin/env bash
# ICP siblings against peerbloom routing on a real three-Squid lab (loopback), one request
# stream replayed on each, figures from Squid's own counters and logs. Writes a Markdown
# report (default docs/results/squid-lab.md).
#
# Usage: scripts/squid-lab-compare.sh BUILD_DIR [REQUESTS] [URLS] [ALPHA] [OUT]
#   REQUESTS  requests in the stream (default 3000)
#   URLS      distinct URLs (default 1000), chosen Zipf(ALPHA) (default 0.8)
# Each request goes to one of the three Squids, uniformly (fixed seed: the same stream in
# both runs). Needs root and Debian's squid (like scripts/squid-testbed.sh); uses addresses
# 127.0.3.1-3.
#
#   run "icp":       each Squid has the other two as ICP siblings (no digests)
#   run "peerbloom": no ICP, no digests; each Squid beside a peerbloomd fed by its store.log,
#                    routed by `peerbloom squid-helper` (configs/squid/peerbloom-routing.conf)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
requests=${2:-3000}
urls=${3:-1000}
alpha=${4:-0.8}
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${5:-$repo/docs/results/squid-lab.md}
addrs=(127.0.3.1 127.0.3.2 127.0.3.3)
names=(cache-a cache-b cache-c)
nodes=(a b c)
work=$(mktemp -d /tmp/peerbloom-lab.XXXXXX)
chmod 755 "$work"
bed="$repo/scripts/squid-testbed.sh"
pids=()

cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for run in icp peerbloom; do
    for addr in "${addrs[@]}"; do
      PEERBLOOM_SQUID_ROOT="$work/$run" bash "$bed" stop "$addr" >/dev/null 2>&1 || true
    done
  done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

common_extra() {  # $1 = this Squid's address
  printf 'htcp_port 0\ndigest_generation off\ntcp_outgoing_address %s\n' "$1"
  printf 'minimum_direct_rtt 0\nminimum_direct_hops 0\n'
}

others() {  # indexes of the other two Squids
  for j in 0 1 2; do [[ $j != "$1" ]] && echo "$j"; done
}

start_squid() {  # run index before_access extra origin
  PEERBLOOM_SQUID_ROOT="$work/$1" PEERBLOOM_ORIGIN="$5" SQUID_CONF_BEFORE_ACCESS="$3" \
    SQUID_CONF_EXTRA="$4" bash "$bed" start "${addrs[$2]}" 2>/dev/null
}

replay() {  # run
  python3 - "$1" "$origin" "$requests" "$urls" "$alpha" "${addrs[@]}" <<'PY'
import http.client, random, sys
run, origin, n, m, alpha = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
proxies = sys.argv[6:]
rng = random.Random(20001)
weights = [1.0 / (i + 1) ** alpha for i in range(m)]
stream = rng.choices(range(m), weights=weights, k=n)
where = [rng.randrange(len(proxies)) for _ in range(n)]
conns = [http.client.HTTPConnection(p, 3128, timeout=30) for p in proxies]
bad = 0
for url, p in zip(stream, where):
    conns[p].request("GET", "%s/lab%d.html" % (origin, url))
    r = conns[p].getresponse()
    r.read()
    bad += r.status != 200
if bad:
    sys.exit("%s: %d requests were not answered 200" % (run, bad))
PY
}

counter() {  # addr name
  curl -s --max-time 20 "http://$1:3128/squid-internal-mgr/counters" |
    awk -v n="$2" '$1 == n { print $3 }'
}

# Classifies every access.log line of a run into one line of key=value figures.
tally() {  # run
  python3 - "$work/$1" "${addrs[@]}" <<'PY'
import glob, sys
root, squids = sys.argv[1], set(sys.argv[2:])
local = remote = direct = false_hits = peer_requests = client = 0
for addr in squids:
    for line in open("%s/%s/logs/access.log" % (root, addr)):
        f = line.split()
        if len(f) < 10 or "/lab" not in f[6]:
            continue
        code, hier = f[3], f[8].split("/")[0]
        if code.startswith("UDP_"):  # an ICP query Squid logged (log_icp_queries)
            continue
        if f[2] in squids:  # a request from another Squid of the lab
            peer_requests += 1
            false_hits += code.endswith("/504")
            continue
        client += 1
        if hier == "HIER_NONE" and "HIT" in code:
            local += 1
        elif hier == "HIER_DIRECT":
            direct += 1
        else:
            remote += 1
print("client=%d local=%d remote=%d direct=%d false_hits=%d peer_requests=%d"
      % (client, local, remote, direct, false_hits, peer_requests))
PY
}

# ---- run 1: ICP siblings
mkdir -p "$work/icp"
origin=""
for i in 0 1 2; do
  before=""
  for j in $(others "$i"); do
    before+="cache_peer ${addrs[$j]} sibling 3128 3130 no-digest no-netdb-exchange name=${names[$j]}"$'\n'
  done
  start_squid icp "$i" "$before" "$(common_extra "${addrs[$i]}")" "$origin"
  [[ -n $origin ]] || origin=$(PEERBLOOM_SQUID_ROOT="$work/icp" bash "$bed" origin "${addrs[0]}")
done
start=$(date +%s%N)
replay icp
icp_ms=$(( ($(date +%s%N) - start) / 1000000 ))
icp_sent=0
for a in "${addrs[@]}"; do icp_sent=$((icp_sent + $(counter "$a" icp.pkts_sent))); done
sleep 1  # Squid writes a log line when a transaction ends; the last ones follow the answer
icp_tally=$(tally icp)
for a in "${addrs[@]}"; do PEERBLOOM_SQUID_ROOT="$work/icp" bash "$bed" stop "$a" >/dev/null 2>&1; done

# ---- run 2: peerbloom
mkdir -p "$work/peerbloom"
cli="$build/cli/peerbloom"
for i in 0 1 2; do
  n=${nodes[$i]}
  mkdir -p "$work/pb-$n"
  chmod 711 "$work/pb-$n"
  {
    echo "node_id = \"$n\""
    echo "listen = \"tcp://127.0.0.1:0\""
    echo "data_dir = \"$work/pb-$n\""
    echo "curve = false"
    echo "capacity = 100000"
    echo "snapshot_interval = 0"
    echo "gossip_interval = \"200ms\""
    echo "squid_peer_names = { a = \"cache-a\", b = \"cache-b\", c = \"cache-c\" }"
    echo "[[feeds]]"
    echo "path = \"$work/peerbloom/${addrs[$i]}/logs/store.log\""
    echo "format = \"squid-store-log\""
  } >"$work/pb-$n.toml"
  chmod 644 "$work/pb-$n.toml"
done
origin=""
for i in 0 1 2; do
  before="external_acl_type peerbloom ttl=0 negative_ttl=0 concurrency=1000 children-max=1 children-startup=1 %>ru $cli --config $work/pb-${nodes[$i]}.toml squid-helper"$'\n'
  before+="acl pb_lookup external peerbloom"$'\n'
  before+="acl pb_cluster src"
  for j in $(others "$i"); do before+=" ${addrs[$j]}"; done
  before+=$'\n'"http_access allow pb_cluster"$'\n'"http_access allow localnet pb_lookup"$'\n'
  for j in $(others "$i"); do
    before+="cache_peer ${addrs[$j]} parent 3128 0 no-query no-digest no-netdb-exchange name=${names[$j]}"$'\n'
    before+="acl pb_to_$j note peer ${names[$j]}"$'\n'
    before+="cache_peer_access ${names[$j]} allow pb_to_$j"$'\n'"cache_peer_access ${names[$j]} deny all"$'\n'
  done
  before+="acl pb_routed note peer"$'\n'"request_header_add Cache-Control only-if-cached pb_routed"$'\n'
  start_squid peerbloom "$i" "$before" "icp_port 0"$'\n'"$(common_extra "${addrs[$i]}")" "$origin"
  [[ -n $origin ]] || origin=$(PEERBLOOM_SQUID_ROOT="$work/peerbloom" bash "$bed" origin "${addrs[0]}")
done
for i in 0 1 2; do
  n=${nodes[$i]}
  if [[ $i -gt 0 ]]; then
    printf '[[seeds]]\nendpoint = "%s"\n' "$(cat "$work/pb-a/peer.endpoint")" >>"$work/pb-$n.toml"
  fi
  "$build/daemon/peerbloomd" --config "$work/pb-$n.toml" --foreground 2>"$work/pb-$n.log" &
  pids+=($!)
  for _ in $(seq 200); do "$cli" --config "$work/pb-$n.toml" stats >/dev/null 2>&1 && break; sleep 0.1; done
  chmod 777 "$work/pb-$n/control.sock"
done
gossip_before=0
for n in "${nodes[@]}"; do
  gossip_before=$((gossip_before + $("$cli" --config "$work/pb-$n.toml" --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["gossip"]["messages_out"])')))
done
start=$(date +%s%N)
replay peerbloom
pb_ms=$(( ($(date +%s%N) - start) / 1000000 ))
pb_icp=0
for a in "${addrs[@]}"; do pb_icp=$((pb_icp + $(counter "$a" icp.pkts_sent))); done
gossip_msgs=0
gossip_bytes=0
for n in "${nodes[@]}"; do
  read -r m b < <("$cli" --config "$work/pb-$n.toml" --json stats |
    python3 -c 'import json,sys; g=json.load(sys.stdin)["gossip"]; print(g["messages_out"], g["bytes_out"])')
  gossip_msgs=$((gossip_msgs + m))
  gossip_bytes=$((gossip_bytes + b))
done
gossip_msgs=$((gossip_msgs - gossip_before))
sleep 1  # the last log lines, as above
pb_tally=$(tally peerbloom)

# ---- report
python3 - "$out" "$requests" "$urls" "$alpha" "$icp_ms" "$icp_sent" "$icp_tally" "$pb_ms" \
  "$pb_icp" "$gossip_msgs" "$gossip_bytes" "$pb_tally" <<'PY'
import os, platform, subprocess, sys
(out, n, m, alpha, icp_ms, icp_sent, icp_tally, pb_ms, pb_icp, gossip_msgs, gossip_bytes,
 pb_tally) = sys.argv[1:]
n = int(n)
def parse(t): return {k: int(v) for k, v in (kv.split("=") for kv in t.split())}
icp, pb = parse(icp_tally), parse(pb_tally)
def row(name, t, icp_pkts, extra_msgs, ms):
    hits = t["local"] + t["remote"]
    msgs = icp_pkts + t["peer_requests"] + extra_msgs
    return ("| %s | %.1f %% | %.1f %% | %d | %d | %d | %d | %.2f | %d |"
            % (name, 100.0 * hits / t["client"], 100.0 * t["remote"] / t["client"], t["remote"],
               t["false_hits"], icp_pkts, t["peer_requests"], msgs / t["client"], int(ms)))
cpu = platform.processor() or platform.machine()
try:
    cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
except Exception:
    pass
squid = subprocess.run(["/usr/sbin/squid", "-v"], capture_output=True, text=True).stdout.splitlines()[0]
os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
with open(out, "w") as f:
    f.write(f"""# ICP siblings against peerbloom routing, three real Squids

Written by `scripts/squid-lab-compare.sh` (reproduce with `sudo scripts/squid-lab-compare.sh
build {n} {m} {alpha}`). One stream of {n} requests over {m} URLs (Zipf, alpha {alpha}, fixed
seed), each sent to one of three Squids at random, replayed once against ICP siblings and once
against the same Squids routed by peerbloom (no ICP, no digests), from empty caches. Figures
come from Squid's access.log of each Squid and its `counters` (icp.pkts_sent).

| run | hit ratio | remote hit ratio | remote hits | false hits | ICP packets | inter-cache HTTP requests | inter-node messages / request | replay ms |
|---|---|---|---|---|---|---|---|---|
{row("ICP siblings", icp, int(icp_sent), 0, icp_ms)}
{row("peerbloom", pb, int(pb_icp), 0, pb_ms)}

- ICP packets: queries and replies sent by all three Squids. Inter-cache HTTP requests: requests
  one Squid sent another (remote hits, and for peerbloom the false hits, each answered 504
  at once). Messages per request counts both, per client request.
- peerbloom's own traffic is gossip between the daemons, independent of the request rate:
  {gossip_msgs} messages ({int(gossip_bytes) // 1024} KiB in all since start, heartbeats included)
  during the replay of {pb_ms} ms. Not counted in the column above: at this request rate
  it is {int(gossip_msgs) / n:.2f} per request; it stays the same when requests grow.
- A remote hit missed by peerbloom is a URL another Squid got before its summary reached the
  asking daemon (gossip interval 200 ms here): the update delay. False hits are summary false
  positives and objects the peer had not yet written to its store (store.log lags the
  response).
- Machine: {cpu}, {os.cpu_count()} cores shared with other builds; {squid}; loopback only.
""")
print(open(out).read())
PY
