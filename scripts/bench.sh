#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: the same socket workloads against plain TCP, upstream smc.ko
# and smc_rs, each in a freshly booted VM pair, plus the raw rxe RDMA WRITE
# ceiling between the same VMs; then a text report, a chart and JSON. A
# benchmark, not a test: it reports what it measured (and what failed), and
# exits 0 whenever it could write the report. Documentation/benchmarks.rst
# describes the workloads, the figures and the knobs:
#
#   BENCH_CONTENDERS="tcp upstream smc_rs"  BENCH_ROUNDS=1  BENCH_REPS=3
#   BENCH_SECS=4  BENCH_STREAMS=4  BENCH_PP_COUNT=2000  BENCH_CPS_THREADS=4
#   BENCH_IDLE_CONNS=200  BENCH_SETTLE=2  BENCH_CEILING=1  BENCH_RDMA_ITERS=2000
#   BENCH_PORT=7400  BENCH_REDIS_N=10000  BENCH_OUT=bench-results/<date>
#   BENCH_PROFILE="pingpong cps1" (perf profiles of those workloads; slows them)
#   BENCH_CPU=1 (0: no CPU pass, the CPU per operation rows stay empty)
#   BENCH_ANCHORS=1 (0: no qperf and sockperf rows)
#   BENCH_LOOPBACK=1 (0: no loopback boot: TCP over lo against SMC-D through
#   upstream's loopback-ism and smc_rs's loopback device, in one VM)
#   BENCH_KERNEL=release (the test kernel without its debug checkers,
#   scripts/release.config, built once and cached beside it, with an
#   smc_rs.ko of its own; test: the debug kernel the tests run, its
#   checkers that boot options can turn off turned off)
#   BENCH_DEBUG=0 (1: the debug kernel with its run-time checkers on)
#   BENCH_ICOUNT=1 (the loopback VM's clock counts instructions, 2 ns each,
#   and skips idle time: its figures measure the work done, the same from
#   run to run; empty: the host's clock, as the pair's boots)
#
# Every guest command only talks between 10.10.0.1 and 10.10.0.2, over the
# VMs' private link (scripts/vm.sh); nothing here touches the network.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"

contenders=${BENCH_CONTENDERS:-tcp upstream smc_rs}
rounds=${BENCH_ROUNDS:-1}
reps=${BENCH_REPS:-3}
secs=${BENCH_SECS:-4}
streams=${BENCH_STREAMS:-4}
pp_count=${BENCH_PP_COUNT:-2000}
cps_threads=${BENCH_CPS_THREADS:-4}
idle_conns=${BENCH_IDLE_CONNS:-200}
settle=${BENCH_SETTLE:-2}
ceiling=${BENCH_CEILING:-1}
rdma_iters=${BENCH_RDMA_ITERS:-2000}
port=${BENCH_PORT:-7400}
redis_n=${BENCH_REDIS_N:-10000}
profile=${BENCH_PROFILE:-}
cpu=${BENCH_CPU:-1}
anchors=${BENCH_ANCHORS:-1}
# The test kernel is a debug kernel. Its checkers would charge every lock
# and allocation several times over and so favour whoever locks and
# allocates least; boot options turn some off (kmemleak, lockdep's proofs,
# debugobjects), but lockdep still tracks every lock taken. A benchmark
# runs on the release flavour of the same kernel, as production kernels
# run; BENCH_KERNEL=test keeps the debug kernel with what can be turned off
# turned off, BENCH_DEBUG=1 the debug kernel as the tests run it.
debug=${BENCH_DEBUG:-0}
kernel=${BENCH_KERNEL:-release}
[ "$debug" = 0 ] || kernel=test
case "$kernel" in
release) export SMC_KERNEL_FLAVOUR=release boot_opts= ;;
test)
	unset SMC_KERNEL_FLAVOUR
	boot_opts="kmemleak=off lockdep.prove_locking=0 no_debug_objects"
	[ "$debug" = 0 ] || boot_opts= ;;
*) die "bench: BENCH_KERNEL is release or test (got '$kernel')" ;;
esac
export SMC_VM_APPEND=$boot_opts
stamp=$(date +%Y-%m-%d-%H%M%S)
out=${BENCH_OUT:-$top/bench-results/$stamp}

