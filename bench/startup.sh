#!/usr/bin/env bash
# What a run costs besides its ops: each peer command and its cephbench
# counterpart run one op (or the fewest the command allows), ROUNDS times,
# alternately, and the script prints the median CPU (user + system, from
# the kernel's accounting of the finished process, in ms) of each and
# cephbench/peer. Start-up, connecting, buffers, the cluster's snapshot and
# watch, and saving the result are all in it.
#
#   bench/startup.sh               uses the cluster in CEPH_CONF, or starts a sandbox
# Environment: ROUNDS (default 5), POOL (default cbstartup, created and
# removed), CEPHBENCH (default bin/cephbench).
ROUNDS=${ROUNDS:-5}
POOL=${POOL:-cbstartup}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
before_exit() { ceph osd pool rm "$POOL" "$POOL" --yes-i-really-really-mean-it >/dev/null 2>&1 || true; }
ceph osd pool create "$POOL" 32 >/dev/null 2>&1
rbd pool init "$POOL"
rbd create -p "$POOL" startup --size 64M
mkdir "$out/fio" && ln -s "$(realpath "$CEPH_CONF")" "$out/fio/ceph.conf"

# cpu_ms CMD...: runs CMD in $out/fio (fio's rbd engine reads ceph.conf
# there), its output discarded, and prints the CPU it and its children took,
# in ms, with microsecond resolution.
cpu_ms() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if r.returncode:
    sys.exit(f"{sys.argv[1:]} failed: {r.stderr.decode()[-400:]}")
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{(u.ru_utime + u.ru_stime) * 1000:.2f}")
PY
}

median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# row NAME 'PEER CMD' 'CEPHBENCH CMD': both run with word splitting.
row() {
  local name=$1 peer=$2 cb=$3
  rm -f "$out/peer" "$out/cb"
  for i in $(seq "$ROUNDS"); do
    # shellcheck disable=SC2086
    if [ $((i % 2)) -eq 1 ]; then
      (cd "$out/fio" && cpu_ms $peer) >>"$out/peer"; (cd "$out/fio" && cpu_ms $cb) >>"$out/cb"
    else
      (cd "$out/fio" && cpu_ms $cb) >>"$out/cb"; (cd "$out/fio" && cpu_ms $peer) >>"$out/peer"
    fi
  done
  local p c
  p=$(median <"$out/peer"); c=$(median <"$out/cb")
  printf '%-34s %10s %10s %8s\n' "$name" "$p" "$c" "$(ratio "$c" "$p")"
}

printf '%-34s %10s %10s %8s\n' "one-op run, median of $ROUNDS" "peer ms" "cb ms" "cb/peer"
row "rados bench write, 1 object 4K" "rados bench -p $POOL 10 write -b 4096 -t 1 --max-objects 1" \
  "$CEPHBENCH rados bench -p $POOL 10 write -b 4096 -t 1 --max-objects 1 --results $out/res"
row "rbd bench write, 1 op 4K" "rbd bench -p $POOL startup --io-type write --io-size 4K --io-total 4K --io-threads 1" \
  "$CEPHBENCH rbd bench -p $POOL startup --io-type write --io-size 4K --io-total 4K --io-threads 1 --results $out/res"
row "rbd bench write, 1 op 4M" "rbd bench -p $POOL startup --io-type write --io-size 4M --io-total 4M --io-threads 1" \
  "$CEPHBENCH rbd bench -p $POOL startup --io-type write --io-size 4M --io-total 4M --io-threads 1 --results $out/res"
row "fio rbd randwrite, 1 op 4K" "fio --name=s --ioengine=rbd --clientname=admin --pool=$POOL --rbdname=startup --rw=randwrite --bs=4k --number_ios=1 --output=/dev/null" \
  "$CEPHBENCH fio --name=s --ioengine=rbd --clientname=admin --pool=$POOL --rbdname=startup --rw=randwrite --bs=4k --number_ios=1 --output=/dev/null --results $out/res"
row "fio null, 1 op 4K" "fio --name=s --ioengine=null --size=4k --bs=4k --output=/dev/null" \
  "$CEPHBENCH fio --name=s --ioengine=null --size=4k --bs=4k --output=/dev/null --results $out/res"
