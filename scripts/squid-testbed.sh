#!/usr/bin/env bash
# A real Squid (Debian's squid 5.7) on its own loopback address, with its own working
# directory, store.log and Cache Digest, next to a local origin server. For tests and demos
# of peerbloomd beside Squid. Everything listens on loopback only.
#
#   squid-testbed.sh start ADDR        start Squid on ADDR:3128 (ADDR = 127.0.0.x, x >= 2)
#   squid-testbed.sh fill ADDR N [P]   fetch N URLs ORIGIN/P1.html..PN.html through it
#   squid-testbed.sh purge ADDR URL    remove URL from its cache (PURGE); fails if absent
#   squid-testbed.sh rotate ADDR       rotate its logs (`squid -k rotate`)
#   squid-testbed.sh reconfigure ADDR  `squid -k reconfigure`, returning once it listens again
#   squid-testbed.sh digest-url ADDR   print the URL of its Cache Digest
#   squid-testbed.sh origin ADDR       print the origin's base URL
#   squid-testbed.sh origins ADDR      print every base URL the origin answers on, one a line
#   squid-testbed.sh dir ADDR          print its working directory (logs/store.log, ...)
#   squid-testbed.sh stop ADDR         stop Squid and its origin
#
# Environment:
#   PEERBLOOM_SQUID_ROOT  parent of the working directories (default /tmp/peerbloom-squid);
#                         each instance uses $PEERBLOOM_SQUID_ROOT/ADDR
#   PEERBLOOM_ORIGIN      base URL of an origin to share between instances (for example the
#                         `origin` of another one); default: start one per instance
#   SQUID_PORT            HTTP port (default 3128)
#   DIGEST_PERIOD         digest rebuild/rewrite period in seconds (default 10)
#   CACHE_MB              size of the cache_dir in MB (default 64; Squid's minimum is 1)
#   LOGFILE_ROTATE        squid.conf logfile_rotate: rotated logs kept as store.log.0 .. N-1
#                         (default 0: `rotate` only reopens the logs)
#   FILL_QUERY            appended to every `fill` URL; the origin pads a body to
#                         ?bytes=N bytes (e.g. FILL_QUERY='?bytes=1000000' to force evictions)
#   SQUID_CONF_EXTRA      squid.conf lines appended to the generated config (for example
#                         "uri_whitespace encode" or "hosts_file /path/hosts")
#   SQUID_CONF_BEFORE_ACCESS  squid.conf lines placed before the generated http_access rules
#                         (after `acl localnet src 127.0.0.0/8`), for rules that must come
#                         first, such as a routing lookup; they come after the generated
#                         icp_port, htcp_port and digest_generation, so they may turn them off
#                         (`include FILE` of a rendered peerbloom-routing.conf does)
#   ORIGIN_LISTEN         more loopback addresses the origin answers on besides 127.0.0.1,
#                         space-separated HOST:PORT, port 0 = any ("127.0.0.201:80 [::1]:0");
#                         `origins` lists them
#
# Each Squid needs its own address (Squid drops ICP from its own IP and binds ICP/HTCP on
# udp_incoming_address) and its own service name (-n) so that instances do not share
# shared-memory segments. docs/squid.md lists the pitfalls.
set -euo pipefail

readonly ROOT="${PEERBLOOM_SQUID_ROOT:-/tmp/peerbloom-squid}"
readonly PORT="${SQUID_PORT:-3128}"
readonly DIGEST_PERIOD="${DIGEST_PERIOD:-10}"
readonly CACHE_MB="${CACHE_MB:-64}"
readonly LOGFILE_ROTATE="${LOGFILE_ROTATE:-0}"
readonly SQUID=/usr/sbin/squid

die() { echo "squid-testbed: error: $*" >&2; exit 1; }
note() { echo "squid-testbed: $*" >&2; }

