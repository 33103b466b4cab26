#!/usr/bin/env bash
# Soak test, outside CI: 6 peerbloomd on loopback with 5 % of peer messages dropped
# (test_fault_drop), churn through each node's line feed, lookups from every node, one node
# (of n2..n6 in turn) killed with -9 or stopped and restarted every minute. n1 is never
# restarted: its RSS over the whole run must be flat. Every daemon's RSS is sampled every 5 s
# and plotted to docs/results/soak-rss.png (gnuplot, installed from Debian if missing).
# False negatives are counted every 30 s: every running node is asked about a sample of the
# keys each settled node holds (added more than 15 s ago and not removed; a node counts as
# settled 20 s after it started). The run fails on any false negative.
#
# n1's summary size (log2 of its bits) is sampled with RSS into summary.dat: the summary and
# every copy of it grow with the live set, so a live set that grows (--live N with N above
# what the run reaches) makes RSS grow by steps at each doubling of the summary.
#
# Usage: scripts/soak.sh [--minutes N] [--live KEYS] [--port-base P] [--build DIR] [--out DIR]
#        (make soak MINUTES=N)
set -euo pipefail
minutes=10
live=10000
port_base=17400
build=build
out=docs/results
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --live) live="$2"; shift 2 ;;
    --port-base) port_base="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--minutes N] [--live KEYS] [--port-base P] [--build DIR] [--out DIR]" >&2
       exit 2 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
daemon="$build/daemon/peerbloomd"
cli="$build/cli/peerbloom"
[ -x "$daemon" ] && [ -x "$cli" ] || { echo "build peerbloomd and peerbloom_cli first" >&2; exit 2; }
command -v gnuplot >/dev/null || apt-get install -y gnuplot-nox >/dev/null
mkdir -p "$out"
work="$(mktemp -d /tmp/peerbloom-soak.XXXXXX)"
nodes=(n1 n2 n3 n4 n5 n6)
declare -A pid low high started
cleanup() {
  for n in "${nodes[@]}"; do
    if [ -n "${pid[$n]:-}" ]; then kill -9 "${pid[$n]}" 2>/dev/null || true; fi
  done
}
trap cleanup EXIT

for n in "${nodes[@]}"; do
  mkdir -p "$work/$n"
  "$cli" keygen -o "$work/$n/node.key" >/dev/null
  "$cli" keygen --authorized-line "$work/$n/node.key" "$n" >>"$work/authorized_keys"
  : >"$work/$n/feed"
  low[$n]=0; high[$n]=0
done

