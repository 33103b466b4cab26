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
tool=$src/tests/package/deploy_guide_tool.py
guide=$src/docs/deploy-squid.md
hosts=(admin cache-01 cache-02 cache-03)
declare -A addr=([admin]=10.0.0.1 [cache-01]=10.0.0.11 [cache-02]=10.0.0.12 [cache-03]=10.0.0.13)
caches=(cache-01 cache-02 cache-03)
ns=pbguide

skip() {
  echo "skipped: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  [[ -f ${work:-}/log ]] && { echo "--- last lines of $work/log:" >&2; tail -n 30 "$work/log" >&2; }
  exit 1
}
[[ $(id -u) -eq 0 ]] || skip "emulating hosts and installing a .deb need root"
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || skip "not a Debian system"
command -v dpkg-shlibdeps >/dev/null || skip "dpkg-shlibdeps is missing (Debian package dpkg-dev)"
for c in ip nsenter unshare python3; do command -v $c >/dev/null || skip "$c is missing"; done
if dpkg-query -W -f='${Status}' peerbloom 2>/dev/null | grep -q "installed"; then
  skip "the peerbloom package is already installed on this machine; not replacing it"
fi
[[ ! -e /usr/bin/peerbloomd ]] || skip "/usr/bin/peerbloomd exists and is not from the package"
ip netns list | grep -q "^$ns-" && skip "network namespaces $ns-* exist: another run is going on"
missing=()
for p in squid prometheus curl; do
  dpkg-query -W -f='${Status}' $p 2>/dev/null | grep -q "install ok installed" || missing+=($p)