bench() { printf '[bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

for v in BENCH_ROUNDS:rounds BENCH_REPS:reps BENCH_SECS:secs BENCH_STREAMS:streams \
	BENCH_PP_COUNT:pp_count BENCH_CPS_THREADS:cps_threads BENCH_IDLE_CONNS:idle_conns \
	BENCH_SETTLE:settle BENCH_RDMA_ITERS:rdma_iters BENCH_PORT:port; do
	name=${v#*:}
	val=${!name}
	[[ $val =~ ^[0-9]+$ ]] && [ "$((10#$val))" -gt 0 ] ||
		die "bench: ${v%%:*} must be a positive integer (got '$val')"
	printf -v "$name" '%d' "$((10#$val))"
done
[[ $redis_n =~ ^[0-9]+$ ]] || die "bench: BENCH_REDIS_N is a number of requests (0: no Redis workload)"
[ "$port" -lt 65000 ] || die "bench: BENCH_PORT must be below 65000 (it uses PORT and PORT+1)"
[ "$ceiling" = 0 ] || [ "$ceiling" = 1 ] || die "bench: BENCH_CEILING is 0 or 1"
[ "$cpu" = 0 ] || [ "$cpu" = 1 ] || die "bench: BENCH_CPU is 0 or 1"
[ "$anchors" = 0 ] || [ "$anchors" = 1 ] || die "bench: BENCH_ANCHORS is 0 or 1"
for w in $profile; do
	case "$w" in bulk1 | pingpong | cps1 | redis) ;;
	*) die "bench: BENCH_PROFILE lists workloads to profile (bulk1 pingpong cps1 redis), not '$w'" ;;
	esac
done
[ -z "$profile" ] && [ "$cpu" != 1 ] || command -v perf >/dev/null || die "bench: BENCH_PROFILE and BENCH_CPU need perf (Debian linux-perf)"
[ "$settle" -le 60 ] || die "bench: BENCH_SETTLE is in seconds (at most 60)"
[ "$streams" -gt 1 ] || die "bench: BENCH_STREAMS is the multi-stream run (at least 2)"
[ "$cps_threads" -gt 1 ] || die "bench: BENCH_CPS_THREADS is the threaded run (at least 2)"
read -r -a clist <<<"$contenders"
[ ${#clist[@]} -gt 0 ] || die "bench: BENCH_CONTENDERS is empty"
declare -A listed=()
for c in "${clist[@]}"; do
	case "$c" in tcp | upstream | smc_rs) ;; *) die "bench: unknown contender '$c' (tcp, upstream, smc_rs)" ;; esac
	[ -z "${listed[$c]:-}" ] || die "bench: contender '$c' listed twice (use BENCH_ROUNDS)"
	listed[$c]=1
done

# contender -> module for vm.sh, socket family for smc_bench
mod_of() { case "$1" in tcp) echo none ;; *) echo "$1" ;; esac; }
family_of() { case "$1" in tcp) echo tcp ;; *) echo smc ;; esac; }

