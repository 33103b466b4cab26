# Emulated hosts for the deployment guides' tests (tests/package/deploy_*_test.sh), sourced
# by them. A host is a network namespace on a bridge of the test's own, plus a mount and UTS
# namespace with its own copies of the directories a test names (its /etc/peerbloom,
# /var/lib/peerbloom, /root, /etc/hosts, /etc/resolv.conf, a fresh /run, /tmp and /dev/shm,
# and the test's own list), its host name, and the stand-ins of tests/package/deploy_guide/
# (apt-get, ssh, scp, systemctl) first in PATH. The package is built by CPack and installed
# once on the machine by the real apt-get, at the guide's first install.
#
# The hosts are the guides' own: admin 10.0.0.1 and cache-01..03 at 10.0.0.11-13 (`hosts`,
# the admin host first; `caches`; `addr`, host -> address). The test sets, before it sources
# this file:
#   guide  the guide it runs (a Markdown file with `<!-- run: HOST... -->` markers)
#   ns     the prefix of its network namespaces
#   work   its work directory, seen by every host: under /var/tmp
# and defines check_block ID N (what it checks after a block with id=ID, the guide's Nth).
# Then it calls, in order: hosts_preflight PACKAGE..., hosts_workdir, hosts_package BUILD
# CPACK, pristine PACKAGE DIR (each package whose pristine configuration a stand-in restores),
# hosts_up MOUNTPOINT..., origin_up, run_guide, and at the end purge_package. WORK is removed
# at the end of a run that passed, unless KEEP is set in the environment.

hosts=(admin cache-01 cache-02 cache-03)
caches=(cache-01 cache-02 cache-03)
declare -A addr=([admin]=10.0.0.1 [cache-01]=10.0.0.11 [cache-02]=10.0.0.12 [cache-03]=10.0.0.13)

skip() {
  echo "skipped: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  [[ -f ${work:-}/log ]] && { echo "--- last lines of $work/log:" >&2; tail -n 30 "$work/log" >&2; }
  exit 1
}

# Skips (77) unless the machine can emulate hosts and install the package; installs the
# Debian packages named when missing.
hosts_preflight() {  # package...
  local p missing=()
  [[ $(id -u) -eq 0 ]] || skip "emulating hosts and installing a .deb need root"
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || skip "not a Debian system"
  command -v dpkg-shlibdeps >/dev/null || skip "dpkg-shlibdeps is missing (Debian package dpkg-dev)"
  for p in ip nsenter unshare python3; do command -v $p >/dev/null || skip "$p is missing"; done
  if dpkg-query -W -f='${Status}' peerbloom 2>/dev/null | grep -q "installed"; then
    skip "the peerbloom package is already installed on this machine; not replacing it"
  fi
  [[ ! -e /usr/bin/peerbloomd ]] || skip "/usr/bin/peerbloomd exists and is not from the package"
  ip netns list | grep -q "^$ns-" && skip "network namespaces $ns-* exist: another run is going on"
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 \
      --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
      skip "cannot install ${missing[*]} with apt-get"
  fi
  ip netns add "$ns-probe" 2>/dev/null || skip "cannot make network namespaces here"
  ip netns del "$ns-probe"
}

# WORK with the tool and the stand-ins in it, the log (fd 3), and the cleanup at exit.
hosts_workdir() {
  rm -rf "$work"
  mkdir -p "$work/bin" "$work/pkg" "$work/pristine" "$work/blocks" "$work/hosts"
  # The tool runs inside the hosts too: from WORK, not from a source tree they may not see.
  cp "$src/tests/package/deploy_guide_tool.py" "$work/bin/deploy_guide_tool.py"
  tool=$work/bin/deploy_guide_tool.py
  cp "$src"/tests/package/deploy_guide/{apt-get,scp,ssh,systemctl} "$work/bin/"
  : >"$work/log"
  echo "work directory: $work"
  exec 3>>"$work/log"
  made_dirs=() installed=0 pids=() user_existed=0
  getent passwd peerbloom >/dev/null && user_existed=1
  trap hosts_cleanup EXIT
}
log() { echo "$(date +%T.%3N) $*" >&3; }

