#!/usr/bin/env bash
# Builds the .deb with CPack, installs it with `apt-get install ./peerbloom_*.deb`, checks
# what it put in place (dependencies, files, the postinst's key and allow-list, the unit),
# then runs the installed binaries: --check-config on the installed config, and one node
# started from /usr/bin/peerbloomd with a config and state in a temporary directory (not
# through systemctl: the machine may run no systemd). Purges the package at the end, and the
# system user if this test created it.
#
# Needs root (skipped otherwise, exit 77), and a machine without peerbloom installed (the
# test refuses to replace or remove an installation it did not make).
# Usage: deb_install_test.sh BUILD_DIR CPACK_COMMAND
set -euo pipefail
build=$(cd "$1" && pwd) cpack=$2

skip() {
  echo "skipped: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[[ $(id -u) -eq 0 ]] || skip "installing a .deb needs root"
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || skip "not a Debian system"
command -v dpkg-shlibdeps >/dev/null || skip "dpkg-shlibdeps is missing (Debian package dpkg-dev)"
if dpkg-query -W -f='${Status}' peerbloom 2>/dev/null | grep -q "installed"; then
  skip "the peerbloom package is already installed on this machine; not replacing it"
fi
[[ ! -e /usr/bin/peerbloomd ]] || skip "/usr/bin/peerbloomd exists and is not from the package"

tmp=$(mktemp -d /tmp/peerbloom-deb-test.XXXXXX)
user_existed=0
getent passwd peerbloom >/dev/null && user_existed=1
installed=0
daemon_pid=""
cleanup() {
  if [[ -n $daemon_pid ]]; then kill -KILL "$daemon_pid" 2>/dev/null || true; fi
  if [[ $installed -eq 1 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq -o DPkg::Lock::Timeout=300 peerbloom \
      >"$tmp/purge.log" 2>&1 || { echo "purge failed:"; cat "$tmp/purge.log"; }
    if [[ $user_existed -eq 0 ]] && getent passwd peerbloom >/dev/null; then
      deluser --system --quiet peerbloom >/dev/null 2>&1 || userdel peerbloom || true
    fi
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# --- build and inspect the package ------------------------------------------------------
(cd "$build" && "$cpack" -G DEB -B "$tmp/deb" >"$tmp/cpack.log" 2>&1) ||
  { tail -20 "$tmp/cpack.log"; fail "cpack failed"; }
debs=("$tmp"/deb/peerbloom_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "cpack made no single peerbloom_*.deb"
deb=${debs[0]}
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
names=$(tr ',' '\n' <<<"$depends" | sed -e 's/^ *//' -e 's/ .*//')
for dep in adduser libc6 libstdc++6 libzmq5 libzstd1 libssl3 libspdlog1.10-fmt9 libfmt9 \
  libxxhash0 libtomlplusplus3; do
  grep -Fqx "$dep" <<<"$names" || fail "Depends lacks $dep: $depends"
done
dpkg-deb -I "$deb" conffiles | grep -qx /etc/peerbloom/peerbloomd.toml ||
  fail "/etc/peerbloom/peerbloomd.toml is not a conffile"

# --- install ----------------------------------------------------------------------------
installed=1
(cd "$tmp/deb" && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  -o DPkg::Lock::Timeout=300 --no-install-recommends ./"$(basename "$deb")") \
  >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "apt-get install failed"; }
dpkg-query -W -f='${Status}\n' peerbloom | grep -qx "install ok installed" || fail "not installed"

unit=$(dpkg -L peerbloom | grep '/systemd/system/peerbloomd.service$') || fail "no unit installed"
for f in /usr/bin/peerbloomd /usr/bin/peerbloom /etc/peerbloom/peerbloomd.toml \
  /usr/share/man/man1/peerbloom.1.gz /usr/share/man/man8/peerbloomd.8.gz \
  /usr/share/doc/peerbloom/operations.md /usr/share/doc/peerbloom/examples/peerbloomd.example.toml \
  /usr/share/doc/peerbloom/nginx.md /usr/share/peerbloom/nginx/peerbloom-nginx.conf.in \
  /usr/share/peerbloom/nginx/peerbloomd-nginx.conf /usr/share/peerbloom/nginx/nginx-cache-xor; do
  [[ -f $f ]] || fail "$f is not installed"
done
zcat /usr/share/man/man8/peerbloomd.8.gz | grep -q -- '--check-config' || fail "man page lacks the options"

# The postinst: a system user, its state directory, a key pair, an allow-list.
getent passwd peerbloom >/dev/null || fail "no peerbloom user"
[[ $(stat -c '%U %a' /var/lib/peerbloom) == "peerbloom 700" ]] || fail "/var/lib/peerbloom: $(stat -c '%U %a' /var/lib/peerbloom)"
[[ $(stat -c '%U %a' /var/lib/peerbloom/node.key) == "peerbloom 600" ]] || fail "node.key: $(stat -c '%U %a' /var/lib/peerbloom/node.key)"
[[ -f /etc/peerbloom/authorized_keys ]] || fail "no /etc/peerbloom/authorized_keys"
# The secret out of the config: the config stays readable by Squid's helper, the secret is the
# daemon's group's alone; the daemon's user is in Squid's group (logs, the who-has socket).
[[ $(stat -c '%U:%G %a' /etc/peerbloom/cluster.secret) == "root:peerbloom 640" ]] ||
  fail "cluster.secret: $(stat -c '%U:%G %a' /etc/peerbloom/cluster.secret)"
[[ $(wc -c </etc/peerbloom/cluster.secret) -eq 65 ]] || fail "cluster.secret is not 256 bits in hex"
[[ $(stat -c '%a' /etc/peerbloom/peerbloomd.toml) == 644 ]] || fail "peerbloomd.toml mode"
! grep -q '^cluster_secret *=' /etc/peerbloom/peerbloomd.toml || fail "the config holds a secret"
id -nG peerbloom | tr ' ' '\n' | grep -qx proxy || fail "peerbloom is not in group proxy: $(id -nG peerbloom)"

grep -q '^sign-secret-key' /var/lib/peerbloom/node.key || fail "node.key has no sign keys"

# An upgrade from a version before signed origins: a key file with a CURVE pair only gets sign
# keys from the postinst (signatures are required by default), and keeps its CURVE pair.
cp -a /var/lib/peerbloom/node.key "$tmp/node.key.fresh"
grep -E '^(public|secret)-key' "$tmp/node.key.fresh" >/var/lib/peerbloom/node.key
curve_pub=$(grep '^public-key' /var/lib/peerbloom/node.key)
/var/lib/dpkg/info/peerbloom.postinst configure 0.0.9 >"$tmp/reconfigure.log" 2>&1 ||
  { cat "$tmp/reconfigure.log"; fail "postinst configure on an old key failed"; }
grep -q '^sign-secret-key' /var/lib/peerbloom/node.key || fail "the upgrade left node.key without sign keys"
[[ $(grep '^public-key' /var/lib/peerbloom/node.key) == "$curve_pub" ]] || fail "the upgrade changed the CURVE key"
[[ $(stat -c '%U %a' /var/lib/peerbloom/node.key) == "peerbloom 600" ]] ||
  fail "node.key after the upgrade: $(stat -c '%U %a' /var/lib/peerbloom/node.key)"

if command -v systemd-analyze >/dev/null; then
  out=$(systemd-analyze verify "$unit" 2>&1) || fail "systemd-analyze verify $unit: $out"
  [[ -z $out ]] || fail "systemd-analyze verify $unit: $out"
  echo "systemd-analyze verify $unit: clean"
fi

# --- run the installed binaries -----------------------------------------------------------
out=$(runuser -u peerbloom -- /usr/bin/peerbloomd --config /etc/peerbloom/peerbloomd.toml \
  --check-config 2>&1) ||
  fail "installed config: $out"
[[ $out == "config '/etc/peerbloom/peerbloomd.toml' is valid" ]] || fail "check-config said: $out"

# One node from the installed config, moved to a temporary directory and a port the OS picks.
# The directory stands for '/', and run/ for the unit's /run/peerbloom (mode 0711).
chmod 0711 "$tmp"
mkdir -m 0700 "$tmp/state"
mkdir -m 0711 "$tmp/run"
sed -e "s#/var/lib/peerbloom#$tmp/state#g" -e "s#/etc/peerbloom/authorized_keys#$tmp/authorized_keys#" \
  -e "s#/run/peerbloom#$tmp/run#g" \
  -e 's#^listen = .*#listen = "tcp://127.0.0.1:0"#' /etc/peerbloom/peerbloomd.toml >"$tmp/node.toml"
: >"$tmp/authorized_keys"
/usr/bin/peerbloom keygen -o "$tmp/state/node.key" >/dev/null
out=$(/usr/bin/peerbloomd --config "$tmp/node.toml" --check-config 2>&1) || fail "$out"
# Without --foreground the daemon detaches; the command returns once it serves.
timeout 120 /usr/bin/peerbloomd --config "$tmp/node.toml" || fail "start: $(tail "$tmp/state/peerbloomd.log")"
daemon_pid=$(cat "$tmp/state/peerbloomd.lock")
cli=(timeout 60 /usr/bin/peerbloom --config "$tmp/node.toml")
[[ $("${cli[@]}" add http://example.com/a) == "added 1" ]] || fail "add"
endpoint=$(cat "$tmp/state/peer.endpoint")
out=$("${cli[@]}" who-has http://example.com/a) || fail "who-has: $out"
[[ $out == "http://example.com/a: cache-01 (local, $endpoint)" ]] || fail "who-has said: $out"
stats=$("${cli[@]}" --json stats) || fail "stats: $stats"
grep -q '"items": 1' <<<"$stats" || fail "stats: $stats"
"${cli[@]}" stats >/dev/null || fail "stats table"
kill -TERM "$daemon_pid"
for _ in $(seq 600); do
  kill -0 "$daemon_pid" 2>/dev/null || break
  sleep 0.1
done
! kill -0 "$daemon_pid" 2>/dev/null || fail "the daemon did not stop within 60 s"
daemon_pid=""
[[ -f $tmp/state/state.snapshot ]] || fail "no final snapshot"
grep -q "stopping: writing the final snapshot" "$tmp/state/peerbloomd.log" || fail "log: $(tail "$tmp/state/peerbloomd.log")"

# What the guide puts in /etc/peerbloom goes with the package on purge.
cp "$tmp/state/node.key.pub" /etc/peerbloom/cache-02.key.pub

# --- remove -------------------------------------------------------------------------------
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq -o DPkg::Lock::Timeout=300 peerbloom \
  >"$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; fail "apt-get purge failed"; }
installed=0
[[ ! -e /usr/bin/peerbloomd && ! -e /var/lib/peerbloom && ! -e /etc/peerbloom ]] ||
  fail "purge left files: $(ls -d /usr/bin/peerbloomd /var/lib/peerbloom /etc/peerbloom 2>/dev/null)"
! getent passwd peerbloom >/dev/null || fail "purge left the peerbloom user"
! getent group peerbloom >/dev/null || fail "purge left the peerbloom group"
echo "package installed, ran one node from /usr/bin, and purged"