# Time per boot, roughly, under TCG: boot and shutdown, the idle set (a few
# connections per second at worst), per repetition five workloads of $secs
# plus counters and drains, the ceiling. The server's budget and the VM
# time limit are generous multiples of it.
estimate=$((90 + 60 + idle_conns / 5 + 2 * settle + reps * (5 * secs + 40)))
[ "$ceiling" = 1 ] && ceiling_est=$((reps * (2 * secs + 40))) || ceiling_est=0
budget=$((2 * (estimate + ceiling_est) + 300))
export SMC_VM_TIMEOUT=${SMC_VM_TIMEOUT:-$((budget + 180))}
boots=$((rounds * ${#clist[@]}))
bench "${#clist[@]} contender(s) x $rounds round(s) = $boots VM-pair boot(s), about $(((boots * estimate + rounds * ceiling_est) / 60)) min"

# Build what the guests run: the module, the test tools (smc_ueid for the
# upstream UEID), smc_bench, and the operator tools (smcss, smcr) that prove
# the mode. The tools are optional: without them only rxe counters do.
[ -n "$("$here/build-kernel.sh" --if-built)" ] ||
	bench "building the $kernel kernel first (once; about 12 minutes)"
kdir=$("$here/build-kernel.sh")
bench "building smc_rs.ko, the test programs and smc_bench"
if [ "$kernel" = release ]; then
	# Kbuild writes a module's objects beside its sources: the release
	# kernel's smc_rs.ko is built in a copy of them, so that the tests'
	# module in the repository stays the one built for the test kernel.
	mdir=$kdir.smc_rs
	rm -rf "$mdir"
	mkdir -p "$mdir/wire"
	cp -a "$top/Kbuild" "$top/include" "$top/rust" "$mdir/"
	cp -a "$top/wire/src" "$mdir/wire/"
	# The sources only: what the test kernel's build left beside them
	# (its bindings above all) is not this kernel's.
	find "$mdir" \( -name '*.o' -o -name '*.cmd' -o -name '*.d' -o -name '*.rmeta' \
		-o -name bindings_generated.rs \) -delete
	PATH=$(kernel_path) make -C "$kdir" M="$mdir" modules >"$mdir.log" 2>&1 ||
		die "bench: smc_rs.ko did not build for $kdir (see $mdir.log)"
	export SMC_VM_KO=$mdir/smc_rs.ko
else
	make -C "$top" --no-print-directory modules KDIR="$kdir" >/dev/null
fi
make -C "$top/selftests" --no-print-directory >/dev/null
make -C "$top/selftests/bench" --no-print-directory >/dev/null
if ! make -C "$top" --no-print-directory tools >/dev/null 2>&1; then
	bench "warning: the operator tools did not build: no smcss/smcr mode evidence, rxe counters only"
fi

mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
# bench-results/ ignores itself (the repository's .gitignore stays as it is).
if [ -z "${BENCH_OUT:-}" ]; then
	[ -f "$top/bench-results/.gitignore" ] || echo '*' >"$top/bench-results/.gitignore"
	ln -sfn "$stamp" "$top/bench-results/latest"
fi
{
	echo "date=$(date -Iseconds)"
	echo "commit=$(git -C "$top" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
	if [ -n "$(git -C "$top" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
		echo "dirty=1"
	else
		echo "dirty=0"
	fi
	echo "kernel=$(basename "$kdir")"
	echo "host_cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "host_cpus=$(nproc)"
	echo "accel=$([ "${SMC_VM_KVM:-0}" = 1 ] && echo kvm || echo tcg)"
	echo "kernel_flavour=$kernel"
	echo "debug_checkers=$([ "$debug" = 1 ] && echo on || echo off)"
	echo "boot_opts=$boot_opts"
	echo "contenders=${clist[*]}"
	echo "rounds=$rounds"
	echo "reps=$reps"
	echo "secs=$secs"
	echo "streams=$streams"
	echo "pp_count=$pp_count"
	echo "redis_n=$redis_n"
	echo "profile=$profile"
	echo "cpu=$cpu"
	echo "cps_threads=$cps_threads"
	echo "idle_conns=$idle_conns"
	echo "settle=$settle"
	echo "ceiling=$ceiling"
	echo "rdma_iters=$rdma_iters"
	echo "port=$port"
} >"$out/meta.txt"

# show_progress DIR PREFIX: prints the guest's new progress lines.
seen=0
show_progress() {
	local f=$1/progress n
	[ -f "$f" ] || return 0
	n=$(wc -l <"$f")
	if [ "$n" -gt "$seen" ]; then
		sed -n "$((seen + 1)),${n}p" "$f" | while IFS= read -r line; do bench "$2: $line"; done
		seen=$n
	fi
}

start=$(date +%s)
boot=0
for round in $(seq "$rounds"); do
	# Each round starts with the next contender: drift over the run spreads
	# over all of them.
	order=()
	for i in "${!clist[@]}"; do
		order+=("${clist[$(((i + round - 1) % ${#clist[@]}))]}")
	done
	for i in "${!order[@]}"; do
		c=${order[$i]}
		boot=$((boot + 1))
		mod=$(mod_of "$c")
		ceil=0
		[ "$ceiling" = 1 ] && [ "$i" = 0 ] && ceil=1
		dir=$out/raw/r$round-$c
		mkdir -p "$dir"
		# The guests write outside the repository, which they see read-only;
		# their files are copied into the results afterwards.
		vmdir=$(mktemp -d /tmp/smc_rs-bench.XXXXXX)
		prefix="contender $((i + 1))/${#order[@]} $c"
		[ "$rounds" -gt 1 ] && prefix="round $round/$rounds, $prefix"
		settings="BENCH_CONTENDER=$c BENCH_FAMILY=$(family_of "$c") BENCH_REPS=$reps"
		settings+=" BENCH_SECS=$secs BENCH_STREAMS=$streams BENCH_PP_COUNT=$pp_count"
		settings+=" BENCH_CPS_THREADS=$cps_threads BENCH_IDLE_CONNS=$idle_conns"
		settings+=" BENCH_SETTLE=$settle BENCH_CEILING=$ceil BENCH_RDMA_ITERS=$rdma_iters"
		settings+=" BENCH_PORT=$port BENCH_BUDGET=$budget BENCH_REDIS_N=$redis_n BENCH_PROFILE='$profile' BENCH_CPU=$cpu"
		settings+=" BENCH_ANCHORS=$anchors"
		bench "$prefix: booting the VM pair (module: $mod on both)"
		t0=$(date +%s)
		seen=0
		rc=0
		SMC_VM_OUT=$vmdir "$here/vm.sh" pair \
			"$mod" "$settings bash $top/selftests/bench/bench-vm.sh server" \
			"$mod" "$settings bash $top/selftests/bench/bench-vm.sh client" \
			>"$dir/vm.out" 2>&1 &
		pid=$!
		while kill -0 "$pid" 2>/dev/null; do
			show_progress "$vmdir" "$prefix"
			sleep 2
		done
		wait "$pid" || rc=$?
		show_progress "$vmdir" "$prefix"
		cp -a "$vmdir/." "$dir/" && rm -rf "$vmdir"
		splat=0
		for n in 1 2; do
			"$here/splat-check.sh" "$dir/vm$n.log" "$dir/vm$n.dmesg" >/dev/null 2>&1 || splat=1
		done
		{
			echo "seq=$boot"
			echo "contender=$c"
			echo "round=$round"
			echo "module=$mod"
			echo "ceiling=$ceil"
			echo "rc=$rc"
			echo "splat=$splat"
			echo "vm1_rc=$(cat "$dir/vm1.rc" 2>/dev/null || echo none)"
			echo "vm2_rc=$(cat "$dir/vm2.rc" 2>/dev/null || echo none)"
			echo "secs=$(($(date +%s) - t0))"
		} >"$dir/boot.txt"
		if [ "$rc" -ne 0 ]; then
			bench "$prefix: the VM run failed (status $rc$([ "$splat" = 1 ] && echo ', kernel splat')); logs in $dir"
		fi
		bench "$prefix: done in $(($(date +%s) - t0)) s"
	done
done

# The loopback boot: one VM, both ends on it, every contender in turn.
if [ "${BENCH_LOOPBACK:-1}" = 1 ]; then
	dir=$out/raw/loopback
	mkdir -p "$dir"
	vmdir=$(mktemp -d /tmp/smc_rs-bench.XXXXXX)
	bench "loopback: booting one VM (TCP over lo, upstream and smc_rs SMC-D)"
	t0=$(date +%s)
	SMC_VM_ICOUNT=${BENCH_ICOUNT-1} SMC_VM_OUT=$vmdir SMC_VM_TIMEOUT=$budget "$here/vm.sh" single smc_rs \
		"BENCH_REPS=$reps BENCH_SECS=$secs BENCH_STREAMS=$streams BENCH_PP_COUNT=$pp_count BENCH_REDIS_N=$redis_n BENCH_PORT=$port BENCH_PROFILE='$profile' bash $top/selftests/bench/loopback-vm.sh" \
		>"$dir/vm.out" 2>&1 || bench "loopback: the VM run failed; logs in $dir"
	cp -a "$vmdir/." "$dir/" && rm -rf "$vmdir"
	bench "loopback: done in $(($(date +%s) - t0)) s"
fi

bench "all boots done in $((($(date +%s) - start) / 60)) min; writing the report"
python3 "$top/selftests/bench/bench_report.py" "$out"
if [ -f "$out/raw/loopback/loopback-results.txt" ]; then
	python3 "$top/selftests/bench/loopback_report.py" "$out/raw/loopback/loopback-results.txt" \
		"$out/loopback.json" >"$out/loopback.txt"
	cat "$out/loopback.txt" >>"$out/report.txt"
fi
echo
cat "$out/report.txt"
echo
echo "report: $out/report.txt"
echo "json:   $out/results.json"
if [ -f "$out/chart.png" ]; then echo "chart:  $out/chart.png"; else echo "chart:  not drawn (gnuplot missing?)"; fi
echo "raw:    $out/raw/"
