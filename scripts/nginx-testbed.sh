#!/usr/bin/env bash
# Real nginx instances (Debian's nginx 1.22) on loopback addresses, each a cache node running
# configs/nginx/peerbloom-nginx.conf.in, next to an nginx origin. For tests and demos of
# peerbloomd beside nginx's proxy_cache. Everything listens on loopback only.
#
#   nginx-testbed.sh start-origin DIR ADDR PORT
#       start the origin on ADDR:PORT, serving from DIR/origin (see "The origin" below)
#   nginx-testbed.sh start DIR NAME ADDR ORIGIN ROUTE_SOCKET [MAX_SIZE] [INACTIVE]
#       start cache node NAME in DIR/NAME: front ADDR:8080, sibling ADDR:8081, miss router
#       ADDR:8082, sink ADDR:8083; ORIGIN is HOST:PORT; ROUTE_SOCKET is the unix socket its
#       miss router asks (peerbloomd's nginx_route_socket, or a stand-in); MAX_SIZE and
#       INACTIVE are the cache's max_size and inactive (default 64m, 1h)
#   nginx-testbed.sh stop DIR NAME     stop node NAME (or the origin: NAME = origin)
#   nginx-testbed.sh reload DIR NAME   write its config again and reload nginx (SIGHUP),
#                                      returning once the old worker processes are gone
#   nginx-testbed.sh restart DIR NAME  stop and start it again with the same arguments
#   nginx-testbed.sh files DIR NAME    list its cache files: "HEXNAME KEY", one a line
#   nginx-testbed.sh fetch DIR NAME PATH [HOST]
#       GET http://HOST/PATH through its front; print "STATUS X-Cache-Status
#       X-Peerbloom-Source" ('-' for a missing header). HOST defaults to the origin's ADDR:PORT
#   nginx-testbed.sh origin-fetches DIR [PATH]
#       count the requests the origin has logged (for PATH only, if given)
#   nginx-testbed.sh dir DIR NAME      print the node's directory (logs/, cache/, nginx.conf)
#
# Environment:
#   FRONT_PORT, SIBLING_PORT, MISS_PORT, SINK_PORT  the node's ports (8080, 8081, 8082, 8083)
#   NGINX_WORKERS      worker_processes of each instance (default 2)
#   ORIGIN_MAX_AGE     max-age the origin gives, in seconds (default 3600)
#   ORIGIN_SHORT_MAX_AGE  max-age under /short/ (default 3)
#   BLOB_COUNT, BLOB_BYTES  the origin's /blob/1 .. /blob/N files and their size (64, 65536)
#   NGINX_LAB_EXTRA    http{}-level lines appended to each node's nginx.conf
#
# Each instance runs as nginx runs from a package: the master as root (started by this script,
# so run it as root), `user www-data` workers, and its own prefix: DIR/NAME/nginx.conf, pid
# file, logs/ and temp/. The node's cache directory DIR/NAME/cache is created by nginx itself
# at start, as it creates a proxy_cache_path; DIR must be searchable by www-data. Whatever
# answers on ROUTE_SOCKET must let www-data connect (peerbloomd: nginx_route_socket_group).
# Nodes reach each other from 127.0.0.1, the kernel's source address for loopback, whatever
# their own ADDR. With the default HOST, a path's cache key is "http" ADDR PATH of the origin
# without its port ($host), e.g. "http127.0.5.100/a/1".
#
# The origin: every path answers 200 with Cache-Control: max-age=ORIGIN_MAX_AGE; under /short/
# max-age=ORIGIN_SHORT_MAX_AGE; /vary/* adds Vary: Accept-Encoding (its body names the
# request's Accept-Encoding); /nostore/* answers Cache-Control: no-store. Static files (with
# Last-Modified and ETag, so revalidation works) are /short/1.html .. /short/20.html and
# /blob/1 .. /blob/BLOB_COUNT; any other path gets a small generated body without validators.
# Its access log, DIR/origin/logs/access.log, is one line per request that reached it.
set -euo pipefail

readonly FRONT_PORT="${FRONT_PORT:-8080}"
readonly SIBLING_PORT="${SIBLING_PORT:-8081}"
readonly MISS_PORT="${MISS_PORT:-8082}"
readonly SINK_PORT="${SINK_PORT:-8083}"
readonly WORKERS="${NGINX_WORKERS:-2}"
readonly NGINX=/usr/sbin/nginx
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE
readonly TEMPLATE="$HERE/../configs/nginx/peerbloom-nginx.conf.in"