port() { echo $((port_base + ${1#n})); }
write_config() {
  local n=$1
  {
    echo "node_id = \"$n\""
    echo "listen = \"tcp://127.0.0.1:$(port "$n")\""
    echo "data_dir = \"$work/$n\""
    echo "authorized_keys = \"$work/authorized_keys\""
    echo "cluster_secret = \"soak\""
    echo "key_scheme = \"raw\""
    echo "capacity = 200000"
    echo "gossip_interval = \"500ms\""
    echo "failure_timeout = \"5s\""
    echo "anti_entropy_interval = \"2s\""
    echo "snapshot_interval = \"10s\""
    echo "log_level = \"warn\""
    echo "test_fault_drop = 0.05"
    echo "[[feeds]]"
    echo "path = \"$work/$n/feed\""
    if [ "$n" != n1 ]; then
      echo "[[seeds]]"
      echo "endpoint = \"tcp://127.0.0.1:$(port n1)\""
      echo "public_key_file = \"$work/n1/node.key.pub\""
    fi
  } >"$work/$n/peerbloomd.toml"
}
ctl() { local n=$1; shift; "$cli" --timeout 20000 --control "ipc://$work/$n/control.sock" "$@"; }
start() {
  local n=$1
  write_config "$n"
  "$daemon" --config "$work/$n/peerbloomd.toml" --foreground >>"$work/$n/stderr.log" 2>&1 &
  pid[$n]=$!
  started[$n]=$SECONDS
  for _ in $(seq 200); do ctl "$n" stats >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "soak: $n did not start" >&2; tail "$work/$n/stderr.log" >&2; exit 1
}

# Churn: each node's feed gains 100 keys a second; once it holds `live` keys (default 10,000)
# it also loses its 100 oldest a second, so the live set (and with it the summary's size) stays
# constant and any growth of RSS after that is the daemon's, not the workload's.
churn() {
  for n in "${nodes[@]}"; do
    local h=${high[$n]} l=${low[$n]}
    {
      for i in $(seq "$h" $((h + 99))); do echo "+ soak/$n/$i"; done
      if [ $((h - l)) -ge "$live" ]; then
        for i in $(seq "$l" $((l + 99))); do echo "- soak/$n/$i"; done
      fi
    } >>"$work/$n/feed"
    high[$n]=$((h + 100))
    if [ $((h - l)) -ge "$live" ]; then low[$n]=$((l + 100)); fi
  done
}

# Asks every running node about 200 settled keys of every settled node.
false_negatives=0
checks=0
check() {
  local settled_high
  for holder in "${nodes[@]}"; do
    [ $((SECONDS - ${started[$holder]})) -ge 20 ] || continue
    settled_high=$((${high[$holder]} - 1500))  # 15 s of churn back
    [ "$settled_high" -gt $((${low[$holder]} + 200)) ] || continue
    local keys="$work/sample"
    local first=$((${low[$holder]} + 100))
    local last=$((first + 7 * 199))
    if [ "$last" -gt "$settled_high" ]; then last=$settled_high; fi
    seq "$first" 7 "$last" | sed "s|^|soak/$holder/|" >"$keys"
    for observer in "${nodes[@]}"; do
      local answers missing asked
      answers=$(ctl "$observer" who-has --key - <"$keys") || continue
      asked=$(wc -l <"$keys")
      missing=$(grep -cvE "[:,] $holder \(" <<<"$answers" || true)
      checks=$((checks + asked))
      if [ "$missing" -gt 0 ]; then
        echo "soak: FALSE NEGATIVES: $observer misses $missing of $asked keys of $holder" >&2
        false_negatives=$((false_negatives + missing))
      fi
    done
  done
}

sample_rss() {
  for n in "${nodes[@]}"; do
    local kb
    kb=$(awk '/^VmRSS/ {print $2}' "/proc/${pid[$n]}/status" 2>/dev/null || echo)
    if [ -n "$kb" ]; then echo "$SECONDS $n $kb" >>"$work/rss.dat"; fi
  done
  local bits
  bits=$(ctl n1 stats --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["log2_bits"])' 2>/dev/null ||
    true)
  if [ -n "$bits" ]; then echo "$SECONDS $bits" >>"$work/summary.dat"; fi
}

for n in "${nodes[@]}"; do start "$n"; done
echo "soak: 6 daemons in $work for $minutes min"
end=$((SECONDS + minutes * 60))
next_restart=$((SECONDS + 60))
next_check=$((SECONDS + 30))
next_rss=$SECONDS
turn=0
while [ $SECONDS -lt "$end" ]; do
  churn
  if [ $SECONDS -ge "$next_rss" ]; then sample_rss; next_rss=$((SECONDS + 5)); fi
  if [ $SECONDS -ge "$next_check" ]; then check; next_check=$((SECONDS + 30)); fi
  if [ $SECONDS -ge "$next_restart" ]; then
    victim=${nodes[$((1 + turn % 5))]}
    if [ $((turn % 2)) -eq 0 ]; then kill -9 "${pid[$victim]}"; else kill "${pid[$victim]}"; fi
    wait "${pid[$victim]}" 2>/dev/null || true
    start "$victim"
    turn=$((turn + 1))
    next_restart=$((SECONDS + 60))
  fi
  sleep 1
done
check

# RSS of n1 (never restarted): the mean of the last fifth against the second fifth of the run.
read -r early late < <(awk -v t="$((minutes * 60))" '$2 == "n1" {
    if ($1 >= t * 0.2 && $1 < t * 0.4) { e += $3; ne++ }
    if ($1 >= t * 0.8) { l += $3; nl++ } }
  END { printf "%d %d\n", ne ? e / ne : 0, nl ? l / nl : 0 }' "$work/rss.dat")
growth=$(awk -v e="$early" -v l="$late" 'BEGIN { printf "%.1f", e ? (l - e) * 100 / e : 0 }')
# Least-squares slope of n1's RSS over the second half of the run, KiB per minute.
slope=$(awk -v t="$((minutes * 60))" '$2 == "n1" && $1 >= t / 2 {
    n++; sx += $1; sy += $3; sxx += $1 * $1; sxy += $1 * $3 }
  END { d = n * sxx - sx * sx; printf "%.1f", d ? 60 * (n * sxy - sx * sy) / d : 0 }' \
  "$work/rss.dat")
plot="$out/soak-rss.png"
{
  echo "set terminal png size 900,500"
  echo "set output '$plot'"
  echo "set title 'peerbloomd RSS, 6 nodes, 5 % loss, churn, a restart a minute ($minutes min)'"
  echo "set xlabel 'seconds'"
  echo "set ylabel 'RSS (MiB)'"
  echo "set yrange [0:*]"
  echo "set key outside"
  printf "plot "
  for n in "${nodes[@]}"; do
    awk -v n="$n" '$2 == n {print $1, $3}' "$work/rss.dat" >"$work/rss-$n.dat"
    printf "'%s' using 1:(\$2 / 1024) with linespoints pointsize 0.5 title '%s', " \
      "$work/rss-$n.dat" "$n"
  done
  echo
} | sed 's/, $//' | gnuplot
cp "$work/rss.dat" "$out/soak-rss.dat"
cp "$work/summary.dat" "$out/soak-summary.dat" 2>/dev/null || true
echo "soak: $minutes min, $turn restarts, $checks lookups checked, $false_negatives false" \
  "negatives; n1 RSS $((early / 1024)) MiB -> $((late / 1024)) MiB ($growth %)," \
  "slope over the second half $slope KiB/min; plot $plot"
[ "$false_negatives" -eq 0 ]
