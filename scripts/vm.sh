#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one VM, or two VMs joined by a virtual Ethernet link, on the cached
# kernel and run a command in each.
#
#   vm.sh single MOD CMD
#   vm.sh pair MOD1 CMD1 MOD2 CMD2
#
# MOD is smc_rs (this repository's module), upstream (the kernel's smc.ko,
# with a UEID set so SMC-Rv2 can work over rxe) or none. Each VM gets an rxe
# device on eth0; VM n has address 10.10.0.n/24 and fd00::n/64. A pair
# also has a second link between eth1 and eth1, down and without rxe
# until a test brings it up (selftests/lib.sh: second_link_up).
#
# SMC_VM_RXE=0 leaves the rxe devices out (SMC-R impossible: a pure CLC
# negotiation test). SMC_VM_APPEND adds kernel boot options (benchmarks
# turn the debug kernel's run-time checkers off with it).
# SMC_KERNEL_FLAVOUR picks the kernel (scripts/build-kernel.sh) and
# SMC_VM_KO the smc_rs.ko built for it (default: this repository's,
# built for the test kernel); the guests load it from a copy in the output
# folder.
#
# Results land in $SMC_VM_OUT (default: a fresh temporary directory), which
# the guests see read-write: vmN.log (console), vmN.dmesg, vmN.rc, plus
# whatever the commands write to $SMC_OUT. Exit status: 0 when every command
# succeeded and no guest printed a kernel splat.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"

mode=${1:?usage: vm.sh single MOD CMD | pair MOD1 CMD1 MOD2 CMD2}
kdir=$("$here/build-kernel.sh")
out=${SMC_VM_OUT:-$(mktemp -d /tmp/smc_rs-vm.XXXXXX)}
mkdir -p "$out"
rm -f "$out"/vm*.rc "$out"/vm*.ko "$out"/vm*.ready "$out"/vm*.dmesg "$out"/vm*.kmemleak "$out"/vm*.log "$out"/link*.sock \
	"$out"/mon-vm*.sock "$out"/linkctl*
rm -rf "$out/decode"
mkdir -p "$out/decode"
ko=$top/smc_rs.ko
if [ -n "${SMC_VM_KO:-}" ]; then
	ko=$out/smc_rs.ko
	cp "$SMC_VM_KO" "$ko" || die "cannot copy $SMC_VM_KO"
fi
# The guests' tshark runs here (scripts/decoder.sh), for as long as they do.
"$here/decoder.sh" "$out/decode" &
decoder_pid=$!
trap 'kill "$decoder_pid" 2>/dev/null' EXIT
timeout_s=${SMC_VM_TIMEOUT:-900}
accel=--disable-kvm
[ "${SMC_VM_KVM:-0}" = 1 ] && accel=
# Multi-threaded TCG (QEMU 7.2) races with the kernel's live code patching
# on SMP guests: a vCPU can run a stale translation of an int3 that
# text_poke_bp() already removed, and the guest dies with "Oops: int3"
# early in boot. One TCG thread serialises the vCPUs; the guest stays SMP.
tcg_smp_opts=
[ -n "$accel" ] && tcg_smp_opts="-accel tcg,thread=single"

# start_vm N MOD CMD [QEMU_NET_OPTS [CPUS]]: boots VM N in the background;
# its pid is left in vm_pid.
start_vm() {
	local n=$1 mod=$2 cmd=$3 net=${4:-} cpus=${5:-1}
	# The command travels as a file in the shared folder: no quoting through
	# virtme-ng's own shell.
	printf '%s\n' "$cmd" >"$out/vm$n.cmd"
	echo "${SMC_VM_RXE:-1}" >"$out/vm$n.rxe"
	echo "$ko" >"$out/vm$n.ko"
	local -a args=(--run "$kdir" $accel --cpus "$cpus" --memory 2G --verbose
		--rodir "$top" --rwdir "$out"
		--exec "bash $here/vm-guest.sh $n $mod $out $out/vm$n.cmd")
	# udev with one rule: the full set's coldplug and settle took 55 to
	# 60 s of a 105 s boot of the pair under TCG, for nothing the tests use
	# (vm-guest.sh names the NICs by MAC, devtmpfs makes the device nodes,
	# every RDMA driver is built in). The init starts udevd whatever is
	# mounted, but its rules folders can be one of ours (/lib is an overlay
	# of its own in the guest), with the rule that names the virtio serial
	# ports the init runs the command through. SMC_VM_UDEV=1 keeps the
	# host's rules.
	if [ "${SMC_VM_UDEV:-0}" != 1 ]; then
		mkdir -p "$out/.udev-rules"
		echo 'SUBSYSTEM=="virtio-ports", KERNEL=="vport*", ATTR{name}=="?*", SYMLINK+="virtio-ports/$attr{name}"' \
			>"$out/.udev-rules/50-virtio-ports.rules"
		args+=(--rodir "/usr/lib/udev/rules.d=$out/.udev-rules" --rodir "/lib/udev/rules.d=$out/.udev-rules")
	fi

	# A log buffer that keeps a whole run's debug messages (dmesg at the
	# end reads it: a failure's cause is often an hour back).
	args+=(--append "log_buf_len=32M${SMC_VM_APPEND:+ $SMC_VM_APPEND}")
	[ "$cpus" -gt 1 ] && net="$net $tcg_smp_opts"
	# SMC_VM_ICOUNT=SHIFT: the guest's clock counts instructions (one per
	# 2^SHIFT ns) and skips idle time, so that what the guest times is the
	# work its CPUs did (see Documentation/benchmarks.rst); TCG only.
	[ -n "${SMC_VM_ICOUNT:-}" ] && [ -n "$accel" ] &&
		net="$net -icount shift=$SMC_VM_ICOUNT,align=off,sleep=off"
	[ -n "${net// /}" ] && args+=("--qemu-opts=$net")
	# vng refuses to run without a terminal-less stdin in some versions.
	PATH=$(kernel_path) timeout "$timeout_s" vng "${args[@]}" </dev/null >"$out/vm$n.log" 2>&1 &
	vm_pid=$!
}

