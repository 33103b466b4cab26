#!/usr/bin/env bash
# `make bench`: builds the benchmarks (Release, in their own build directory), runs the
# headline ones one after another in the same run, prints one report and writes it to
# docs/results/bench.md with its PNG plots (scripts/bench_report.py). docs/benchmarks.md says
# what each figure is. Installs what it needs when missing (scripts/install-deps.sh
# --with-bench: matplotlib, redis-server; apt output goes to BUILD_DIR/bench.log).
# Nothing here asserts time; a benchmark exits non-zero only on a correctness failure (a
# false negative), and then the report is not written.
# Usage: scripts/bench.sh [BUILD_DIR]   (default build-bench; about 8 minutes on 2 idle cores,
# the build included)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-bench}
[[ $build = /* ]] || build=$root/$build
out=$root/docs/results
raw=$build/bench-raw
log=$build/bench.log
mkdir -p "$build" "$raw" "$out"
: >"$log"

PEERBLOOM_APT_LOG=$log bash "$root/scripts/install-deps.sh" --with-bench
# Debian's matplotlib belongs to Debian's python3, which a python on PATH (pyenv, venv) hides.
py=/usr/bin/python3
[ -x "$py" ] || py=python3

start=$SECONDS
cut -d' ' -f1 /proc/loadavg >"$raw/load-start.txt" 2>/dev/null || true
git -C "$root" rev-parse --short HEAD >"$raw/commit.txt" 2>/dev/null || true
targets=(core_ops_bench who_has_bench peer_index_bench summary_bench gossip_sim_bench
         classic_hash_fpr_bench redis_bitmap_bench redis_getbit_bench peerbloomd peerbloom_cli)
echo "bench: building ${targets[*]} (Release, $build)"
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >>"$log" 2>&1
if ! cmake --build "$build" -j2 --target "${targets[@]}" >>"$log" 2>&1; then
  echo "bench: error: the build failed; the end of $log:" >&2
  tail -n 30 "$log" >&2
  exit 1
fi
echo $((SECONDS - start)) >"$raw/build.s"

# step NAME COMMAND...: runs it, its output to $raw/NAME.txt, its wall time to $raw/NAME.s.
step() {
  local name=$1 t0=$SECONDS
  shift
  echo "bench: $name"
  if ! "$@" >"$raw/$name.txt" 2>>"$log"; then
    echo "bench: error: $name failed; its output is in $raw/$name.txt, the end of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  echo $((SECONDS - t0)) >"$raw/$name.s"
}
b=$build/bench
step core_ops "$b/core_ops_bench" --dram-mib=1024 --reps=7 --max-n=10000000
step who_has "$b/who_has_bench" 1000000 200000
step peer_index "$b/peer_index_bench" 250000 262144
step control bash "$root/bench/control_bench.sh" "$build" 1000000
step redis bash "$root/bench/redis_bitmap_bench.sh" "$build" 1000000 20000
step summary "$b/summary_bench"
# 16 nodes at 1e5 keys, 100 at 1e4, and the large cluster at 300 nodes with 5 % loss and the
# probe detector, the daemon's default (about 1.5 minutes of one core in all). The
# 1,000-node cluster takes about half an hour of one core: GOSSIP_NODES=1000 make bench to
# include it (docs/gossip.md gives its figures).
step gossip "$b/gossip_sim_bench" 100000 10000 "${GOSSIP_NODES:-300}" 0.05 probe
step classic_hash "$b/classic_hash_fpr_bench" --probes=1000000
# Real daemons at rest, N = 4 to 32 (about 6 minutes, mostly waiting).
step rest_cost "$py" "$root/bench/rest_cost_bench.py" "$build"

cut -d' ' -f1 /proc/loadavg >"$raw/load-end.txt" 2>/dev/null || true
echo "bench: report"
"$py" "$root/scripts/bench_report.py" "$raw" "$out" "$((SECONDS - start))" | tee "$raw/report.txt"
echo "bench: wrote $out/bench.md and its plots; $((SECONDS - start)) s from the build's start" \
  "(install excluded)"
