#!/usr/bin/env bash
# Runs docs/deploy-squid.md: every block after a `<!-- run: HOST... [until=N] [id=NAME] -->`
# marker, in order, on each host named, on four hosts emulated on this machine (admin 10.0.0.1,
# cache-01..03 10.0.0.11-13; the guide's section "How this guide is tested" says how). Then
# replays a request stream through the three Squids with and without the routing file,
# stops and starts daemons, and prints the figures the guide quotes, failing on what the guide
# promises and does not hold. Purges the package at the end; leaves no process, namespace or
# bridge behind.
#
# Needs root, network namespaces, Squid and Prometheus (installed here with apt-get when
# missing), and a machine without peerbloom installed; skipped (exit 77) with the reason
# otherwise. Its chatter goes to WORK/log (WORK is printed); a failure prints the block, its
# output and the log's tail.
# Usage: deploy_guide_test.sh BUILD_DIR CPACK_COMMAND
set -eEuo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR
build=$(cd "$1" && pwd) cpack=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
guide=$src/docs/deploy-squid.md
ns=pbguide
# Everything of a run lives in WORK, which every emulated host sees: not under /tmp, /run,
# /dev/shm or /root (each host has its own), wherever the build tree is.
work=/var/tmp/peerbloom-deploy-guide
# shellcheck source=deploy_hosts.sh
. "$src/tests/package/deploy_hosts.sh"

hosts_preflight squid prometheus curl
hosts_workdir
hosts_package "$build" "$cpack"
# Debian's pristine files of Squid and Prometheus, which the apt-get stand-in restores.
pristine squid /etc/squid
pristine prometheus /etc/prometheus
stat -c %a /var/log/squid >"$work/pristine/squid-log.mode"
stat -c %a /var/spool/squid >"$work/pristine/squid-spool.mode"
hosts_up /etc/squid /var/spool/squid /var/log/squid /etc/prometheus /var/lib/prometheus
origin_up

# Checks after the blocks with an id=NAME.
peers_json() { on "$1" peerbloom --json peers; }
check_block() {  # id n
  local out=$work/blocks/$2 h o
  case $1 in
    secret)
      check_secret "$out.admin.out"
      ;;
    peers)
      for h in "${caches[@]}"; do
        peers_json "$h" | python3 -c '
import json, sys
me, peers = sys.argv[1], {p["node_id"]: p for p in json.load(sys.stdin)}
others = {"cache-01", "cache-02", "cache-03"} - {me}
bad = [n for n in others if n not in peers or not peers[n]["alive"]
       or peers[n]["last_heard_ms_ago"] > 6500]
sys.exit("%s: not alive or not heard within 6.5 s: %s" % (me, bad) if bad else 0)' "$h" ||
          fail "peers: $(cat "$out".*.out)"
      done
      t_alive=$(now)
      ;;
    versions)
      python3 - "$out.admin.out" <<'PY' || fail "versions: $(cat "$out.admin.out")"
import re, sys
want, seen = None, 0
for line in open(sys.argv[1]):
    m = re.match(r"(\S+) publishes version (\d+)", line)
    if m:
        want = m.group(2)
        continue
    m = re.match(r"\s+(\S+) holds version (\d+)", line)
    if m:
        seen += 1
        if m.group(2) != want:
            sys.exit("a node holds another version than its member publishes")
sys.exit(0 if seen == 6 else "6 versions expected, %d shown" % seen)
PY
      ;;
    routed)
      grep -q 'TCP_MISS/200 .* FIRSTUP_PARENT/10.0.0.11 ' "$out.cache-02.out" &&
        grep -q ' cache-01 TCP_MISS/200 FIRSTUP_PARENT/cache-01 http://10.0.0.1/welcome.html' \
          "$out.cache-02.out" || fail "routed: $(cat "$out.cache-02.out")"
      t_routed=$(now)
      ;;
    false_hit)
      [[ $(cat "$out.admin.out") == $'200 MISS from cache-01.example.net\n200 HIT from cache-01.example.net' ]] ||
        fail "false hit: $(cat "$out.admin.out")"
      grep -q ' 10.0.0.11 /phantom.html$' "$work/origin.log" || fail "phantom.html not fetched"
      ;;
    helper)
      grep -Eq '^ +answered_peer +[1-9]' "$out.cache-02.out" || fail "helper: $(cat "$out.cache-02.out")"
      ;;
    purge)
      [[ $(sort "$out.cache-03.out") == $'cache-01: purged (HTTP 200)\ncache-02: purged (HTTP 200)\ncache-03: not held (its filter does not hold the URL)' ]] ||
        fail "purge: $(cat "$out.cache-03.out")"
      ;;
    purged)
      [[ $(cat "$out.admin.out") == $'10.0.0.11 504\n10.0.0.12 504\n10.0.0.13 504' ]] ||
        fail "purged: $(cat "$out.admin.out")"
      ;;
    stop)
      watch_stop "$block_t0" cache-03 cache-01 cache-02
      stopped=1
      ;;
    dead)
      # The guide restarts cache-03 as soon as cache-01 lists it dead; cache-02 may learn it
      # up to a gossip interval later. Both observations are measured, so wait for both.
      collect_watch
      ;;
  esac
}

