#!/usr/bin/env bash
# Regenerates docs/results/: the Summary Cache comparison (ICP against peerbloom summaries
# against an exact directory) for 4..64 proxies, on a synthetic Zipf stream and on the
# replay of a Squid access.log, as tables (summary-cache.md) and PNG plots, with the machine
# described. Builds what it needs; installs python3-matplotlib if it is missing.
# Usage: scripts/results.sh [BUILD_DIR]   (about 2-4 minutes on 2 cores)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[[ $build = /* ]] || build=$root/$build
out=$root/docs/results
log=$out/results.log
mkdir -p "$out"
: >"$log"

# Debian's matplotlib belongs to Debian's python3, which a python on PATH (pyenv, venv) hides.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
  echo "results: installing python3-matplotlib (log: $log)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get install -y -o DPkg::Lock::Timeout=300 python3-matplotlib >>"$log" 2>&1
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
echo "results: synthetic Zipf stream, N = 4..64"
(time "$sim" "${zipf_flags[@]}" >"$out/zipf.tsv") 2>>"$log"

# The replay: the same kind of stream written once as a Squid native access.log by 64
# client networks (10.S.S.0/24), replayed with network S served by proxy S mod N.
echo "results: access.log replay, N = 4..64"
"$sim" --write-access-log="$work/access.log" --sites=64 --requests=500000 --objects=500000 \
  --local-objects=50000 --alpha=0.75 --local-share=0.3 --rate=20 --seed=2 >>"$log" 2>&1
(time "$sim" --access-log="$work/access.log" --site-of=subnet --cache-objects=5000 \
  --fpr=0.01 --seed=2 >"$out/access-log.tsv") 2>>"$log"
head -3 "$work/access.log" >"$out/access-log-head.txt"

echo "results: tables and plots"
"$py" "$root/scripts/results_report.py" "$out" "${zipf_flags[*]}" >>"$log" 2>&1
echo "results: wrote $out/summary-cache.md and $(ls "$out"/*.png | wc -l) plots"