done
if [[ ${#missing[@]} -gt 0 ]]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 \
    --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    skip "cannot install ${missing[*]} with apt-get"
fi
ip netns add $ns-probe 2>/dev/null || skip "cannot make network namespaces here"
ip netns del $ns-probe

# Everything of a run lives in WORK, which every emulated host sees: not under /tmp, /run,
# /dev/shm or /root (each host has its own), wherever the build tree is.
work=/var/tmp/peerbloom-deploy-guide
rm -rf "$work"
mkdir -p "$work/bin" "$work/pkg" "$work/pristine" "$work/blocks" "$work/hosts"
# The tool runs inside the hosts too: from WORK, not from a source tree they may not see.
cp "$tool" "$work/bin/deploy_guide_tool.py"
tool=$work/bin/deploy_guide_tool.py
: >"$work/log"
echo "work directory: $work"
exec 3>>"$work/log"
log() { echo "$(date +%T.%3N) $*" >&3; }

made_dirs=() installed=0 pids=()
user_existed=0
getent passwd peerbloom >/dev/null && user_existed=1
# Every process in a host's mount namespace: the services, their helpers, the holder.
kill_hosts() {
  local p mnt proc
  for p in "${pids[@]}"; do
    mnt=$(readlink "/proc/$p/ns/mnt" 2>/dev/null) || continue
    for proc in /proc/[0-9]*; do
      if [[ $(readlink "$proc/ns/mnt" 2>/dev/null) == "$mnt" ]]; then
        kill -KILL "${proc#/proc/}" 2>/dev/null || true
      fi
    done
  done
  if [[ -n ${origin_pid:-} ]]; then kill -KILL "$origin_pid" 2>/dev/null || true; fi
}
cleanup() {
  local code=$? h
  set +e
  kill_hosts
  for h in "${hosts[@]}" bridge; do ip netns del "$ns-$h" 2>/dev/null; done
  if [[ $installed -eq 1 ]] && dpkg-query -W -f='${Status}' peerbloom 2>/dev/null | grep -q installed; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq -o DPkg::Lock::Timeout=300 peerbloom \
      >>"$work/log" 2>&1 || echo "purge failed: see $work/log"
  fi
  if [[ $user_existed -eq 0 ]] && getent passwd peerbloom >/dev/null; then
    deluser --system --quiet peerbloom >/dev/null 2>&1 || userdel peerbloom
  fi
  for d in "${made_dirs[@]}"; do [[ -d $d ]] && rmdir "$d" 2>/dev/null; done
  # The run's files stay in /var/tmp for a look after a failure.
  [[ $code -eq 0 ]] && rm -rf "$work"
  exit $code
}
trap cleanup EXIT

# --- the package, and Debian's pristine files of Squid and Prometheus ----------------------
(cd "$build" && "$cpack" -G DEB -B "$work/pkg/cpack" >>"$work/log" 2>&1) || fail "cpack failed"
debs=("$work"/pkg/cpack/peerbloom_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "cpack made no single peerbloom_*.deb"
deb_name=$(basename "${debs[0]}")
cp "${debs[0]}" "$work/pkg/$deb_name"
cp "${debs[0]}" "$work/pkg/peerbloom.deb"
dpkg-deb -x "${debs[0]}" "$work/pkg/root"

# A package's pristine configuration: its conffiles under DIR, as Debian ships them (the
# machine's copies, refused when changed).
pristine() {  # package dir
  local f sum mode
  mkdir -p "$work/pristine/$1"
  while read -r f sum _; do
    [[ $f == "$2"/* ]] || continue
    [[ -f $f && $(md5sum <"$f" | cut -d' ' -f1) == "$sum" ]] ||
      skip "$f differs from Debian's $1 package: this test needs its pristine configuration"
    mkdir -p "$work/pristine/$1/$(dirname "${f#"$2"/}")"
    cp -p "$f" "$work/pristine/$1/${f#"$2"/}"
  done < <(dpkg-query -W -f='${Conffiles}\n' "$1")
  mode=$(stat -c %a "$2") && chmod "$mode" "$work/pristine/$1"
}
pristine squid /etc/squid
pristine prometheus /etc/prometheus
stat -c %a /var/log/squid >"$work/pristine/squid-log.mode"
stat -c %a /var/spool/squid >"$work/pristine/squid-spool.mode"

# --- the hosts ------------------------------------------------------------------------------
cp "$src"/tests/package/deploy_guide/{apt-get,scp,ssh,systemctl} "$work/bin/"
echo $$ >"$work/root.pid"
echo "HOME=/root USER=root LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8 TERM=dumb" \
  "PATH=$work/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" >"$work/login.env"
# The mount points of the hosts' own /etc/peerbloom and /var/lib/peerbloom; the package's
# install on the machine takes them over, its purge removes them.
for d in /etc/peerbloom /var/lib/peerbloom; do
  [[ -d $d ]] || { mkdir "$d" && made_dirs+=("$d"); }
done
ip netns add $ns-bridge
ip -n $ns-bridge link add br0 type bridge
ip -n $ns-bridge link set br0 up
: >"$work/hosts.map"
i=0
for h in "${hosts[@]}"; do
  i=$((i + 1))
  root=$work/hosts/$h
  mkdir -p "$root"/{etc-peerbloom,var-lib-peerbloom,etc-squid,spool-squid,log-squid} \
    "$root"/{etc-prometheus,var-lib-prometheus,root}
  chmod 0700 "$root/root"
  for o in "${hosts[@]}"; do
    [[ $o == admin ]] && echo "${addr[$o]} $o" || echo "${addr[$o]} $o.example.net $o"
  done >"$root/hosts"
  (echo "127.0.0.1 localhost" && cat "$root/hosts") >"$root/hosts.tmp" && mv "$root/hosts.tmp" "$root/hosts"
  echo "nameserver 127.0.0.1" >"$root/resolv.conf"
  ip netns add "$ns-$h"
  ip -n $ns-bridge link add "v$i" type veth peer name eth0 netns "$ns-$h"
  ip -n $ns-bridge link set "v$i" master br0 up
  ip -n "$ns-$h" addr add "${addr[$h]}/24" dev eth0
  ip -n "$ns-$h" link set eth0 up
  ip -n "$ns-$h" link set lo up
  # The holder: its mount and UTS namespaces are the host's; it sleeps until killed.
  nsenter --net="/run/netns/$ns-$h" unshare --mount --uts --propagation private -- \
    bash -c '
      set -e
      hostname "$1"
      r=$2
      mount --bind "$r/etc-peerbloom" /etc/peerbloom
      mount --bind "$r/var-lib-peerbloom" /var/lib/peerbloom
      mount --bind "$r/etc-squid" /etc/squid
      mount --bind "$r/spool-squid" /var/spool/squid
      mount --bind "$r/log-squid" /var/log/squid
      mount --bind "$r/etc-prometheus" /etc/prometheus
      mount --bind "$r/var-lib-prometheus" /var/lib/prometheus
      mount --bind "$r/root" /root
      mount --bind "$r/hosts" /etc/hosts
      mount --bind "$r/resolv.conf" /etc/resolv.conf
      mount -t tmpfs -o mode=0755 tmpfs /run
      mount -t tmpfs -o mode=1777 tmpfs /tmp
      mount -t tmpfs -o mode=1777 tmpfs /dev/shm
      touch "$r/ready"
      exec sleep infinity' holder "$h" "$root" </dev/null >>"$work/log" 2>&1 &
  pids+=($!)
  disown
  echo "$h ${addr[$h]} $!" >>"$work/hosts.map"
done
for h in "${hosts[@]}"; do
  for _ in $(seq 100); do [[ -f $work/hosts/$h/ready ]] && break; sleep 0.1; done
  [[ -f $work/hosts/$h/ready ]] || fail "host $h did not come up"
done
on() {  # HOST COMMAND...: as root on that host, through the ssh stand-in
  local h=$1
  shift
  "$work/bin/ssh" "root@$h" "$@" </dev/null
}
cp "$work/pkg/$deb_name" "$work/hosts/admin/root/"

# The origin on the admin host: every path answers a cacheable page.
nsenter -t "${pids[0]}" -m -u -n -- python3 "$tool" origin 10.0.0.1 80 "$work/origin.log" \
  >>"$work/log" 2>&1 &
origin_pid=$!
disown
for _ in $(seq 100); do on admin curl -sf -o /dev/null http://10.0.0.1/ && break; sleep 0.1; done
for h in "${hosts[@]}"; do
  on "$h" curl -sf -o /dev/null http://10.0.0.1/ || fail "$h does not reach the origin"
done
log "hosts up"

# --- the guide ------------------------------------------------------------------------------
now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$@"; }
python3 "$tool" blocks "$guide" "$work/blocks" >"$work/blocks/list" || fail "reading the guide"
[[ $(wc -l <"$work/blocks/list") -ge 10 ]] || fail "the guide has too few run blocks"

# Runs block N on HOST until it succeeds (at most UNTIL s) or once; fails with its text.
run_block() {  # n host until line
  local n=$1 h=$2 until=$3 line=$4 out=$work/blocks/$1.$2.out deadline
  deadline=$(($(date +%s) + until))
  log "block $n (guide line $line) on $h"
  block_t0=$(now)
  while ! on "$h" bash -e "$work/blocks/$n.sh" >"$out" 2>&1; do
    if [[ $until -eq 0 || $(date +%s) -ge $deadline ]]; then
      echo "--- docs/deploy-squid.md line $line, on $h (until=$until):" >&2
      cat "$work/blocks/$n.sh" >&2
      echo "--- its output:" >&2
      cat "$out" >&2
      fail "a block of the guide failed on $h"
    fi
    sleep 0.2
  done
  cat "$out" >&3
}

# Checks after the blocks with an id=NAME.
peers_json() { on "$1" peerbloom --json peers; }
check_block() {  # id n
  local out=$work/blocks/$2 h o
  case $1 in
    secret)
      # One secret on the three nodes, still readable by the daemon's group only.
      [[ $(awk 'NR % 2 == 1 { print $1 }' "$out.admin.out" | sort -u | wc -l) -eq 1 &&
        $(awk 'NR % 2 == 0' "$out.admin.out" | sort -u) == "root:peerbloom 640" &&
        $(wc -l <"$out.admin.out") -eq 6 ]] || fail "secret: $(cat "$out.admin.out")"
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
installed=1  # by the apt-get stand-in, on the machine, at the guide's first install
t_start=$(now)
while read -r n hostlist until id line; do
  IFS=, read -ra on_hosts <<<"$hostlist"
  for h in "${on_hosts[@]}"; do run_block "$n" "$h" "$until" "$line"; done
  [[ $id == - ]] || check_block "$id" "$n"
done <"$work/blocks/list"
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
  for h in "${caches[@]}"; do echo "${addr[$h]}=$work/hosts/$h/log-squid/access.log"; done
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
# The daemons read the route log as Squid writes it: wait until they count every routed hit.
routed_hits=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["routed"])' "$work/tally.a.json")
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
kill_hosts
dpkg -L peerbloom >"$work/package.files"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq -o DPkg::Lock::Timeout=300 peerbloom \
  >>"$work/log" 2>&1 || fail "apt-get purge failed"
left=$(
  while read -r f; do if [[ -e $f && ! -d $f ]]; then echo "$f"; fi; done <"$work/package.files"
  for d in /etc/peerbloom /var/lib/peerbloom /run/peerbloom /usr/share/peerbloom \
    /usr/share/doc/peerbloom; do if [[ -e $d ]]; then echo "$d"; fi; done
)
[[ -z $left ]] || fail "purge left: $left"
! getent passwd peerbloom >/dev/null && ! getent group peerbloom >/dev/null ||
  fail "purge left the peerbloom user or group"
echo "the guide ran on four emulated hosts; the package is purged"
