#!/usr/bin/env bash
# Runs docs/deploy-nginx.md: every block after a `<!-- run: HOST... [until=N] [id=NAME] -->`
# marker, in order, on each host named, on four hosts emulated on this machine (admin 10.0.0.1
# with the origin, cache-01..03 10.0.0.11-13 with Debian's nginx; tests/package/deploy_hosts.sh
# says how), checking what the guide shows after the blocks with an id. Purges the package at
# the end; leaves no process, namespace or bridge behind.
#
# Needs root, network namespaces, nginx (installed here with apt-get when missing), and a
# machine without peerbloom installed; skipped (exit 77) with the reason otherwise. Its
# chatter goes to WORK/log (WORK is printed); a failure prints the block, its output and the
# log's tail.
# Usage: deploy_nginx_guide_test.sh BUILD_DIR CPACK_COMMAND
set -eEuo pipefail
trap 'echo "FAIL: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR
build=$(cd "$1" && pwd) cpack=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
guide=$src/docs/deploy-nginx.md
ns=pbnginx
work=/var/tmp/peerbloom-deploy-nginx-guide
# shellcheck source=deploy_hosts.sh
. "$src/tests/package/deploy_hosts.sh"

hosts_preflight nginx-core curl
hosts_workdir
hosts_package "$build" "$cpack"
pristine nginx-common /etc/nginx
hosts_up /etc/nginx /var/log/nginx /var/lib/nginx /var/cache /etc/systemd/system
origin_up

# Requests the origin answered for PATH.
fetches() { awk -v p="$1" '$3 == p' "$work/origin.log" | wc -l; }
expect() {  # id file wanted
  [[ $(cat "$2") == "$3" ]] || fail "$1: got '$(cat "$2")', the guide shows '$3'"
}
check_block() {  # id n
  local out=$work/blocks/$2 h o
  case $1 in
    secret)
      check_secret "$out.admin.out"
      ;;
    peers)
      # "Within a few seconds": each node lists the two others alive within 30 s.
      for h in "${caches[@]}"; do
        for o in "${caches[@]}"; do
          [[ $o == "$h" ]] || on "$h" python3 "$tool" watch-peer "$o" alive 30 >/dev/null ||
            fail "$h does not list $o alive: $(cat "$out".*.out)"
        done
      done
      ;;
    routed)
      expect routed "$out.admin.out" "200 MISS 10.0.0.11:8081"
      [[ $(fetches /welcome.html) -eq 1 ]] || fail "the origin served welcome.html $(fetches /welcome.html) times"
      ;;
    live_set)
      # One file at cache-01 (fetched from the origin) and cache-02 (from cache-01), none at
      # cache-03; the daemon's set equals the directory's on each.
      for h in "${caches[@]}"; do
        [[ $(sed -n 1p "$out.$h.out") == "$(sed -n 2p "$out.$h.out")" ]] || fail "live set at $h: $(cat "$out.$h.out")"
      done
      [[ $(cut -d' ' -f1 "$out.cache-01.out" | sort -u) == 1 &&
        $(cut -d' ' -f1 "$out.cache-02.out" | sort -u) == 1 &&
        $(cut -d' ' -f1 "$out.cache-03.out" | sort -u) == 0 ]] ||
        fail "live sets: $(cat "$out".cache-0?.out)"
      ;;
    false_hit)
      expect false_hit "$out.admin.out" $'200 MISS origin-after-false-hit\n200 HIT origin-after-false-hit'
      [[ $(fetches /phantom.html) -eq 1 ]] || fail "the origin served phantom.html $(fetches /phantom.html) times"
      ;;
    routes)
      grep -Eq '^ +to_peer +[1-9]' "$out.cache-02.out" && grep -Eq '^ +bad_requests +0$' "$out.cache-02.out" &&
        grep -Eq '^ +no_sibling +0$' "$out.cache-02.out" || fail "routes: $(cat "$out.cache-02.out")"
      ;;
    purge)
      [[ $(sort "$out.cache-03.out") == $'cache-01: purged (1 cache file deleted)\ncache-02: purged (1 cache file deleted)\ncache-03: not held (its filter does not hold the URL)' ]] ||
        fail "purge: $(cat "$out.cache-03.out")"
      ;;
    purged)
      expect purged "$out.admin.out" "200 MISS origin"
      [[ $(fetches /welcome.html) -eq 2 ]] || fail "the origin served welcome.html $(fetches /welcome.html) times"
      ;;
    daemon_down)
      expect daemon_down "$out.admin.out" "200 MISS origin"
      ;;
    after_restart)
      expect after_restart "$out.admin.out" "200 HIT origin-after-false-hit"
      [[ $(fetches /phantom.html) -eq 1 ]] || fail "phantom.html fetched again after nginx's restart"
      ;;
  esac
}
run_guide 20
for id in secret peers routed live_set false_hit routes purge purged daemon_down after_restart; do
  grep -q " $id " "$work/blocks/list" || fail "the guide has no block id=$id"
done
echo "figure: the guide from its first command to its last: $(elapsed "$t_start" "$(now)") s"

# After the guide: every node's live set equals its cache directory.
for h in "${caches[@]}"; do
  on "$h" 'peerbloom --json stats | python3 -c "import json, sys; f = json.load(sys.stdin)[\"nginx_feeds\"][0]; print(f[\"files\"], f[\"names_xor\"], f[\"watch_errors\"])"' \
    >"$work/final.$h"
  on "$h" '/usr/share/peerbloom/nginx/nginx-cache-xor /var/cache/nginx/peerbloom' >"$work/disk.$h"
  [[ $(cat "$work/final.$h") == "$(cat "$work/disk.$h") 0" ]] ||
    fail "$h: the daemon counts '$(cat "$work/final.$h")', the directory holds '$(cat "$work/disk.$h")'"
  echo "$h: $(cat "$work/disk.$h") (cache files, XOR of their names), equal at the daemon"
done

purge_package
echo "the nginx guide ran on four emulated hosts; the package is purged"