die() { echo "nginx-testbed: error: $*" >&2; exit 1; }
note() { echo "nginx-testbed: $*" >&2; }

check_addr() {
  [[ "${1:-}" =~ ^127\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] ||
    die "address '${1:-}' is not a loopback address 127.x.y.z"
}
check_port() { [[ "${1:-}" =~ ^[0-9]{1,5}$ ]] || die "port '${1:-}' is not a number"; }
check_name() {
  [[ "${1:-}" =~ ^[A-Za-z0-9_-]+$ ]] || die "instance name '${1:-}' is not [A-Za-z0-9_-]+"
}

# Waits up to $2 seconds for command "$1" to succeed; ends as soon as it does.
wait_for() {
  local cmd="$1" deadline=$((SECONDS + $2))
  until eval "$cmd" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

listening() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# The pid in pid file $1, if that process is alive and is an nginx master (a stale pid file
# may name a pid reused by something else).
master_pid() {
  local pid
  [[ -s "$1" ]] || return 1
  pid="$(cat "$1")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q '^nginx: master process' || return 1
  echo "$pid"
}

nginx_of() {  # runs nginx on instance directory $1 with the remaining arguments
  local dir="$1"
  shift
  "$NGINX" -p "$dir/" -c "$dir/nginx.conf" -e "$dir/logs/error.log" "$@"
}

# The main file of an instance: only the process and path settings; the http{} content comes
# from peerbloom.conf (a node) or origin.conf (the origin).
write_main_conf() {
  local dir="$1" include="$2"
  cat >"$dir/nginx.conf" <<EOF
# Generated by scripts/nginx-testbed.sh.
user www-data;
worker_processes $WORKERS;
pid $dir/nginx.pid;
error_log $dir/logs/error.log info;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format lab '\$remote_addr:\$server_port "\$request" \$status \$body_bytes_sent '
                   'cache=\$upstream_cache_status up=\$upstream_addr upstatus=\$upstream_status '
                   'key="\$http_x_peerbloom_key" ims="\$http_if_modified_since" '
                   'inm=\$http_if_none_match t=\$request_time';
    access_log $dir/logs/access.log lab;
    client_body_temp_path $dir/temp/client_body;
    proxy_temp_path $dir/temp/proxy;
    fastcgi_temp_path $dir/temp/fastcgi;
    uwsgi_temp_path $dir/temp/uwsgi;
    scgi_temp_path $dir/temp/scgi;
    include $dir/$include;
${NGINX_LAB_EXTRA:-}
}
EOF
}

sed_escape() { printf '%s' "$1" | sed 's/[\/&|]/\\&/g'; }

render_node_conf() {  # instance directory, then the saved arguments
  local dir="$1" addr="$2" origin="$3" socket="$4" max_size="$5" inactive="$6"
  [[ -r "$TEMPLATE" ]] || die "cannot read the template '$TEMPLATE'"
  sed -e "s|@FRONT_LISTEN@|$addr:$FRONT_PORT|g" \
      -e "s|@SIBLING_LISTEN@|$addr:$SIBLING_PORT|g" \
      -e "s|@MISS_LISTEN@|$addr:$MISS_PORT|g" \
      -e "s|@SINK_LISTEN@|$addr:$SINK_PORT|g" \
      -e "s|@ORIGIN@|$(sed_escape "$origin")|g" \
      -e "s|@CACHE_PATH@|$(sed_escape "$dir/cache")|g" \
      -e "s|@ROUTE_SOCKET@|$(sed_escape "$socket")|g" \
      -e "s|@CACHE_MAX_SIZE@|$(sed_escape "$max_size")|g" \
      -e "s|@CACHE_INACTIVE@|$(sed_escape "$inactive")|g" \
      "$TEMPLATE" >"$dir/peerbloom.conf.new"
  if grep -n '^[^#]*@[A-Z_]*@' "$dir/peerbloom.conf.new" >&2; then
    die "placeholders left unrendered in '$dir/peerbloom.conf.new' (listed above)"
  fi
  mv "$dir/peerbloom.conf.new" "$dir/peerbloom.conf"
}

write_origin_conf() {
  local dir="$1" addr="$2" port="$3"
  cat >"$dir/origin.conf" <<EOF
# Generated by scripts/nginx-testbed.sh: the lab's origin.
server {
    listen $addr:$port;
    root $dir/html;
    location / {
        expires ${ORIGIN_MAX_AGE:-3600};
        try_files \$uri @generated;
    }
    location @generated {
        expires ${ORIGIN_MAX_AGE:-3600};
        default_type text/plain;
        return 200 "origin \$request_uri\\n";
    }
    location /short/ {
        expires ${ORIGIN_SHORT_MAX_AGE:-3};
        try_files \$uri @generated_short;
    }
    location @generated_short {
        expires ${ORIGIN_SHORT_MAX_AGE:-3};
        default_type text/plain;
        return 200 "origin short \$request_uri\\n";
    }
    location /vary/ {
        expires ${ORIGIN_MAX_AGE:-3600};
        add_header Vary Accept-Encoding;
        default_type text/plain;
        return 200 "origin vary \$request_uri \$http_accept_encoding\\n";
    }
    location /nostore/ {
        add_header Cache-Control no-store;
        default_type text/plain;
        return 200 "origin no-store \$request_uri\\n";
    }
    location = /ping {
        access_log off;
        default_type text/plain;
        return 200 "ok\\n";
    }
}
EOF
}

write_origin_files() {
  local html="$1/html" i
  mkdir -p "$html/short" "$html/blob"
  for ((i = 1; i <= 20; i++)); do echo "origin static /short/$i.html" >"$html/short/$i.html"; done
  for ((i = 1; i <= ${BLOB_COUNT:-64}; i++)); do
    head -c "${BLOB_BYTES:-65536}" /dev/zero | tr '\0' x >"$html/blob/$i"
  done
  chmod -R a+rX "$html"
}

# Starts the nginx of instance directory $1 and waits until every ADDR:PORT in $2.. listens.
launch() {
  local dir="$1"
  shift
  nginx_of "$dir" -t >"$dir/logs/nginx-t.log" 2>&1 ||
    die "nginx -t failed for '$dir/nginx.conf': $(grep -v 'syntax is ok' "$dir/logs/nginx-t.log" | head -n 3)"
  nginx_of "$dir" >"$dir/logs/nginx-start.log" 2>&1 ||
    die "nginx did not start in '$dir' (see $dir/logs/nginx-start.log, $dir/logs/error.log)"
  wait_for "master_pid '$dir/nginx.pid'" 20 ||
    die "nginx in '$dir' wrote no pid file (see $dir/logs/error.log)"
  local hostport
  for hostport in "$@"; do
    wait_for "listening ${hostport%:*} ${hostport##*:}" 20 ||
      die "nginx in '$dir' does not listen on $hostport (see $dir/logs/error.log)"
  done
}

refuse_busy() {  # a listener left from an earlier run (no pid file) would answer our probes
  local hostport
  for hostport in "$@"; do
    ! listening "${hostport%:*}" "${hostport##*:}" ||
      die "something already listens on $hostport (an nginx left from an earlier run?)"
  done
}

prepare_dir() {
  local dir="$1"
  [[ $(id -u) == 0 ]] || die "run as root: the nginx master runs as root, its workers as www-data"
  [[ -x "$NGINX" ]] || die "nginx is not installed ('$NGINX'): apt-get install nginx-core"
  mkdir -p "$dir/logs" "$dir/temp"
  chmod 0755 "$dir" "$dir/temp"
  runuser -u www-data -- test -x "$dir" ||
    die "user 'www-data' cannot reach '$dir': make every parent directory searchable (chmod o+x)"
}

cmd_start_origin() {
  local root="$1" addr="$2" port="$3" dir
  check_addr "$addr"
  check_port "$port"
  dir="$root/origin"
  if master_pid "$dir/nginx.pid" >/dev/null; then note "origin already running in $dir"; return 0; fi
  refuse_busy "$addr:$port"
  prepare_dir "$dir"
  # shellcheck disable=SC2064  # this call's values, expanded now
  trap "cmd_stop '$root' origin >/dev/null 2>&1 || true" EXIT  # undo a half start
  write_origin_files "$dir"
  write_origin_conf "$dir" "$addr" "$port"
  write_main_conf "$dir" origin.conf
  launch "$dir" "$addr:$port"
  echo "$addr:$port" >"$dir/address"
  trap - EXIT
  note "origin on $addr:$port, access log $dir/logs/access.log"
}

node_ports() {
  local addr="$1"
  echo "$addr:$FRONT_PORT $addr:$SIBLING_PORT $addr:$MISS_PORT $addr:$SINK_PORT"
}

cmd_start() {
  local root="$1" name="$2" addr="$3" origin="$4" socket="$5" max_size="${6:-64m}"
  local inactive="${7:-1h}" dir
  check_name "$name"
  [[ "$name" != origin ]] || die "the name 'origin' is the origin's (start-origin)"
  check_addr "$addr"
  [[ "$origin" =~ ^[^:]+:[0-9]+$ ]] || die "origin '$origin' is not HOST:PORT"
  [[ "$socket" == /* ]] || die "route socket '$socket' is not an absolute path"
  ((${#socket} <= 107)) || die "route socket '$socket' is longer than 107 bytes"
  dir="$root/$name"
  if master_pid "$dir/nginx.pid" >/dev/null; then note "$name already running in $dir"; return 0; fi
  # shellcheck disable=SC2046  # a list of HOST:PORT
  refuse_busy $(node_ports "$addr")
  prepare_dir "$dir"
  # shellcheck disable=SC2064
  trap "cmd_stop '$root' '$name' >/dev/null 2>&1 || true" EXIT
  printf '%q ' "$addr" "$origin" "$socket" "$max_size" "$inactive" >"$dir/args"
  render_node_conf "$dir" "$addr" "$origin" "$socket" "$max_size" "$inactive"
  write_main_conf "$dir" peerbloom.conf
  # shellcheck disable=SC2046
  launch "$dir" $(node_ports "$addr")
  trap - EXIT
  note "$name: front $addr:$FRONT_PORT, sibling $addr:$SIBLING_PORT, cache $dir/cache," \
    "route socket $socket"
}

cmd_stop() {
  local root="$1" name="$2" dir pid
  check_name "$name"
  dir="$root/$name"
  if pid="$(master_pid "$dir/nginx.pid")"; then
    # TERM is nginx's fast shutdown. The master leads its own session and process group
    # (it daemonized with setsid): a worker or cache process left behind would keep the ports.
    kill -TERM "$pid"
    wait_for "! kill -0 $pid" 20 || {
      note "nginx $pid did not stop in 20 s; killing its process group"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"
      wait_for "! kill -0 $pid" 5 || die "nginx $pid survived SIGKILL"
    }
  elif [[ -e "$dir/nginx.pid" ]]; then
    note "removing the stale pid file $dir/nginx.pid"
  fi
  rm -f "$dir/nginx.pid"
}

saved_args() {
  [[ -s "$1/args" ]] || die "no node was started in '$1' (no '$1/args')"
  cat "$1/args"
}

cmd_reload() {
  local root="$1" name="$2" dir pid before
  check_name "$name"
  dir="$root/$name"
  pid="$(master_pid "$dir/nginx.pid")" || die "no nginx running in '$dir'"
  if [[ "$name" == origin ]]; then
    local address
    address="$(cat "$dir/address")" || die "no origin was started in '$dir'"
    write_origin_conf "$dir" "${address%:*}" "${address##*:}"
  else
    eval "render_node_conf '$dir' $(saved_args "$dir")"
  fi
  nginx_of "$dir" -t >"$dir/logs/nginx-t.log" 2>&1 ||
    die "nginx -t failed, not reloading '$dir': $(grep -v 'syntax is ok' "$dir/logs/nginx-t.log" | head -n 3)"
  before="$(pgrep -P "$pid" | tr '\n' ' ')"
  kill -HUP "$pid"
  # The master starts new workers and tells the old ones to finish their requests and exit;
  # the reload is done when none of the old ones is left and new ones run.
  local old
  for old in $before; do
    wait_for "! kill -0 $old" 30 || die "old nginx process $old did not exit after the reload"
  done
  wait_for "[[ -n \"\$(pgrep -P $pid)\" ]]" 10 || die "nginx $pid has no workers after the reload"
}

cmd_restart() {
  local root="$1" name="$2" dir args
  check_name "$name"
  dir="$root/$name"
  if [[ "$name" == origin ]]; then
    local address
    address="$(cat "$dir/address")" || die "no origin was started in '$dir'"
    cmd_stop "$root" origin
    cmd_start_origin "$root" "${address%:*}" "${address##*:}"
    return
  fi
  args="$(saved_args "$dir")"
  cmd_stop "$root" "$name"
  eval "cmd_start '$root' '$name' $args"
}

# A cache file is named by the 32 hex digits of MD5(key) and holds the key on a "KEY: " line
# after its binary header; anything else in the directory (nginx's ten-digit temporary files)
# is skipped. Files that vanish while being read (evictions) are skipped too.
cmd_files() {
  local root="$1" name="$2" dir
  check_name "$name"
  dir="$root/$name/cache"
  [[ -d "$dir" ]] || die "no cache directory '$dir'"
  python3 - "$dir" <<'EOF'
import os, re, sys
rows = []
for base, _, names in os.walk(sys.argv[1]):
    for name in names:
        if not re.fullmatch(r"[0-9a-f]{32}", name):
            continue
        try:
            with open(os.path.join(base, name), "rb") as f:
                head = f.read(64 * 1024)
        except FileNotFoundError:
            continue
        start = head.find(b"\nKEY: ")
        end = head.find(b"\n", start + 6) if start >= 0 else -1
        key = head[start + 6:end].decode("utf-8", "backslashreplace") if end >= 0 else "?"
        rows.append((key, name))
for key, name in sorted(rows):
    print(name, key)
EOF
}

cmd_fetch() {
  local root="$1" name="$2" path="$3" host="${4:-}" args addr headers
  check_name "$name"
  args="$(saved_args "$root/$name")"
  addr="${args%% *}"
  [[ -n "$host" ]] || host="$(cat "$root/origin/address" 2>/dev/null)" ||
    die "no HOST given and no origin in '$root/origin'"
  [[ "$path" == /* ]] || path="/$path"
  headers="$(curl -s -o /dev/null -D - --max-time 10 -H "Host: $host" \
    "http://$addr:$FRONT_PORT$path")" || die "GET $path through $name failed (curl $?)"
  printf '%s\n' "$headers" | tr -d '\r' | awk '
    NR == 1 { status = $2 }
    tolower($1) == "x-cache-status:" { cache = $2 }
    tolower($1) == "x-peerbloom-source:" { source = $2 }
    END { print status, (cache == "" ? "-" : cache), (source == "" ? "-" : source) }'
}

cmd_origin_fetches() {
  local log="$1/origin/logs/access.log" path="${2:-}"
  [[ -f "$log" ]] || die "no origin access log '$log'"
  if [[ -z "$path" ]]; then wc -l <"$log"
  else grep -c -F " \"GET $path HTTP/" "$log" || true
  fi
}

main() {
  local cmd="${1:-}"
  shift || true
  case "$cmd" in
    start-origin) (($# == 3)) || die "usage: start-origin DIR ADDR PORT"; cmd_start_origin "$@" ;;
    start)
      (($# >= 5 && $# <= 7)) ||
        die "usage: start DIR NAME ADDR ORIGIN ROUTE_SOCKET [MAX_SIZE] [INACTIVE]"
      cmd_start "$@" ;;
    stop) (($# == 2)) || die "usage: stop DIR NAME"; cmd_stop "$@" ;;
    reload) (($# == 2)) || die "usage: reload DIR NAME"; cmd_reload "$@" ;;
    restart) (($# == 2)) || die "usage: restart DIR NAME"; cmd_restart "$@" ;;
    files) (($# == 2)) || die "usage: files DIR NAME"; cmd_files "$@" ;;
    fetch) (($# == 3 || $# == 4)) || die "usage: fetch DIR NAME PATH [HOST]"; cmd_fetch "$@" ;;
    origin-fetches)
      (($# == 1 || $# == 2)) || die "usage: origin-fetches DIR [PATH]"; cmd_origin_fetches "$@" ;;
    dir) (($# == 2)) || die "usage: dir DIR NAME"; check_name "$2"; echo "$1/$2" ;;
    *) die "unknown command '$cmd' (start-origin, start, stop, reload, restart, files, fetch, origin-fetches, dir)" ;;
  esac
}

main "$@"
