#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS seconds each and reports, per target, the
# executions, the corpus size and the findings (crash-*, leak-*, timeout-*, oom-* files).
# Usage: scripts/fuzz-run.sh [SECONDS] [BUILD_DIR]   (make fuzz-run SECONDS=N)
# The checked-in corpus (tests/fuzz/corpus/<name>) seeds a scratch corpus in BUILD_DIR, so
# the repository is not changed; add a finding to the checked-in corpus by hand once fixed.
set -euo pipefail
seconds="${1:-60}"
build="${2:-build-fuzz}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
targets=()
for src in tests/fuzz/*_fuzz.cc; do targets+=("$(basename "$src" .cc)"); done
CC=clang CXX=clang++ cmake -S . -B "$build" -DPEERBLOOM_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]}"
report="$build/fuzz-report.txt"
printf '%-20s %12s %8s %8s\n' target executions corpus findings | tee "$report"
total_runs=0
total_findings=0
for t in "${targets[@]}"; do
  name="${t%_fuzz}"
  work="$build/fuzz-work/$name"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp -n "tests/fuzz/corpus/$name"/* "$work/corpus/" 2>/dev/null || true
  log="$work/last.log"
  # -fork would add parallelism; one process per target keeps the figures comparable.
  "$build/tests/$t" "$work/corpus" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" -timeout=10 -rss_limit_mb=2048 >"$log" 2>&1 || true
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  files=$(find "$work/corpus" -type f | wc -l)
  findings=$(find "$work/artifacts" -type f | wc -l)
  total_runs=$((total_runs + ${runs:-0}))
  total_findings=$((total_findings + findings))
  printf '%-20s %12s %8s %8s\n' "$name" "${runs:-0}" "$files" "$findings" | tee -a "$report"
done
printf '%-20s %12s %8s %8s\n' total "$total_runs" - "$total_findings" | tee -a "$report"
echo "per-target logs and findings: $build/fuzz-work/<name>/"
[ "$total_findings" -eq 0 ]
