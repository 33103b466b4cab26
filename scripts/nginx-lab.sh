#!/usr/bin/env bash
# One request stream replayed on three real nginx caches (loopback) twice: without routing and
# routed by peerbloom with the shipped configuration; figures from each request's answer, the
# origin's access log and the daemons' own counters. Writes a Markdown report (default
# docs/results/nginx-lab.md).
#
# Usage: sudo scripts/nginx-lab.sh BUILD_DIR [REQUESTS] [URLS] [ALPHA] [OUT]
#   REQUESTS  requests in the stream (default 6000; 50 a second: about 2.5 minutes in all)
#   URLS      distinct URLs /page/N (default 2000), chosen Zipf(ALPHA) (default 0.8)
# Each request goes to one of the three nodes, uniformly (fixed seed: the same stream in both
# runs), at RATE requests per second for each cluster (environment, default 50), so that a
# summary's publication delay (publish_max_delay, 2 s by default) weighs as it would at that
# rate. The two runs are two clusters, replayed side by side request by request, so that their
# latencies are measured under the same load of the machine. CAPACITY (default 10000) is each
# daemon's filter capacity. KEEP=1 keeps the work directory (logs, one TSV per run with a line
# per request). Needs root, Debian's nginx and setpriv (like
# tests/integration/nginx_cluster_test.cc).
#
#   run "none":      nodes 127.0.8.11-13, origin 127.0.8.111:8090; the nodes' route socket is
#                    a path nobody listens on (as when peerbloomd is down): every miss goes to
#                    the origin
#   run "peerbloom": nodes 127.0.8.1-3, origin 127.0.8.100:8090; a peerbloomd beside each
#                    node, run as the package runs it beside nginx (docs/nginx.md): user
#                    nobody, group www-data, CAP_DAC_READ_SEARCH
set -euo pipefail
trap 'echo "nginx-lab: error: line $LINENO: $BASH_COMMAND failed" >&2' ERR
started=$SECONDS
build_arg=${1:?usage: nginx-lab.sh BUILD_DIR [REQUESTS] [URLS] [ALPHA] [OUT]}
build=$(cd "$build_arg" && pwd)
requests=${2:-6000}
urls=${3:-2000}
alpha=${4:-0.8}
repo=$(cd "$(dirname "$0")/.." && pwd)
# The report names the build directory as a reader would type it, from the checkout.
build_arg=${build#"$repo"/}
out=${5:-$repo/docs/results/nginx-lab.md}
rate=${RATE:-50}
capacity=${CAPACITY:-10000}
workers=${NGINX_WORKERS:-2}
gossip_interval=1s
max_size=256m
inactive=1h
addrs=(127.0.8.1 127.0.8.2 127.0.8.3)            # run peerbloom
none_addrs=(127.0.8.11 127.0.8.12 127.0.8.13)      # run none
nodes=(a b c)
origin_port=8090
origin=127.0.8.100:$origin_port                    # run peerbloom's origin
none_origin=127.0.8.111:$origin_port               # run none's
bed="$repo/scripts/nginx-testbed.sh"
lab="$repo/scripts/nginx_lab.py"
cli="$build/cli/peerbloom"
daemon="$build/daemon/peerbloomd"

die() { echo "nginx-lab: error: $*" >&2; exit 1; }
note() { echo "nginx-lab: $*" >&2; }

[[ $(id -u) == 0 ]] || die "run as root: nginx's master runs as root, the daemons as 'nobody'"
[[ -x /usr/sbin/nginx ]] || die "nginx is not installed ('/usr/sbin/nginx')"
[[ -x /usr/bin/setpriv ]] || die "setpriv is not installed ('/usr/bin/setpriv')"
[[ -x "$daemon" && -x "$cli" ]] || die "no peerbloomd or peerbloom in '$build'"
{ id nobody && id www-data; } >/dev/null 2>&1 || die "no user 'nobody' or 'www-data'"

work=$(mktemp -d /tmp/peerbloom-nginx-lab.XXXXXX)
chmod 0711 "$work"  # www-data and nobody pass through to their own directories
declare -A pid_of=()

# Waits up to $2 seconds for command "$1" to succeed; ends as soon as it does.
wait_for() {
  local cmd="$1" deadline=$((SECONDS + $2))
  until eval "$cmd" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

stop_daemon() {  # node
  local pid=${pid_of[$1]:-}
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  wait_for "! kill -0 $pid" 30 || { note "peerbloomd $1 ($pid) did not stop in 30 s"; kill -KILL "$pid"; }
  wait "$pid" 2>/dev/null || true
  unset "pid_of[$1]"
}

# Stops every nginx of both runs, all at once (each takes a second or two to stop).
stop_nginx() {
  local run n pids=() names=() k
  for run in none peerbloom; do
    for n in "${nodes[@]}" origin; do
      [[ -d "$work/$run/$n" ]] || continue
      bash "$bed" stop "$work/$run" "$n" >/dev/null 2>&1 &
      pids+=($!)
      names+=("$n of run $run")
    done
  done
  for k in "${!pids[@]}"; do
    wait "${pids[$k]}" || note "warning: stopping ${names[$k]} failed"
  done
}

cleanup() {
  local n
  for n in "${nodes[@]}"; do stop_daemon "$n"; done
  stop_nginx
  if [[ ${KEEP:-0} == 1 ]]; then note "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP  # through cleanup: the nginx masters are daemons, they would stay

# Starts a run's origin and its three nodes, node N asking SOCKET_PREFIX-N.sock.
start_nodes() {  # run origin socket-prefix addr...
  local dir="$work/$1" origin="$2" prefix="$3" i
  shift 3
  mkdir -p "$dir"
  chmod 0711 "$dir"
  NGINX_WORKERS=$workers bash "$bed" start-origin "$dir" "${origin%:*}" "${origin#*:}"
  for i in 0 1 2; do
    NGINX_WORKERS=$workers bash "$bed" start "$dir" "${nodes[$i]}" "$1" "$origin" \
      "$prefix-${nodes[$i]}.sock" "$max_size" "$inactive"
    shift
  done
}

origin_fetches() {  # run: once the origin has logged every miss the answers name, or 15 s
  python3 "$lab" wait-origin "$work/$1/origin/logs/access.log" "$work/$1.tsv" 15 >/dev/null
  bash "$bed" origin-fetches "$work/$1"
}

control() { echo "ipc://$work/pb-$1/control.sock"; }
stats() { "$cli" --json --control "$(control "$1")" stats; }
json_get() {  # node python-expression-on-s
  stats "$1" | python3 -c "import json, sys; s = json.load(sys.stdin); print($2)"
}

write_daemon_config() {  # index
  local i=$1 n=${nodes[$1]} j
  {
    echo "node_id = \"$n\""
    echo "listen = \"tcp://${addrs[$i]}:0\""
    echo "data_dir = \"$work/pb-$n\""
    echo "curve = false"
    echo "key_scheme = \"nginx-md5\""
    echo "capacity = $capacity"
    echo "gossip_interval = \"$gossip_interval\""
    echo "snapshot_interval = 0"
    echo "nginx_cache_key = \"\$scheme\$host\$request_uri\""
    echo "nginx_route_socket = \"$work/run/route-$n.sock\""
    echo "nginx_route_socket_group = \"www-data\""
    local siblings=()
    for j in 0 1 2; do siblings+=("${nodes[$j]} = \"${addrs[$j]}:8081\""); done
    (IFS=,; echo "nginx_siblings = { ${siblings[*]} }")
    if ((i > 0)); then printf '[[seeds]]\nendpoint = "%s"\n' "$(cat "$work/pb-a/peer.endpoint")"; fi
    echo "[[feeds]]"
    echo "path = \"$work/peerbloom/$n/cache\""
    echo "format = \"nginx-cache\""
    echo "levels = \"1:2\""
  } >"$work/pb-$n.toml"
  chmod 0644 "$work/pb-$n.toml"
}

start_daemon() {  # index
  local n=${nodes[$1]}
  mkdir -p "$work/pb-$n"
  chown nobody:nogroup "$work/pb-$n"
  chmod 0700 "$work/pb-$n"
  write_daemon_config "$1"
  setpriv --pdeathsig=SIGKILL --reuid=nobody --regid=nogroup --groups=www-data \
    --inh-caps=+dac_read_search --ambient-caps=+dac_read_search \
    "$daemon" --config "$work/pb-$n.toml" --foreground 2>"$work/pb-$n.log" &
  pid_of[$n]=$!
  wait_for "kill -0 ${pid_of[$n]} && stats $n && test -s $work/pb-$n/peer.endpoint" 30 ||
    { tail -n 20 "$work/pb-$n.log" >&2; die "peerbloomd $n did not start (log above)"; }
}

gossip_out() {  # total messages_out and bytes_out of the three daemons
  local n m b msgs=0 bytes=0
  for n in "${nodes[@]}"; do
    read -r m b < <(json_get "$n" 's["gossip"]["messages_out"], s["gossip"]["bytes_out"]')
    msgs=$((msgs + m))
    bytes=$((bytes + b))
  done
  echo "$msgs $bytes"
}

live_set() {  # node: "DAEMON_FILES DAEMON_XOR|DISK_FILES DISK_XOR"
  local d
  d=$(json_get "$1" '"%d %s" % (s["nginx_feeds"][0]["files"], s["nginx_feeds"][0]["names_xor"])')
  echo "$d|$(python3 "$repo/scripts/nginx-cache-xor" "$work/peerbloom/$1/cache")"
}
live_set_equal() { local v; v=$(live_set "$1"); [[ ${v%|*} == "${v#*|}" ]]; }

# ---- The two runs side by side, each with its own origin and caches: "none" on 127.0.8.11-13,
# its route sockets in a directory where nothing listens; "peerbloom" on 127.0.8.1-3 beside the
# daemons. nginx first (it creates its cache directories), then the daemons, b and c joining
# through a; the replay starts once every daemon counts the two others alive and has had their
# summaries.
mkdir -p "$work/run"
chown nobody:nogroup "$work/run"
chmod 0711 "$work/run"  # the package's /run/peerbloom: others may pass, not list
start_nodes none "$none_origin" "$work/run/nobody-listens" "${none_addrs[@]}"
start_nodes peerbloom "$origin" "$work/run/route" "${addrs[@]}"
for i in 0 1 2; do start_daemon "$i"; done
for n in "${nodes[@]}"; do
  wait_for "[[ \$(json_get $n 'min(s[\"gossip\"][\"members_alive\"], s[\"gossip\"][\"full_summaries_in\"])') -ge 2 ]]" 30 ||
    die "daemon $n does not see the two others alive: $(json_get "$n" 's["gossip"]')"
  wait_for "live_set_equal $n" 30 || die "daemon $n: live set is not its empty cache: $(live_set "$n")"
done
read -r gossip_msgs_before gossip_bytes_before < <(gossip_out)
note "replaying $requests requests at $rate/s to both runs"
replay_ms=$(python3 "$lab" replay "$requests" "$urls" "$alpha" "$rate" \
  "none,$work/none.tsv,$none_origin,8080,$(IFS=,; echo "${none_addrs[*]}")" \
  "peerbloom,$work/peerbloom.tsv,$origin,8080,$(IFS=,; echo "${addrs[*]}")")
read -r gossip_msgs gossip_bytes < <(gossip_out)
none_fetches=$(origin_fetches none)
pb_fetches=$(origin_fetches peerbloom)
# The daemons apply the cache directory's events as their loops turn: wait until each live set
# equals the directory (or 30 s), then record both.
for n in "${nodes[@]}"; do wait_for "live_set_equal $n" 30 || note "warning: live set of $n differs"; done
for n in "${nodes[@]}"; do stats "$n" >"$work/stats-$n.json"; done
# Route subrequests that failed in run peerbloom (timed out, refused, reset): nginx sent those
# misses to the origin whatever the daemon answered.
cat "$work"/peerbloom/{a,b,c}/logs/error.log | grep -F 'subrequest: "/_peerbloom_route"' |
  grep -v -F '[info]' >"$work/route-errors.log" || true

# ---- report
python3 - "$work/facts.json" <<PY
import json, subprocess, sys
def read(path): return json.load(open(path))
def live(v):
    d, k = v.split("|")
    return {"daemon": d, "disk": k}
rev = subprocess.run(["git", "-C", "$repo", "describe", "--always", "--dirty"],
                     capture_output=True, text=True).stdout.strip() or "unknown"
nginx = subprocess.run(["/usr/sbin/nginx", "-v"], capture_output=True, text=True).stderr.strip()
facts = {
    "params": {"build_arg": "$build_arg", "requests": $requests, "urls": $urls, "alpha": "$alpha",
               "rate": $rate, "capacity": $capacity, "workers": $workers,
               "gossip_interval": "$gossip_interval", "max_size": "$max_size",
               "inactive": "$inactive", "nginx": nginx.replace("nginx version: ", ""),
               "version": "built from " + rev, "wall_s": $((SECONDS - started))},
    "none": {"tsv": "$work/none.tsv", "replay_ms": $replay_ms, "origin_fetches": $none_fetches},
    "peerbloom": {"tsv": "$work/peerbloom.tsv", "replay_ms": $replay_ms,
                  "origin_fetches": $pb_fetches, "route_errors": "$work/route-errors.log",
                  "gossip": {"messages": $((gossip_msgs - gossip_msgs_before)),
                             "bytes": $((gossip_bytes - gossip_bytes_before))},
                  "stats": {n: read("$work/stats-%s.json" % n) for n in "${nodes[*]}".split()}},
    "live_set": {"a": live("$(live_set a)"), "b": live("$(live_set b)"), "c": live("$(live_set c)")},
}
json.dump(facts, open(sys.argv[1], "w"), indent=1)
PY
status=0
python3 "$lab" report "$out" "$work/facts.json" || status=$?
note "report written to $out in $((SECONDS - started)) s"
((status == 0)) || die "some checks failed (see the report's Checks section)"
