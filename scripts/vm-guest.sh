#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a test VM (see vm.sh): brings up the link and its rxe device,
# loads the chosen SMC module, runs the command, and leaves the command's exit
# status, the kernel log and a kmemleak report in the shared output folder.
#
#   vm-guest.sh N MOD OUT CMDFILE
set -u
n=$1 mod=$2 out=$3 cmdfile=$4
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")

# SMC_KO: the smc_rs.ko to load, built for the kernel that runs (vm.sh).
ko=$(cat "$out/vm$n.ko" 2>/dev/null) || ko=$top/smc_rs.ko
export SMC_VM=$n SMC_OUT=$out SMC_TOP=$top SMC_MOD=$mod SMC_KO=$ko
export PATH=$top/selftests:$top/selftests/tools:$PATH
# The host's tshark (scripts/decoder.sh) for the captures in $out.
[ -d "$out/decode" ] && export SMC_DECODE=$out/decode

mount -t debugfs none /sys/kernel/debug 2>/dev/null
ip link set lo up
# The link's NIC has the MAC 52:54:00:5c:00:0N, a pair's second link's
# 52:54:00:5c:01:0N (see vm.sh); whatever they were called at boot, they
# are eth0 and eth1 (through names of their own, so that no rename finds
# its target taken). eth1 stays down until a test brings it up.
for dev in /sys/class/net/*; do
	case "$(cat "$dev/address" 2>/dev/null)" in
	52:54:00:5c:00:0*) ip link set "${dev##*/}" name smcbed0 ;;
	52:54:00:5c:01:0*) ip link set "${dev##*/}" name smcbed1 ;;
	esac
done
ip link set smcbed0 name eth0 2>/dev/null
ip link set smcbed1 name eth1 2>/dev/null
if ip link show eth0 >/dev/null 2>&1; then
	ip link set eth0 up
	ip addr add "10.10.0.$n/24" dev eth0
	ip -6 addr add "fd00::$n/64" dev eth0 nodad
	[ "$(cat "$out/vm$n.rxe" 2>/dev/null)" = 0 ] || rdma link add rxe0 type rxe netdev eth0
fi

ueid=SMC-RS-TESTBED
case "$mod" in
smc_rs)
	insmod "$SMC_KO" || { echo 1 >"$out/vm$n.rc"; exit 1; }
	;;
upstream)
	modprobe smc && modprobe smc_diag &&
		"$top/selftests/tools/smc_ueid" add "$ueid" ||
		{ echo 1 >"$out/vm$n.rc"; exit 1; }
	;;
none) ;;
*) echo "unknown module choice '$mod'" >&2; echo 1 >"$out/vm$n.rc"; exit 1 ;;
esac

# kmemleak=off on the command line (benchmarks): no leak report.
kmemleak=/sys/kernel/debug/kmemleak
grep -qw kmemleak=off /proc/cmdline && kmemleak=/nonexistent
# Leaks from boot are not ours: forget them before the command runs.
[ -w $kmemleak ] && echo clear >$kmemleak
touch "$out/vm$n.ready"

bash "$cmdfile"
rc=$?

# kmemleak reports objects unreferenced for 5 s or more: wait, then scan
# twice (the first scan can miss objects still referenced from stacks).
if [ -w $kmemleak ]; then
	sleep 6
	echo scan >$kmemleak
	echo scan >$kmemleak
	cat $kmemleak >"$out/vm$n.kmemleak"
fi
dmesg >"$out/vm$n.dmesg"
echo "$rc" >"$out/vm$n.rc"
exit 0
