#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# One round of a VM run: several rounds share one boot of the VM pair
# instead of one boot each. A round starts from what a fresh boot gives
# (its VM's module loaded afresh, the bed's UEID, the rxe device or none),
# runs its scripts with a folder of its own as $SMC_OUT (their marks and
# TAP files do not meet another round's; the run's own folder is
# $SMC_RUN_OUT), and ends when both VMs are done
# with it, so that no reload disturbs the other side's last test.
#
#   round.sh NAME [--server-vm N] [--no-rxe] [--mods M1,M2] SCRIPT...
#
# --server-vm 2 swaps the roles of the pair scripts (VM 2 serves);
# --no-rxe takes the rxe devices away before the module is loaded again;
# --mods gives the round's module of VM 1 and VM 2 (smc_rs or upstream;
# by default the one each VM booted with).
# The first round of a boot keeps the module vm-guest.sh loaded when it is
# the round's.
set -u
name=$1
shift
server_vm=1 rxe=1 mods=
while [ $# -gt 0 ]; do
	case "$1" in
	--server-vm) server_vm=$2; shift 2 ;;
	--no-rxe) rxe=0; shift ;;
	--mods) mods=$2; shift 2 ;;
	*) break ;;
	esac
done
: "${SMC_OUT:?run inside the VM bed}" "${SMC_VM:?}" "${SMC_MOD:?}"
base=$SMC_OUT
here=$(cd "$(dirname "$0")" && pwd)
ueid=SMC-RS-TESTBED
peer_vm=$((3 - SMC_VM))
log=$base/rounds-vm$SMC_VM.txt

# broken WHAT: a TAP failure of this round (nothing is recorded when the
# round's set-up holds: the scripts' own tests judge the rest).
broken() {
	echo "not ok - round $name: $1 (VM $SMC_VM)" >>"$SMC_OUT/tap-round-vm$SMC_VM.txt"
	echo "round $name: $1" >>"$log"
}

# await MARK SECONDS: the other VM's mark of this round (or give up).
await() {
	local _
	touch "$base/$name.$1-vm$SMC_VM"
	for _ in $(seq $(($2 * 10))); do
		[ -e "$base/$name.$1-vm$peer_vm" ] && return 0
		sleep 0.1
	done
	broken "no '$1' from VM $peer_vm in $2 s"
	return 1
}

# A module leaves when its sockets and link groups have gone: retried for
# 30 s, as reload_smc_rs does.
unload() {
	local _
	for _ in $(seq 300); do
		lsmod | grep -q "^$1 " || return 0
		rmmod "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	broken "$1 stays loaded"
	return 1
}

fresh_bed() {
	if [ "$rxe" = 0 ]; then
		rdma link delete rxe0 2>/dev/null
	elif [ ! -e /sys/class/infiniband/rxe0 ]; then
		rdma link add rxe0 type rxe netdev eth0
	fi
	if [ ! -e "$base/.round-started-vm$SMC_VM" ]; then
		touch "$base/.round-started-vm$SMC_VM"
		[ "$mod" = "$booted" ] && return 0
	fi
	unload smc_rs && unload smc_diag && unload smc || return 1
	case "$mod" in
	smc_rs)
		insmod "$SMC_TOP/smc_rs.ko" ;;
	upstream)
		modprobe smc && modprobe smc_diag &&
			"$here/tools/smc_ueid" add "$ueid" >/dev/null ;;
	*)
		broken "no module '$mod'"
		return 1 ;;
	esac
}

# This VM's module in this round, and the one it booted with.
booted=$SMC_MOD mod=$SMC_MOD
[ -n "$mods" ] && mod=$(echo "$mods" | cut -d, -f"$SMC_VM")

start=$SECONDS
# $SMC_RUN_OUT stays the run's folder (vm.sh's marks, as link-ctl.py's).
export SMC_RUN_OUT=${SMC_RUN_OUT:-$base}
export SMC_OUT=$base/$name SMC_SERVER_VM=$server_vm SMC_MOD=$mod
mkdir -p "$SMC_OUT"
fresh_bed || broken "the module could not be loaded afresh"
await ready 1800
for script in "$@"; do
	bash "$script"
done
await done 3000 &&
	echo "ok - round $name: both VMs ran it to its end (VM $SMC_VM)" >>"$SMC_OUT/tap-round-vm$SMC_VM.txt"
echo "$((SECONDS - start)) s round $name (VM $SMC_VM)" >>"$log"
exit 0