# Once `systemctl stop peerbloomd` on NODE, begun at T0, has returned: the time from T0 until
# each observer lists NODE dead.
: >"$work/detect"
watch_stop() {  # t0 node observer...
  local t0=$1 node=$2 o
  shift 2
  watchers=()
  for o in "$@"; do
    on "$o" python3 "$tool" watch-peer "$node" dead 40 >"$work/watch.$node.$o" &
    watchers+=($!)
  done
  watch_t0=$t0 watch_node=$node watch_observers=("$@")
}
collect_watch() {
  local o t
  for p in "${watchers[@]}"; do wait "$p" || fail "an observer did not see $watch_node dead"; done
  watchers=()
  for o in "${watch_observers[@]}"; do
    t=$(elapsed "$watch_t0" "$(cat "$work/watch.$watch_node.$o")")
    echo "$t" >>"$work/detect"
    log "$watch_node dead at $o after $t s"
  done
}

watchers=()
run_guide 10
[[ -n ${t_routed:-} && -n ${t_alive:-} ]] || fail "the guide has no block id=routed or id=peers"
[[ -n ${stopped:-} ]] || fail "the guide has no block id=stop"
[[ ${#watchers[@]} -eq 0 ]] || fail "the guide has no block id=dead after its block id=stop"
printf '{"routed": %s, "alive": %s}\n' "$(elapsed "$t_start" "$t_routed")" \
  "$(elapsed "$t_start" "$t_alive")" >"$work/ready.json"
log "guide done: $(cat "$work/ready.json")"

# --- after the guide: the cluster under a request stream -----------------------------------
all_alive() {
  local h o
  for h in "${caches[@]}"; do
    for o in "${caches[@]}"; do
      [[ $o == "$h" ]] || on "$h" python3 "$tool" watch-peer "$o" alive 60 >/dev/null ||
        fail "$h does not list $o alive"
    done
  done
}
all_alive
routing_counters() {  # file
  local h
  for h in "${caches[@]}"; do on "$h" python3 "$tool" routing; done >"$1"
}
access_logs() {
  local h
  for h in "${caches[@]}"; do echo "${addr[$h]}=$(host_path "$h" /var/log/squid/access.log)"; done
}
routing_counters "$work/routing.before"
samplers=()
for h in "${caches[@]}"; do
  on "$h" python3 "$tool" heard 20 >"$work/heard.$h" &
  samplers+=($!)
done
on admin python3 "$tool" stream "$work/stream.a.json" /a/ 10.0.0.11 10.0.0.12 10.0.0.13 ||
  fail "the stream with routing"
for p in "${samplers[@]}"; do wait "$p" || fail "sampling HEARD"; done
for h in "${caches[@]}"; do on "$h" peerbloom --json peers >"$work/peers.$h"; done
mapfile -t logs < <(access_logs)
python3 "$tool" tally "$work/stream.a.json" "$work/origin.log" "${logs[@]}" >"$work/tally.a.json"
log "with routing: $(cat "$work/tally.a.json")"
# The daemons read the route log as Squid writes it: wait until they count every routed
# request, the hits and the false hits (the peer's resets). A false hit is counted once the
# peer has been heard from after the request, a few seconds later.
routed_hits=$(python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); print(t["routed"] + t["peer_resets"])' "$work/tally.a.json")
for _ in $(seq 100); do
  routing_counters "$work/routing.after"
  python3 - "$work/routing.before" "$work/routing.after" "$routed_hits" <<'PY' && break
import json, sys
hits = lambda p: sum(json.loads(l)["hits"] + json.loads(l)["false_hits"] for l in open(p))
sys.exit(hits(sys.argv[2]) - hits(sys.argv[1]) < int(sys.argv[3]))
PY
  sleep 0.2
done

# The helper's round trip, Squid's side, for URLs of the stream (held by a peer or not).
python3 -c 'import json, sys; [print(r["url"]) for r in json.load(open(sys.argv[1]))["records"][::4]]' \
  "$work/stream.a.json" >"$work/helper.urls"
on cache-02 runuser -u proxy -- python3 "$tool" helper-latency "$work/helper.urls" 500 \
  >"$work/helper.json" || fail "the helper's round trip"

# A URL fetched through one node, listed by who-has at the next.
: >"$work/propagate"
k=0
for pair in cache-01:cache-02 cache-02:cache-03 cache-03:cache-01 cache-01:cache-03 \
  cache-02:cache-01 cache-03:cache-02; do
  k=$((k + 1)) h=${pair%:*} o=${pair#*:}
  url=http://10.0.0.1/spread/$k.html
  on admin curl -sf -o /dev/null -x "http://${addr[$h]}:3128" "$url" || fail "fetch $url"
  t0=$(now)
  t=$(on "$o" python3 "$tool" watch-who-has "$url" "$h" 30) || fail "who-has at $o for $url"
  elapsed "$t0" "$t" >>"$work/propagate"
done

# SUMMARY AGE on a quiet cluster: the version stays, the age grows.
on cache-01 peerbloom --json peers >"$work/age.1"
sleep 2
on cache-01 peerbloom --json peers >"$work/age.2"
python3 - "$work/age.1" "$work/age.2" <<'PY' || fail "SUMMARY AGE does not behave as the guide says"
import json, sys
a, b = ({p["node_id"]: p for p in json.load(open(f))} for f in sys.argv[1:])
for n in a:
    if a[n]["version"] == b[n]["version"] and not b[n]["summary_age_ms"] >= a[n]["summary_age_ms"] + 1900:
        sys.exit("%s: version %d, age %d then %d ms" % (n, a[n]["version"], a[n]["summary_age_ms"], b[n]["summary_age_ms"]))
PY

# More failure detections: each other node's daemon stopped once, seen by the two others.
for h in cache-01 cache-02; do
  t0=$(now)
  on "$h" systemctl stop peerbloomd >>"$work/log" 2>&1 || fail "stop on $h"
  others=()
  for o in "${caches[@]}"; do [[ $o == "$h" ]] || others+=("$o"); done
  watch_stop "$t0" "$h" "${others[@]}"
  collect_watch
  on "$h" systemctl start peerbloomd >>"$work/log" 2>&1 || fail "start on $h"
done
all_alive

# The same stream without the routing file: Squids that never ask a peer.
for h in "${caches[@]}"; do
  on "$h" 'mv /etc/squid/conf.d/peerbloom-routing.conf /root/ && systemctl reload squid' \
    >>"$work/log" 2>&1 || fail "reconfiguring $h without routing"
done
for h in "${caches[@]}"; do
  for _ in $(seq 100); do
    on admin curl -s -o /dev/null -x "http://${addr[$h]}:3128" http://10.0.0.1/ready.html &&
      ! on "$h" ss -ltn 'sport = :3129' | grep -q LISTEN && break
    sleep 0.2
  done
done
on admin python3 "$tool" stream "$work/stream.b.json" /b/ 10.0.0.11 10.0.0.12 10.0.0.13 ||
  fail "the stream without routing"
python3 "$tool" tally "$work/stream.b.json" "$work/origin.log" "${logs[@]}" >"$work/tally.b.json"
log "without routing: $(cat "$work/tally.b.json")"

# The figures also go to BUILD_DIR/deploy_guide_figures.txt, which outlives the run.
python3 "$tool" figures "$work/tally.a.json" "$work/routing.before" "$work/routing.after" \
  "$work/tally.b.json" "$work/detect" "$work/propagate" "$work/helper.json" \
  "$work/ready.json" "$work/peers" "$work"/heard.cache-0? >"$work/figures" ||
  { cat "$work/figures"; fail "the figures"; }
echo "figure: the test from the guide's first command to here: $(elapsed "$t_start" "$(now)") s" \
  >>"$work/figures"
cat "$work/figures"
cp "$work/figures" "$build/deploy_guide_figures.txt"

# --- purge: nothing of peerbloom stays on the machine ---------------------------------------
purge_package
echo "the guide ran on four emulated hosts; the package is purged"
