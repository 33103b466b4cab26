#!/usr/bin/env bash
# store.log events per second through a real peerbloomd: appends LINES synthetic Squid
# store.log lines (80 % SWAPOUT of new keys, 20 % RELEASE of live ones) to a followed file
# and times until the daemon's stats say every line was applied.
# Usage: bench/feed_bench.sh BUILD_DIR [LINES]. Prints figures; asserts nothing.
set -euo pipefail
build=${1:-build}
lines=${2:-300000}
work=$(mktemp -d /tmp/peerbloom-feedbench.XXXXXX)
pid=""
trap '[[ -n $pid ]] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

cat >"$work/feed.toml" <<TOML
node_id = "feedbench"
listen = "tcp://127.0.0.1:0"
data_dir = "$work/data"
curve = false
key_scheme = "squid-md5"
capacity = $((lines * 2))
snapshot_interval = 0
[[feeds]]
path = "$work/store.log"
format = "squid-store-log"
TOML
python3 - "$work/lines.log" "$lines" <<'PY'
import random, sys
random.seed(1)
live = []
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        if live and random.random() < 0.2:
            action, key = "RELEASE", live.pop(random.randrange(len(live)))
        else:
            action, key = "SWAPOUT", "%032X" % random.getrandbits(128)
            live.append(key)
        f.write(f"1795327317.643 {action} 00 {i:08X} {key}  200 1795327317 1795327306 "
                f"1795413717 text/html 1354/1354 GET http://origin.example/o{i}.html\n")
PY
: >"$work/store.log"
"$build/daemon/peerbloomd" --config "$work/feed.toml" --foreground 2>"$work/log" &
pid=$!
cli=("$build/cli/peerbloom" --config "$work/feed.toml")
for _ in $(seq 100); do "${cli[@]}" stats >/dev/null 2>&1 && break; sleep 0.1; done
applied() {
  "${cli[@]}" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["feeds"][0]["lines"])'
}
start=$(date +%s%N)
cat "$work/lines.log" >>"$work/store.log"
deadline=$((SECONDS + 120))
while (($(applied) < lines)); do
  ((SECONDS < deadline)) || { echo "feed_bench: not applied within 120 s" >&2; exit 1; }
  sleep 0.05
done
ms=$((($(date +%s%N) - start) / 1000000))
echo "store.log feed: $lines lines applied in $ms ms = $((lines * 1000 / (ms > 0 ? ms : 1))) lines/s"
"${cli[@]}" stats --json | python3 -c 'import json,sys; f=json.load(sys.stdin)["feeds"][0]; print("adds", f["adds"], "removes", f["removes"], "malformed", f["malformed"], "live keys", f["store_log"]["live_keys"])'