# Every process in a host's mount namespace: the services, their helpers, the holder.
kill_hosts() {
  local p mnt proc
  for p in "${pids[@]}"; do
    mnt=$(readlink "/proc/$p/ns/mnt" 2>/dev/null) || continue
    for proc in /proc/[0-9]*; do
      if [[ $(readlink "$proc/ns/mnt" 2>/dev/null) == "$mnt" ]]; then
        kill -KILL "${proc#/proc/}" 2>/dev/null || true
      fi
    done
  done
  if [[ -n ${origin_pid:-} ]]; then kill -KILL "$origin_pid" 2>/dev/null || true; fi
}
hosts_cleanup() {
  local code=$? h d
  set +e
  kill_hosts
  for h in "${hosts[@]}" bridge; do ip netns del "$ns-$h" 2>/dev/null; done
  if [[ $installed -eq 1 ]] && dpkg-query -W -f='${Status}' peerbloom 2>/dev/null | grep -q installed; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq -o DPkg::Lock::Timeout=300 peerbloom \
      >>"$work/log" 2>&1 || echo "purge failed: see $work/log"
  fi
  if [[ $user_existed -eq 0 ]] && getent passwd peerbloom >/dev/null; then
    deluser --system --quiet peerbloom >/dev/null 2>&1 || userdel peerbloom
  fi
  for d in "${made_dirs[@]}"; do [[ -d $d ]] && rmdir "$d" 2>/dev/null; done
  # The run's files stay in /var/tmp for a look after a failure.
  [[ $code -eq 0 && -z ${KEEP:-} ]] && rm -rf "$work"
  exit $code
}

