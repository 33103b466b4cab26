#!/usr/bin/env bash
# `make upgrade-test`: a rolling upgrade with real binaries. Builds the peerbloomd of an older
# release from git history (`git archive` of OLD_REF into build-old/COMMIT/, which git ignores),
# then this tree's peerbloomd, CLI and the upgrade test (tests/upgrade/), and runs the test
# with the old daemon in PEERBLOOM_OLD_DAEMON: daemons of OLD_REF, upgraded one by one to this
# tree's on the same data dirs, keys and ports (docs/gossip.md, "Upgrading a cluster from the
# release before"). Not part of `make test`: the old build alone takes minutes.
# Nothing is downloaded: both builds use the Debian packages scripts/install-deps.sh installs.
# Build and apt output go to BUILD_DIR/rolling-upgrade.log; the old build is kept and reused.
# Usage: scripts/rolling-upgrade.sh [BUILD_DIR] [OLD_REF]
#   BUILD_DIR  this tree's build directory (default build-upgrade)
#   OLD_REF    the release upgraded from (default 198fffe, the last of wire version 3, with
#              heartbeat failure detection; 33151ee is the last of wire version 6)
#   JOBS       environment: parallel build jobs (default 1)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-upgrade}
ref=${2:-198fffe}
jobs=${JOBS:-1}
[[ $build = /* ]] || build=$root/$build
mkdir -p "$build"
log=$build/rolling-upgrade.log
: >"$log"

fail() {
  echo "rolling-upgrade: error: $1; the end of $log:" >&2
  tail -n 30 "$log" >&2
  exit 1
}

commit=$(git -C "$root" rev-parse --verify --quiet "$ref^{commit}") ||
  { echo "rolling-upgrade: error: '$ref' names no commit of this repository" >&2; exit 2; }
short=$(git -C "$root" rev-parse --short "$commit")
old=$root/build-old/$commit

PEERBLOOM_APT_LOG=$log bash "$root/scripts/install-deps.sh"

# The old release's source, extracted once: a commit's tree never changes.
start=$SECONDS
if [[ ! -e $old/src/.extracted ]]; then
  echo "rolling-upgrade: extracting $short into $old/src"
  rm -rf "$old/src"
  mkdir -p "$old/src"
  git -C "$root" archive "$commit" | tar -x -C "$old/src"
  touch "$old/src/.extracted"
fi
echo "rolling-upgrade: building peerbloomd of $short (-j$jobs, $old/build)"
cmake -S "$old/src" -B "$old/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >>"$log" 2>&1 ||
  fail "configuring $short failed"
cmake --build "$old/build" -j"$jobs" --target peerbloomd >>"$log" 2>&1 ||
  fail "building peerbloomd of $short failed"
old_daemon=$old/build/daemon/peerbloomd
[[ -x $old_daemon ]] || fail "the build of $short made no $old_daemon"
echo "rolling-upgrade: old peerbloomd ready in $((SECONDS - start)) s"

start=$SECONDS
echo "rolling-upgrade: building this tree's peerbloomd, peerbloom and the upgrade test (-j$jobs, $build)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >>"$log" 2>&1 ||
  fail "configuring this tree failed"
cmake --build "$build" -j"$jobs" --target peerbloomd peerbloom_cli peerbloom_upgrade_tests \
  >>"$log" 2>&1 || fail "building this tree failed"
echo "rolling-upgrade: this tree built in $((SECONDS - start)) s"

start=$SECONDS
echo "rolling-upgrade: running the upgrade from $short ($old_daemon)"
status=0
PEERBLOOM_OLD_DAEMON=$old_daemon PEERBLOOM_OLD_REF=$short \
  "$build/tests/peerbloom_upgrade_tests" 2>&1 | tee -a "$log" || status=$?
echo "rolling-upgrade: the test ran for $((SECONDS - start)) s"
if [[ $status -ne 0 ]]; then
  echo "rolling-upgrade: FAILED: upgrade from $short (output above and in $log)" >&2
  exit 1
fi
echo "rolling-upgrade: passed: every node upgraded from $short"