finish() {
	local n=$1 pid=$2 rc=0
	wait "$pid" || true
	[ -f "$out/vm$n.rc" ] && rc=$(cat "$out/vm$n.rc") || rc=124
	if [ ! -f "$out/vm$n.rc" ]; then
		log "VM $n did not finish its command (timeout or crash); see $out/vm$n.log"
	fi
	if ! "$here/splat-check.sh" "$out/vm$n.log" "$out/vm$n.dmesg" "$out/vm$n.kmemleak"; then
		log "VM $n printed a kernel splat; see $out/vm$n.log"
		[ "$rc" -ne 0 ] || rc=1
	fi
	return "$rc"
}

case "$mode" in
single)
	log "booting VM 1 (module: ${2:-smc_rs})"
	start_vm 1 "${2:-smc_rs}" "$3" "" 2
	finish 1 "$vm_pid"
	;;
pair)
	# Each link is a frame relay with a socket for each VM's QEMU (see
	# selftests/tools/frame_relay.c): neither QEMU has the blocking end.
	relay=$top/selftests/tools/frame_relay
	[ -x "$relay" ] || make -C "$top/selftests" --no-print-directory tools/frame_relay >/dev/null ||
		die "cannot build $relay"
	rm -f "$out"/link*.sock
	"$relay" "$out/link-vm1.sock" "$out/link-vm2.sock" 2>"$out/relay0.log" &
	relay0_pid=$!
	"$relay" "$out/link2-vm1.sock" "$out/link2-vm2.sock" 2>"$out/relay1.log" &
	relay1_pid=$!
	for _ in $(seq 100); do
		[ -S "$out/link-vm2.sock" ] && [ -S "$out/link2-vm2.sock" ] && break
		sleep 0.1
	done
	mac1=52:54:00:5c:00:01
	mac2=52:54:00:5c:00:02
	# The second link's NICs: 52:54:00:5c:01:0N.
	nic2="-device virtio-net-pci,netdev=l1,mac=52:54:00:5c:01:0"
	log "booting VM 1 (module: ${2:-smc_rs}) and VM 2 (module: ${4:-smc_rs})"
	start_vm 1 "${2:-smc_rs}" "$3" \
		"-monitor unix:$out/mon-vm1.sock,server=on,wait=off -netdev stream,id=l0,server=off,addr.type=unix,addr.path=$out/link-vm1.sock -device virtio-net-pci,netdev=l0,mac=$mac1 -netdev stream,id=l1,server=off,addr.type=unix,addr.path=$out/link2-vm1.sock ${nic2}1"
	pid1=$vm_pid
	start_vm 2 "${4:-smc_rs}" "$5" \
		"-monitor unix:$out/mon-vm2.sock,server=on,wait=off -netdev stream,id=l0,server=off,addr.type=unix,addr.path=$out/link-vm2.sock -device virtio-net-pci,netdev=l0,mac=$mac2 -netdev stream,id=l1,server=off,addr.type=unix,addr.path=$out/link2-vm2.sock ${nic2}2"
	pid2=$vm_pid
	python3 "$here/link-ctl.py" "$out" &
	linkctl_pid=$!
	trap 'touch "$out/linkctl.stop"; kill "$decoder_pid" "$relay0_pid" "$relay1_pid" 2>/dev/null; wait "$linkctl_pid" 2>/dev/null' EXIT
	touch "$out/linkctl.on"
	rc1=0; rc2=0
	finish 1 "$pid1" || rc1=$?
	finish 2 "$pid2" || rc2=$?
	[ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ]
	;;
*)
	die "unknown mode $mode"
	;;
esac