# The package, built by CPack: WORK/pkg/peerbloom.deb (the apt-get stand-in's reference), a
# copy under its own name in root's home on the admin host (by hosts_up), and its files in
# WORK/pkg/root.
hosts_package() {  # build_dir cpack
  local debs
  (cd "$1" && "$2" -G DEB -B "$work/pkg/cpack" >>"$work/log" 2>&1) || fail "cpack failed"
  debs=("$work"/pkg/cpack/peerbloom_*.deb)
  [[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "cpack made no single peerbloom_*.deb"
  deb_name=$(basename "${debs[0]}")
  cp "${debs[0]}" "$work/pkg/$deb_name"
  cp "${debs[0]}" "$work/pkg/peerbloom.deb"
  dpkg-deb -x "${debs[0]}" "$work/pkg/root"
}

# A package's pristine configuration under DIR, as a fresh install leaves it: its directories,
# its conffiles as Debian ships them (the machine's copies, refused when changed) and the
# symbolic links its postinst made there (Debian's nginx enables its default site and modules
# so).
pristine() {  # package dir
  local f sum mode
  mkdir -p "$work/pristine/$1"
  while read -r f; do
    install -d -m "$(stat -c %a "$f")" "$work/pristine/$1/${f#"$2"/}"
  done < <(find "$2" -mindepth 1 -type d)
  while read -r f sum _; do
    [[ $f == "$2"/* ]] || continue
    [[ -f $f && $(md5sum <"$f" | cut -d' ' -f1) == "$sum" ]] ||
      skip "$f differs from Debian's $1 package: this test needs its pristine configuration"
    mkdir -p "$work/pristine/$1/$(dirname "${f#"$2"/}")"
    cp -p "$f" "$work/pristine/$1/${f#"$2"/}"
  done < <(dpkg-query -W -f='${Conffiles}\n' "$1")
  while read -r f; do
    mkdir -p "$work/pristine/$1/$(dirname "${f#"$2"/}")"
    cp -P "$f" "$work/pristine/$1/${f#"$2"/}"
  done < <(find "$2" -type l)
  mode=$(stat -c %a "$2") && chmod "$mode" "$work/pristine/$1"
}

# The hosts, each with its own copy of the mount points named (they must exist on the machine,
# or be creatable there: the ones this makes are removed at the end), up and reachable.
# A mount point's copy starts empty: what a fresh install puts there is the stand-ins' work.
hosts_up() {  # mountpoint...
  local i=0 h o d root
  echo $$ >"$work/root.pid"
  echo "HOME=/root USER=root LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8 TERM=dumb" \
    "PATH=$work/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" >"$work/login.env"
  # /etc/peerbloom and /var/lib/peerbloom: the package's install on the machine takes them
  # over, its purge removes them.
  for d in /etc/peerbloom /var/lib/peerbloom "$@"; do
    [[ -d $d ]] || { mkdir -p "$d" && made_dirs+=("$d"); }
  done
  ip netns add "$ns-bridge"
  ip -n "$ns-bridge" link add br0 type bridge
  ip -n "$ns-bridge" link set br0 up
  : >"$work/hosts.map"
  for h in "${hosts[@]}"; do
    i=$((i + 1))
    root=$work/hosts/$h
    mkdir -p "$root/root" "$root/mnt"
    chmod 0700 "$root/root"
    : >"$root/mounts"
    for d in /etc/peerbloom /var/lib/peerbloom "$@"; do
      mkdir -p "$root/mnt$d"
      echo "$root/mnt$d $d" >>"$root/mounts"
    done
    for o in "${hosts[@]}"; do
      [[ $o == "${hosts[0]}" ]] && echo "${addr[$o]} $o" || echo "${addr[$o]} $o.example.net $o"
    done >"$root/hosts"
    (echo "127.0.0.1 localhost" && cat "$root/hosts") >"$root/hosts.tmp" && mv "$root/hosts.tmp" "$root/hosts"
    echo "nameserver 127.0.0.1" >"$root/resolv.conf"
    ip netns add "$ns-$h"
    ip -n "$ns-bridge" link add "v$i" type veth peer name eth0 netns "$ns-$h"
    ip -n "$ns-bridge" link set "v$i" master br0 up
    ip -n "$ns-$h" addr add "${addr[$h]}/24" dev eth0
    ip -n "$ns-$h" link set eth0 up
    ip -n "$ns-$h" link set lo up
    # The holder: its mount and UTS namespaces are the host's; it sleeps until killed.
    nsenter --net="/run/netns/$ns-$h" unshare --mount --uts --propagation private -- \
      bash -c '
        set -e
        hostname "$1"
        r=$2
        while read -r from to; do mount --bind "$from" "$to"; done <"$r/mounts"
        mount --bind "$r/root" /root
        mount --bind "$r/hosts" /etc/hosts
        mount --bind "$r/resolv.conf" /etc/resolv.conf
        mount -t tmpfs -o mode=0755 tmpfs /run
        mount -t tmpfs -o mode=1777 tmpfs /tmp
        mount -t tmpfs -o mode=1777 tmpfs /dev/shm
        touch "$r/ready"
        exec sleep infinity' holder "$h" "$root" </dev/null >>"$work/log" 2>&1 &
    pids+=($!)
    disown
    echo "$h ${addr[$h]} $!" >>"$work/hosts.map"
  done
  for h in "${hosts[@]}"; do
    for _ in $(seq 100); do [[ -f $work/hosts/$h/ready ]] && break; sleep 0.1; done
    [[ -f $work/hosts/$h/ready ]] || fail "host $h did not come up"
  done
  cp "$work/pkg/$deb_name" "$work/hosts/${hosts[0]}/root/"
}
# A file of HOST's copy of a mount point, seen from the machine.
host_path() {  # host path
  echo "$work/hosts/$1/mnt$2"
}

on() {  # HOST COMMAND...: as root on that host, through the ssh stand-in
  local h=$1
  shift
  "$work/bin/ssh" "root@$h" "$@" </dev/null
}

# The origin on the admin host, port 80: every path answers a cacheable page; WORK/origin.log
# has a line per request.
origin_up() {
  local h a=${addr[${hosts[0]}]}
  nsenter -t "${pids[0]}" -m -u -n -- python3 "$tool" origin "$a" 80 "$work/origin.log" \
    >>"$work/log" 2>&1 &
  origin_pid=$!
  disown
  for _ in $(seq 100); do on "${hosts[0]}" curl -sf -o /dev/null "http://$a/" && break; sleep 0.1; done
  for h in "${hosts[@]}"; do
    on "$h" curl -sf -o /dev/null "http://$a/" || fail "$h does not reach the origin"
  done
  log "hosts up"
}

now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$@"; }

# Runs block N on HOST until it succeeds (at most UNTIL s) or once; fails with its text.
run_block() {  # n host until line
  local n=$1 h=$2 until=$3 line=$4 out=$work/blocks/$1.$2.out deadline
  deadline=$(($(date +%s) + until))
  log "block $n (guide line $line) on $h"
  block_t0=$(now)
  while ! on "$h" bash -e "$work/blocks/$n.sh" >"$out" 2>&1; do
    if [[ $until -eq 0 || $(date +%s) -ge $deadline ]]; then
      echo "--- ${guide#"$src"/} line $line, on $h (until=$until):" >&2
      cat "$work/blocks/$n.sh" >&2
      echo "--- its output:" >&2
      cat "$out" >&2
      fail "a block of the guide failed on $h"
    fi
    sleep 0.2
  done
  cat "$out" >&3
}

# Every block of the guide, in order, on each host named; check_block after those with an id.
run_guide() {  # min_blocks
  local n hostlist until id line h on_hosts
  python3 "$tool" blocks "$guide" "$work/blocks" >"$work/blocks/list" || fail "reading the guide"
  [[ $(wc -l <"$work/blocks/list") -ge $1 ]] || fail "the guide has too few run blocks"
  installed=1  # by the apt-get stand-in, on the machine, at the guide's first install
  t_start=$(now)
  while read -r n hostlist until id line; do
    IFS=, read -ra on_hosts <<<"$hostlist"
    for h in "${on_hosts[@]}"; do run_block "$n" "$h" "$until" "$line"; done
    [[ $id == - ]] || check_block "$id" "$n"
  done <"$work/blocks/list"
}

# After a guide's "one cluster secret" block on the admin host: one secret on the three nodes
# (three equal sums), each file still readable by the daemon's group only.
check_secret() {  # output
  [[ $(awk 'NR % 2 == 1 { print $1 }' "$1" | sort -u | wc -l) -eq 1 &&
    $(awk 'NR % 2 == 0' "$1" | sort -u) == "root:peerbloom 640" &&
    $(wc -l <"$1") -eq 6 ]] || fail "secret: $(cat "$1")"
}

# Purges the package: nothing of peerbloom stays on the machine.
purge_package() {
  local left
  kill_hosts
  dpkg -L peerbloom >"$work/package.files"
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq -o DPkg::Lock::Timeout=300 peerbloom \
    >>"$work/log" 2>&1 || fail "apt-get purge failed"
  left=$(
    while read -r f; do if [[ -e $f && ! -d $f ]]; then echo "$f"; fi; done <"$work/package.files"
    for d in /etc/peerbloom /var/lib/peerbloom /run/peerbloom /usr/share/peerbloom \
      /usr/share/doc/peerbloom; do if [[ -e $d ]]; then echo "$d"; fi; done
  )
  [[ -z $left ]] || fail "purge left: $left"
  ! getent passwd peerbloom >/dev/null && ! getent group peerbloom >/dev/null ||
    fail "purge left the peerbloom user or group"
}
