#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What a connection that cannot use SMC pays for trying: COUNT sequential
# connections (connect, one byte each way, close) between VMs without RDMA
# devices, over plain TCP and over AF_SMC with upstream smc.ko and with
# smc_rs, in alternating rounds within one boot (the order rotates) (both VMs load the same
# module for each run). VM 1 serves, VM 2 drives; RESULT lines of smc_bench
# (metric cps1, with contender=LABEL in front) go to
# $SMC_OUT/fallback-results.txt, one per run; fallback_summary.py's table
# (medians, and per-round ratios to TCP) to $SMC_OUT/fallback-summary.txt.
#
#   SMC_VM_RXE=0 make vm-pair MOD1=none MOD2=none \
#       SERVER='bash selftests/bench/fallback-vm.sh' CLIENT='bash selftests/bench/fallback-vm.sh'
#
# Settings (environment variables in the VM command, e.g.
# SERVER='FB_ROUNDS=3 bash selftests/bench/fallback-vm.sh', the same for both VMs):
#   FB_CONTENDERS  "tcp upstream smc_rs"; LABEL=PATH is an smc_rs module
#                  at PATH (an older build, say) labelled LABEL
#   FB_ROUNDS 5   FB_COUNT 300   FB_PORT 7500
#   FB_PROFILE=1  each VM records its first round of every contender with
#                 `perf record -a` (cpu-clock) into
#                 $SMC_OUT/fallback-perf-CONTENDER-vmN.txt (those rounds'
#                 figures are then not comparable)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${SMC_OUT:?run inside the VM bed (make vm-pair)}"
: "${SMC_VM:?}"
read -r -a contenders <<<"${FB_CONTENDERS:-tcp upstream smc_rs}"
rounds=${FB_ROUNDS:-5}
count=${FB_COUNT:-300}
base_port=${FB_PORT:-7500}
server=10.10.0.1
bin=$here/smc_bench

# family LABEL: the socket family of a contender.
family() {
	case "$1" in tcp) echo tcp ;; *) echo smc ;; esac
}

load() {
	case "$1" in
	tcp) ;;
	upstream) modprobe smc && "$top/selftests/tools/smc_ueid" add SMC-RS-TESTBED ;;
	smc_rs) insmod "${SMC_KO:-$top/smc_rs.ko}" ;;
	*=*) insmod "${1#*=}" ;;
	esac
}

# unload: whichever SMC module is loaded; closed sockets may hold it for
# a moment.
unload() {
	local m
	for m in smc smc_rs; do
		lsmod | grep -q "^$m " || continue
		for _ in $(seq 100); do
			rmmod "$m" 2>/dev/null && break
			sleep 0.1
		done
	done
	! lsmod | grep -Eq '^smc(_rs)? '
}

sysctl -qw net.ipv4.ip_local_port_range="1024 65000" net.ipv4.tcp_tw_reuse=1
run=0
nc=${#contenders[@]}
for r in $(seq "$rounds"); do
	# Each round starts with the next contender: none is always first.
	for k in $(seq 0 $((nc - 1))); do
		c=${contenders[$(((r - 1 + k) % nc))]}
		port=$((base_port + 2 * run))
		run=$((run + 1))
		fam=$(family "$c")
		prof=()
		if [ "${FB_PROFILE:-0}" = 1 ] && [ "$r" = 1 ]; then
			echo -1 >/proc/sys/kernel/perf_event_paranoid
			echo 0 >/proc/sys/kernel/kptr_restrict
			prof=(perf record -a -e cpu-clock -F 1000 -o "/tmp/fb-$c.data" --)
		fi
		load "$c" || { echo "round $r $c: load failed" >>"$SMC_OUT/fallback-notes-vm$SMC_VM.txt"; continue; }
		if [ "$SMC_VM" = 1 ]; then
			"${prof[@]}" timeout 600 "$bin" server -f "$fam" -p "$port" -T 590 \
				>>"$SMC_OUT/fallback-server.txt" 2>&1
		else
			"${prof[@]}" timeout 600 "$bin" client -f "$fam" -a "$server" -p "$port" -w cps -t 1 \
				-n "$count" -s 500 -W 120 -r "$r" 2>>"$SMC_OUT/fallback-client-stderr.txt" |
				sed "s/^RESULT /RESULT contender=${c%%=*} /" >>"$SMC_OUT/fallback-results.txt"
			"$bin" client -f tcp -a "$server" -p "$port" -w ctl -l quit -W 60 -T 90
		fi
		if [ ${#prof[@]} -gt 0 ]; then
			perf report -i "/tmp/fb-$c.data" --stdio --no-children --sort dso,sym \
				--percent-limit 0.3 2>&1 | grep -v '^$' \
				>"$SMC_OUT/fallback-perf-${c%%=*}-vm$SMC_VM.txt"
		fi
		unload || echo "round $r $c: unload failed" >>"$SMC_OUT/fallback-notes-vm$SMC_VM.txt"
	done
done
if [ "$SMC_VM" = 2 ] && [ -s "$SMC_OUT/fallback-results.txt" ]; then
	python3 "$here/fallback_summary.py" "$SMC_OUT/fallback-results.txt" |
		tee "$SMC_OUT/fallback-summary.txt"
fi
exit 0
