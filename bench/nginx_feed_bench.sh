#!/usr/bin/env bash
# What the nginx-cache feed costs a real peerbloomd: the start-up scan of a cache directory of
# FILES files (levels 1:2, files as nginx 1.22 writes them), the daemon's memory per file,
# and the rate of changes it follows by inotify (new files written as nginx writes them, a
# temporary file renamed into place, and files deleted as the cache manager evicts), each
# timed until the daemon's `files` and `names_xor` equal the directory's.
# Usage: bench/nginx_feed_bench.sh BUILD_DIR [FILES] [CHANGES]. Prints figures; asserts nothing.
set -euo pipefail
build=${1:-build}
files=${2:-200000}
changes=${3:-100000}
work=$(mktemp -d /tmp/peerbloom-nginxbench.XXXXXX)
pid=""
trap '[[ -n $pid ]] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cli=$build/cli/peerbloom
xor=$(cd "$(dirname "$0")/.." && pwd)/scripts/nginx-cache-xor

# The cache files of "http://origin.example/oN" (key "httporigin.example/oN", the template's
# $scheme$host$request_uri) for N in [FROM, TO), under levels 1:2.
make_files() {  # dir from to [temp-then-rename]
  python3 - "$@" <<'PY'
import hashlib, os, struct, sys
root, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rename = len(sys.argv) > 4
head = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nCache-Control: max-age=600\r\n\r\n"
for i in range(lo, hi):
    key = b"httporigin.example/o%d" % i
    name = hashlib.md5(key).hexdigest()
    d = os.path.join(root, name[-1], name[-3:-1])
    os.makedirs(d, exist_ok=True)
    header = bytearray(336)
    struct.pack_into("<Q", header, 0, 5)
    start = 336 + 6 + len(key) + 1
    struct.pack_into("<HH", header, 54, start, start + len(head))
    data = bytes(header) + b"\nKEY: " + key + b"\n" + head + b"hello"
    path = os.path.join(d, name)
    if rename:
        with open(path + ".%010d" % i, "wb") as f:
            f.write(data)
        os.rename(path + ".%010d" % i, path)
    else:
        with open(path, "wb") as f:
            f.write(data)
PY
}
delete_files() {  # dir from to
  python3 - "$@" <<'PY'
import hashlib, os, sys
root, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(lo, hi):
    name = hashlib.md5(b"httporigin.example/o%d" % i).hexdigest()
    os.unlink(os.path.join(root, name[-1], name[-3:-1], name))
PY
}
feed_state() {
  "$cli" --control "ipc://$work/data/control.sock" --json stats |
    python3 -c 'import json, sys; f = json.load(sys.stdin)["nginx_feeds"][0]; print(f["files"], f["names_xor"], int(f["scanning"]))'
}
now_ms() { date +%s%3N; }
# Waits until the daemon counts what the directory holds; prints the milliseconds from T0.
wait_equal() {  # t0
  local want
  want="$("$xor" "$work/cache") 0"
  until [[ $(feed_state 2>/dev/null) == "$want" ]]; do
    kill -0 "$pid" 2>/dev/null || { cat "$work/log" >&2; exit 1; }
    sleep 0.02
  done
  echo $(($(now_ms) - $1))
}
# Waits for the control socket; fails when the daemon exits first.
wait_up() {
  until "$cli" --control "ipc://$work/data/control.sock" stats >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { cat "$work/log" >&2; exit 1; }
    sleep 0.05
  done
}
# The daemon's CPU time so far (user + system), in milliseconds.
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / hz) }' "/proc/$pid/stat"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"; }

mkdir -p "$work/cache"
echo "making $files cache files ..."
make_files "$work/cache" 0 "$files"
cat >"$work/feed.toml" <<TOML
node_id = "nginxbench"
listen = "tcp://127.0.0.1:0"
data_dir = "$work/data"
curve = false
key_scheme = "nginx-md5"
nginx_cache_key = "\$scheme\$host\$request_uri"
capacity = $((files + changes))
snapshot_interval = 0
[[feeds]]
path = "$work/cache"
format = "nginx-cache"
levels = "1:2"
TOML

# An empty directory first: the daemon's own memory, to subtract.
mkdir -p "$work/empty"
sed "s|$work/cache|$work/empty|" "$work/feed.toml" >"$work/empty.toml"
"$build/daemon/peerbloomd" --config "$work/empty.toml" --foreground 2>"$work/log" &
pid=$!
wait_up
base_kb=$(rss_kb)
kill "$pid"
wait "$pid" 2>/dev/null || true
rm -rf "$work/data"

sync
t0=$(now_ms)
"$build/daemon/peerbloomd" --config "$work/feed.toml" --foreground 2>>"$work/log" &
pid=$!
wait_up
scan_ms=$(wait_equal "$t0")
full_kb=$(rss_kb)
echo "figure: start-up scan of $files files (levels 1:2, page cache warm): $scan_ms ms," \
  "$(python3 -c "print('%.0f' % ($files / ($scan_ms / 1000.0)))") files/s (daemon start included)"
echo "figure: daemon memory: $((base_kb / 1024)) MiB with an empty cache, $((full_kb / 1024)) MiB" \
  "with $files files: $(python3 -c "print('%.0f' % (($full_kb - $base_kb) * 1024.0 / $files))") bytes a file" \
  "(the filter sized for $((files + changes)) keys included)"

# The writer (one Python process) sets the pace; the daemon's figures are how far behind it
# ends and the CPU it spends per file.
t0=$(now_ms) c0=$(cpu_ms)
make_files "$work/cache" "$files" $((files + changes)) rename
write_ms=$(($(now_ms) - t0))
add_ms=$(wait_equal "$t0")
echo "figure: $changes new files written and renamed into place at" \
  "$(python3 -c "print('%.0f' % ($changes / ($write_ms / 1000.0)))") files/s; all counted" \
  "$((add_ms - write_ms)) ms after the last; daemon CPU" \
  "$(python3 -c "print('%.1f' % (($(cpu_ms) - $c0) * 1000.0 / $changes))") us a file (events, header read, filter)"

t0=$(now_ms) c0=$(cpu_ms)
delete_files "$work/cache" 0 "$changes"
del_ms=$(($(now_ms) - t0))
gone_ms=$(wait_equal "$t0")
echo "figure: $changes files deleted at $(python3 -c "print('%.0f' % ($changes / ($del_ms / 1000.0)))") files/s;" \
  "all uncounted $((gone_ms - del_ms)) ms after the last; daemon CPU" \
  "$(python3 -c "print('%.1f' % (($(cpu_ms) - $c0) * 1000.0 / $changes))") us a file"
"$cli" --control "ipc://$work/data/control.sock" --json stats | python3 -c '
import json, sys
f = json.load(sys.stdin)["nginx_feeds"][0]
print("figure: feed counters: %d events, %d overflows, %d scans, drift %d added / %d removed, %d ignored (temporary names)" % (
    f["events"], f["overflows"], f["scans"], f["drift_added"], f["drift_removed"], f["ignored"]))'
