#!/usr/bin/env bash
# Installs the Debian 12 packages peerbloom builds and tests with, only those missing.
# Usage: scripts/install-deps.sh [--with-squid] [--with-results] [--with-bench]
# --with-results adds what `make results` and the benchmarks' comparisons use.
# --with-squid (what `make test` uses) adds the programs the integration tests run: Squid and
# its origin server, nginx (the nginx cluster test), the Prometheus server that scrapes a test
# cluster, and the packaging tools.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang clang-format
  libzmq3-dev cppzmq-dev libzstd-dev libssl-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libxxhash-dev
  libcpp-httplib-dev
  iproute2 procps
)
if [[ " $* " == *" --with-squid "* ]]; then
  packages+=(squid python3)
  # tests/integration/nginx_cluster_test.cc: three nginx caches and an origin; curl fetches.
  packages+=(nginx-core curl)
  packages+=(prometheus)
  # The package test: cpack's dependency scan, the man page lint, unit verification.
  packages+=(dpkg-dev)
  packages+=(groff-base)
  packages+=(systemd)
fi
# make results (scripts/results.sh) plots with Debian's matplotlib.
if [[ " $* " == *" --with-results "* ]]; then
  packages+=(python3-matplotlib)
  # bench/control_bench.sh times Redis GETBIT beside who-has.
  packages+=(redis-server)
fi
# make bench (scripts/bench.sh): the report's plots, and the shared-Redis-bitmap comparison.
if [[ " $* " == *" --with-bench "* ]]; then
  packages+=(python3-matplotlib)
  packages+=(redis-server)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

log="${PEERBLOOM_APT_LOG:-/tmp/peerbloom-apt.log}"
echo "install-deps: installing ${missing[*]} (apt output in $log)"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# Packages such as squid start a system service on install, listening on every interface.
# peerbloom's tests start their own instances on loopback, so keep services from starting
# during the install (policy-rc.d exit 101 = action forbidden), and restore any existing one.
policy=/usr/sbin/policy-rc.d
saved_policy=""
if [[ -e $policy ]]; then
  saved_policy=$(mktemp)
  "${sudo_cmd[@]}" cp -p "$policy" "$saved_policy"
fi
restore_policy() {
  if [[ -n $saved_policy ]]; then
    "${sudo_cmd[@]}" mv "$saved_policy" "$policy"
  else
    "${sudo_cmd[@]}" rm -f "$policy"
  fi
}
trap restore_policy EXIT
printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
"${sudo_cmd[@]}" chmod 755 "$policy"

if ! { "${sudo_cmd[@]}" apt-get update -qq &&
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  echo "install-deps: error: apt-get failed; the end of $log:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
