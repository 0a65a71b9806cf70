#!/usr/bin/env bash
# Installs the Debian packages cephbench's tests and benchmarks use, if they
# are missing. Safe to run again; needs root (or sudo) only when it installs.
set -euo pipefail

packages=(util-linux e2fsprogs mount fio jq g++ iperf3 iproute2 python3 python3-pandas python3-numpy gnuplot-nox chromium
  ceph-mon ceph-mgr ceph-osd ceph-mds radosgw ceph-common ceph-fuse fuse librados-dev libradospp-dev librbd-dev libcephfs-dev uuid-runtime
  openssh-client openssh-server)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
