#!/usr/bin/env bash
# Regenerates docs/results/: the Summary Cache comparison (ICP against peerbloom summaries
# against an exact directory) for 4..64 proxies, on a synthetic Zipf stream and on the
# replay of a Squid access.log, as tables (summary-cache.md) and PNG plots, with the machine
# described. Builds what it needs; installs python3-matplotlib if it is missing
# (scripts/install-deps.sh --with-results).
# Then, where it can run (root), the same comparison at small scale on three real Squids:
# scripts/squid-lab-compare.sh writes squid-lab.md.
# Usage: scripts/results.sh [BUILD_DIR]   (about 5 minutes on 2 cores shared with other work,
# plus the Squid lab's few minutes)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[[ $build = /* ]] || build=$root/$build
out=$root/docs/results
log=$build/results.log
mkdir -p "$out" "$build"
: >"$log"

# Debian's matplotlib belongs to Debian's python3, which a python on PATH (pyenv, venv) hides.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
  PEERBLOOM_APT_LOG=$log bash "$root/scripts/install-deps.sh" --with-results
fi

echo "results: building summary_cache_sim"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >>"$log" 2>&1
cmake --build "$build" -j2 --target summary_cache_sim >>"$log" 2>&1
sim=$build/bench/summary_cache_sim

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The synthetic stream: 1e6 requests, Zipf(0.8) over 1e6 shared objects, 30 % of each
# proxy's requests for its own 1e5 objects, 50 requests/s per proxy, LRU of 5000 objects.
zipf_flags=(--requests=1000000 --objects=1000000 --local-objects=100000 --alpha=0.8
            --local-share=0.3 --rate=50 --cache-objects=5000 --fpr=0.01 --seed=1)
# The replay: the same kind of stream written once as a Squid native access.log by 64
# client networks (10.S.S.0/24), replayed with network S served by proxy S mod N.
"$sim" --write-access-log="$work/access.log" --sites=64 --requests=500000 --objects=500000 \
  --local-objects=50000 --alpha=0.75 --local-share=0.3 --rate=20 --seed=2 >>"$log" 2>&1
head -3 "$work/access.log" >"$out/access-log-head.txt"

# The two runs are independent: one core each.
echo "results: synthetic Zipf stream and access.log replay, N = 4..64 (a few minutes)"
timed() {  # timed SECONDS_FILE OUT_FILE COMMAND...: runs it, records its wall time
  local secs=$1 tsv=$2 start=$SECONDS
  shift 2
  "$@" >"$tsv" 2>>"$log"
  echo $((SECONDS - start)) >"$secs"
}
timed "$work/zipf.s" "$out/zipf.tsv" "$sim" "${zipf_flags[@]}" &
zipf_pid=$!
timed "$work/log.s" "$out/access-log.tsv" "$sim" --access-log="$work/access.log" \
  --site-of=subnet --cache-objects=5000 --fpr=0.01 --seed=2 &
log_pid=$!
wait "$zipf_pid"
wait "$log_pid"
zipf_s=$(cat "$work/zipf.s")
log_s=$(cat "$work/log.s")

# The rate sweep: the same requests re-timed from 0.01 to 1,000 requests/s per proxy.
rates=0.01,0.03,0.1,0.3,0.5,1,3,10,30,100,300,1000
echo "results: rate sweep, 0.01 to 1000 requests/s per proxy, N = 4..32 (a few minutes)"
timed "$work/rates.s" "$out/rates.tsv" "$sim" "${zipf_flags[@]}" --nodes=4,8,16,32 \
  --rates=$rates &
rates_pid=$!
timed "$work/rates-log.s" "$out/rates-access-log.tsv" "$sim" --access-log="$work/access.log" \
  --site-of=subnet --cache-objects=5000 --fpr=0.01 --seed=2 --warmup=0.98 --nodes=4,8,16,32 \
  --rates=$rates &
rates_log_pid=$!
wait "$rates_pid"
wait "$rates_log_pid"

echo "results: tables and plots"
"$py" "$root/scripts/results_report.py" "$out" "${zipf_flags[*]}" "$zipf_s" "$log_s" >>"$log" 2>&1
echo "results: wrote $out/summary-cache.md and $(ls "$out"/*.png | wc -l) plots"

if [[ $(id -u) -ne 0 ]]; then
  echo "results: skipping the real-Squid and nginx labs (squid-lab.md, nginx-lab.md): they need root"
  exit 0
fi
if { ! command -v squid >/dev/null 2>&1 && [[ ! -x /usr/sbin/squid ]]; } ||
  [[ ! -x /usr/sbin/nginx ]]; then
  PEERBLOOM_APT_LOG=$log bash "$root/scripts/install-deps.sh" --with-squid
fi
echo "results: building peerbloomd and peerbloom for the real-Squid lab"
cmake --build "$build" -j2 --target peerbloomd peerbloom_cli >>"$log" 2>&1
echo "results: ICP siblings against peerbloom routing on three real Squids"
bash "$root/scripts/squid-lab-compare.sh" "$build" >>"$log" 2>&1
echo "results: wrote $out/squid-lab.md"
echo "results: nginx caches with and without peerbloom routing"
bash "$root/scripts/nginx-lab.sh" "$build" >>"$log" 2>&1
echo "results: wrote $out/nginx-lab.md"