check_addr() {
  [[ "${1:-}" =~ ^127\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] ||
    die "address '${1:-}' is not a loopback address 127.x.y.z"
  [[ "$1" != 127.0.0.1 ]] || die "give Squid its own address, not '127.0.0.1'"
}

dir_of() { echo "$ROOT/$1"; }
service_of() { echo "pb${1//./d}"; }  # -n takes letters and digits only

# Waits up to $2 seconds for command "$1" to succeed. The budgets are generous: the test bed
# runs beside parallel tests and builds, and a wait ends as soon as its command succeeds.
wait_for() {
  local cmd="$1" deadline=$((SECONDS + $2))
  until eval "$cmd" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

alive() { [[ -s "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

install_squid() {
  [[ -x "$SQUID" ]] && return 0
  [[ $(id -u) == 0 ]] || die "squid is not installed and installing it needs root"
  note "installing squid"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends squid >&2 ||
    { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y \
        --no-install-recommends squid >&2; }
  # The package may start a system-wide Squid on *:3128; the test bed wants none.
  if pidof -x /usr/sbin/squid >/dev/null 2>&1 && [[ -s /run/squid.pid ]]; then
    "$SQUID" -k shutdown >/dev/null 2>&1 || true
  fi
}

# The origin: any path answers 200 with a small body and headers that make Squid store it,
# except /ping and /ready (the test bed's own probes), which must not be stored.
write_origin() {
  cat >"$1/origin.py" <<'EOF'
import http.server, socket, sys, threading, urllib.parse

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in two writes; with Nagle on, the body waits for Squid's delayed
    # ACK (40 ms on Linux) and every miss would take that long.
    disable_nagle_algorithm = True
    def _answer(self, with_body):
        body = ("<html><body>%s</body></html>\n" % self.path).encode()
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        size = min(int(query.get("bytes", ["0"])[0]), 64 << 20)
        body += b"." * max(0, size - len(body))
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        probe = self.path in ("/ping", "/ready")
        self.send_header("Cache-Control", "no-store" if probe else "public, max-age=86400")
        self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
        self.end_headers()
        if with_body:
            self.wfile.write(body)
    def do_GET(self): self._answer(True)
    def do_HEAD(self): self._answer(False)
    def log_message(self, *args): pass

class Server6(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6

def listen(spec):
    host, port = spec.rsplit(":", 1)
    v6 = host.startswith("[")
    server = (Server6 if v6 else http.server.ThreadingHTTPServer)((host.strip("[]"), int(port)),
                                                                  Handler)
    return server, "http://%s:%d" % (host, server.server_address[1])

servers = [listen(spec) for spec in ["127.0.0.1:0"] + sys.argv[2:]]
for server, _ in servers[1:]:
    threading.Thread(target=server.serve_forever, daemon=True).start()
with open(sys.argv[1] + ".all", "w") as f:
    f.write("".join(url + "\n" for _, url in servers))
with open(sys.argv[1], "w") as f:  # last: its presence says every listener is up
    f.write(servers[0][1] + "\n")
servers[0][0].serve_forever()
EOF
}

start_origin() {
  local dir="$1"
  if [[ -n "${PEERBLOOM_ORIGIN:-}" ]]; then
    echo "$PEERBLOOM_ORIGIN" >"$dir/origin.url"
    return 0
  fi
  write_origin "$dir"
  rm -f "$dir/origin.url" "$dir/origin.url.all"
  # shellcheck disable=SC2086  # ORIGIN_LISTEN is a list
  python3 "$dir/origin.py" "$dir/origin.url" ${ORIGIN_LISTEN:-} >"$dir/logs/origin.log" 2>&1 &
  echo $! >"$dir/origin.pid"
  wait_for "[[ -s '$dir/origin.url' ]] && curl -sf \$(cat '$dir/origin.url')/ping" 60 ||
    die "origin did not start (see $dir/logs/origin.log)"
}

write_conf() {
  local addr="$1" dir="$2"
  cat >"$dir/squid.conf" <<EOF
# Generated by scripts/squid-testbed.sh: one Squid on $addr, loopback only.
visible_hostname $addr
unique_hostname squid-$addr
http_port $addr:$PORT
icp_port 3130
htcp_port 4827
udp_incoming_address $addr
udp_outgoing_address $addr
pid_filename $dir/squid.pid
cache_effective_user proxy
cache_mem 8 MB
maximum_object_size_in_memory 512 KB
cache_dir ufs $dir/cache $CACHE_MB 4 16
coredump_dir $dir
cache_log $dir/logs/cache.log
access_log stdio:$dir/logs/access.log squid
cache_store_log stdio:$dir/logs/store.log
logfile_rotate $LOGFILE_ROTATE
digest_generation on
acl localnet src 127.0.0.0/8
acl PURGE method PURGE
${SQUID_CONF_BEFORE_ACCESS:-}
http_access allow PURGE localnet
http_access allow localnet
http_access deny all
icp_access allow localnet
icp_access deny all
htcp_access allow localnet
htcp_access deny all
digest_bits_per_entry 5
digest_rebuild_period $DIGEST_PERIOD seconds
digest_rewrite_period $DIGEST_PERIOD seconds
refresh_pattern . 0 20% 4320
shutdown_lifetime 1 second
dns_nameservers 127.0.0.1
debug_options ALL,1
pinger_enable off
EOF
  if [[ -n "${SQUID_CONF_EXTRA:-}" ]]; then
    printf '%s\n' "$SQUID_CONF_EXTRA" >>"$dir/squid.conf"
  fi
}

cmd_start() {
  local addr="$1" dir
  check_addr "$addr"
  dir="$(dir_of "$addr")"
  if alive "$dir/squid.pid"; then note "already running on $addr:$PORT"; return 0; fi
  install_squid
  # A Squid left over from an earlier run (not ours: no pid file) would answer our probes.
  if (exec 3<>"/dev/tcp/$addr/$PORT") 2>/dev/null; then
    die "something already listens on $addr:$PORT (a Squid left from an earlier run?)"
  fi
  trap "cmd_stop '$addr' >/dev/null 2>&1 || true" EXIT  # undo a half start
  mkdir -p "$dir/logs" "$dir/cache"
  write_conf "$addr" "$dir"
  chown -R proxy:proxy "$dir"
  runuser -u proxy -- test -w "$dir/logs" ||
    die "user 'proxy' cannot write '$dir/logs': make every parent directory searchable (chmod o+x)"
  start_origin "$dir"
  local svc
  svc="$(service_of "$addr")"
  "$SQUID" -n "$svc" -f "$dir/squid.conf" -N -z >"$dir/logs/squid-z.log" 2>&1 ||
    die "squid -z failed (see $dir/logs/squid-z.log)"
  "$SQUID" -n "$svc" -f "$dir/squid.conf" >"$dir/logs/squid-start.log" 2>&1 ||
    die "squid did not start (see $dir/logs/squid-start.log, $dir/logs/cache.log)"
  wait_for "curl -s -o /dev/null -x http://$addr:$PORT \$(cat '$dir/origin.url')/ready" 60 ||
    die "squid on $addr:$PORT does not answer (see $dir/logs/cache.log)"
  trap - EXIT
  note "squid on $addr:$PORT, store.log $dir/logs/store.log, origin $(cat "$dir/origin.url")"
}

cmd_fill() {
  local addr="$1" n="$2" prefix="${3:-o}" dir origin i
  check_addr "$addr"
  [[ "$n" =~ ^[0-9]+$ ]] || die "count '$n' is not a number"
  dir="$(dir_of "$addr")"
  origin="$(cat "$dir/origin.url")"
  {
    for ((i = 1; i <= n; i++)); do
      printf 'url = "%s/%s%d.html%s"\noutput = "/dev/null"\n' "$origin" "$prefix" "$i" \
        "${FILL_QUERY:-}"
    done
  } >"$dir/fill.curl"
  curl -sf --no-progress-meter -Z --parallel-max 8 -x "http://$addr:$PORT" -K "$dir/fill.curl" ||
    die "a fetch through $addr failed"
}

cmd_purge() {
  local addr="$1" url="$2" code
  check_addr "$addr"
  code="$(curl -s -o /dev/null -w '%{http_code}' -X PURGE -x "http://$addr:$PORT" "$url")"
  [[ "$code" == 200 ]] || die "PURGE '$url' answered '$code' (404: not cached)"
}

cmd_rotate() {
  local addr="$1" dir
  check_addr "$addr"
  dir="$(dir_of "$addr")"
  alive "$dir/squid.pid" || die "no squid running on $addr"
  local before
  before="$(stat -c %i "$dir/logs/store.log" 2>/dev/null || echo none)"
  "$SQUID" -n "$(service_of "$addr")" -f "$dir/squid.conf" -k rotate ||
    die "squid -k rotate failed on $addr"
  # -k rotate only signals Squid: with rotated copies kept, wait until a new store.log is in
  # place, so that callers see the rotation done.
  if ((LOGFILE_ROTATE > 0)); then
    wait_for "[[ -e '$dir/logs/store.log' && \$(stat -c %i '$dir/logs/store.log') != '$before' ]]" 30 ||
      die "squid on $addr did not rotate store.log"
  fi
}

# Squid reconfigures asynchronously after the signal: it closes its listening ports, rereads
# squid.conf, restarts its helpers and opens the ports again, logging "Accepting ... at
# local=ADDR:PORT" for each. Done when every port it listened on has such a line again.
cmd_reconfigure() {
  local addr="$1" dir log before ports
  check_addr "$addr"
  dir="$(dir_of "$addr")"
  log="$dir/logs/cache.log"
  alive "$dir/squid.pid" || die "no squid running on $addr"
  before="$(wc -l <"$log")"
  ports="$(grep -o 'Accepting .* connections at .* local=[^ ]*' "$log" | sed 's/.*local=//' |
    sort -u)"
  "$SQUID" -n "$(service_of "$addr")" -f "$dir/squid.conf" -k reconfigure ||
    die "squid -k reconfigure failed on $addr"
  local port
  for port in $ports; do
    wait_for "tail -n +$((before + 1)) '$log' | grep -q 'Accepting .* local=$port '" 60 ||
      die "squid on $addr did not listen on $port again after reconfigure (see $log)"
  done
}

cmd_stop() {
  local addr="$1" dir svc
  check_addr "$addr"
  dir="$(dir_of "$addr")"
  svc="$(service_of "$addr")"
  if alive "$dir/squid.pid"; then
    local pid
    pid="$(cat "$dir/squid.pid")"
    "$SQUID" -n "$svc" -f "$dir/squid.conf" -k shutdown >/dev/null 2>&1 || true
    # Squid's master leads its own process group (kid and helpers): a kid left behind would
    # keep the address's ports.
    wait_for "! kill -0 $pid" 20 || {
      note "squid $pid did not stop; killing its process group"
      kill -9 -- "-$pid" 2>/dev/null || kill -9 "$pid"
    }
  fi
  if alive "$dir/origin.pid"; then kill "$(cat "$dir/origin.pid")"; fi
  rm -f "$dir/origin.pid"
}

main() {
  local cmd="${1:-}"
  shift || true
  case "$cmd" in
    start) (($# == 1)) || die "usage: start ADDR"; cmd_start "$1" ;;
    fill) (($# >= 2)) || die "usage: fill ADDR N [PREFIX]"; cmd_fill "$@" ;;
    purge) (($# == 2)) || die "usage: purge ADDR URL"; cmd_purge "$1" "$2" ;;
    rotate) (($# == 1)) || die "usage: rotate ADDR"; cmd_rotate "$1" ;;
    reconfigure) (($# == 1)) || die "usage: reconfigure ADDR"; cmd_reconfigure "$1" ;;
    digest-url) check_addr "${1:-}"; echo "http://$1:$PORT/squid-internal-periodic/store_digest" ;;
    origin) check_addr "${1:-}"; cat "$(dir_of "$1")/origin.url" ;;
    origins)
      check_addr "${1:-}"
      if [[ -n "${PEERBLOOM_ORIGIN:-}" ]]; then cat "$(dir_of "$1")/origin.url"
      else cat "$(dir_of "$1")/origin.url.all"; fi ;;
    dir) check_addr "${1:-}"; dir_of "$1" ;;
    stop) (($# == 1)) || die "usage: stop ADDR"; cmd_stop "$1" ;;
    *) die "unknown command '$cmd' (start, fill, purge, rotate, reconfigure, digest-url, origin, origins, dir, stop)" ;;
  esac
}

main "$@"
