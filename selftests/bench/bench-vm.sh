#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark inside the VM pair (scripts/bench.sh boots it; see
# Documentation/benchmarks.rst). VM 1 serves, VM 2 drives the workloads and
# records; all traffic is between 10.10.0.1 and 10.10.0.2 on the VMs' link.
#
#   bench-vm.sh server          VM 1: smc_bench server until VM 2 says quit
#   bench-vm.sh client          VM 2: every workload, then quit
#   bench-vm.sh ctl REQUEST...  VM 1: a control request (run by smc_bench server)
#   bench-vm.sh probe LABEL     VM 2: smc_diag rows of the open connections
#   bench-vm.sh held LABEL      VM 2: memory snapshots while idle connections are held
#
# Settings (environment, set by scripts/bench.sh): BENCH_CONTENDER,
# BENCH_FAMILY (tcp|smc), BENCH_REPS, BENCH_SECS, BENCH_PP_COUNT,
# BENCH_CPS_THREADS, BENCH_STREAMS, BENCH_IDLE_CONNS, BENCH_SETTLE,
# BENCH_CEILING (1: ib_write_bw/ib_write_lat in this boot), BENCH_RDMA_ITERS,
# BENCH_PORT, BENCH_BUDGET (seconds the server waits at most),
# BENCH_REDIS_N (requests per redis-benchmark test; 0: no Redis workload),
# BENCH_PROFILE (workloads whose first repetition runs under a system-wide
# `perf record` on both VMs; their figures are then not comparable),
# BENCH_CPU (1: the CPU pass after the repetitions, see cpu_pass).
# BENCH_DRYRUN=1 is for checking this script on a host over loopback (both
# roles on 127.0.0.1, no sysctl changes, no cache drops); make bench never
# sets it.
#
# Everything lands in $SMC_OUT (the host's raw folder for this boot):
#   results.txt           RESULT lines of smc_bench (VM 2)
#   ctr-LABEL-{before,after}-vmN.txt  counters around each workload: rxe
#                         hw_counters, eth0 bytes, smcr stats (SMC contenders)
#   smcss-LABEL-vmN.txt   smcss -a -d while the workload's connections are open
#   mem-vmN-LABEL.txt     /proc/meminfo, /proc/slabinfo, smcss -a -d
#   perftest-*-vmN.txt    ib_write_bw / ib_write_lat output
#   perf-LABEL-vmN.txt    `perf report` of a profiled workload (BENCH_PROFILE)
#   cpu-LABEL-vmN.txt     the CPU pass's split of LABEL's samples (cpu_split.py)
#   cpu-results.txt       the CPU pass's RESULT lines, cpu-redis-vm2.csv its Redis
#   progress              one line per step (the host prints them)
# The host (selftests/bench/bench_report.py) computes every figure from them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${SMC_OUT:?run inside the VM bed (make bench)}"
: "${SMC_VM:?}"

contender=${BENCH_CONTENDER:-tcp}
family=${BENCH_FAMILY:-tcp}
reps=${BENCH_REPS:-3}
secs=${BENCH_SECS:-5}
pp_count=${BENCH_PP_COUNT:-2000}
cps_threads=${BENCH_CPS_THREADS:-4}
streams=${BENCH_STREAMS:-4}
idle_conns=${BENCH_IDLE_CONNS:-200}
settle=${BENCH_SETTLE:-2}
ceiling=${BENCH_CEILING:-0}
rdma_iters=${BENCH_RDMA_ITERS:-2000}
port=${BENCH_PORT:-7400}
budget=${BENCH_BUDGET:-1200}
redis_n=${BENCH_REDIS_N:-10000}
profile=${BENCH_PROFILE:-}
cpu=${BENCH_CPU:-1}
redis_port=$((port + 10))
anchors=${BENCH_ANCHORS:-1}
anchors_port=$((port + 20))
dryrun=${BENCH_DRYRUN:-0}
server_addr=10.10.0.1
[ "$dryrun" = 1 ] && server_addr=127.0.0.1
bin=$here/smc_bench
smcss=$top/tools/target/release/smcss
smcr=$top/tools/target/release/smcr
perftest_port=18515
smc_run=$top/tools/target/release/smc_run
self="bash $here/bench-vm.sh"

note() { printf '%s\n' "$*" >>"$SMC_OUT/notes-vm$SMC_VM.txt"; }
progress() { printf '%s\n' "$*" >>"$SMC_OUT/progress"; }

smc_contender() { [ "$family" != tcp ]; }

# ctl REQUEST: a control request to VM 1 (over AF_INET, port+1).
ctl() {
	"$bin" client -f tcp -a "$server_addr" -p "$port" -w ctl -l "$*" -W 30 -T 330
}

# The index of rxe0's RoCEv2 GID for the VM's IPv4 address (perftest's -x):
# from gid_attrs/types, the entry whose GID is ::ffff:10.10.0.N, else the
# first RoCE v2 entry.
gid_index() {
	local dir=/sys/class/infiniband/rxe0/ports/1 f i t g first=
	for f in "$dir"/gid_attrs/types/*; do
		i=${f##*/}
		t=$(cat "$f" 2>/dev/null) || continue
		case "$t" in *[Vv]2*) ;; *) continue ;; esac
		g=$(cat "$dir/gids/$i" 2>/dev/null) || continue
		[ -n "$first" ] || first=$i
		case "$g" in *ffff:0a0a:000$SMC_VM) echo "$i"; return 0 ;; esac
	done
	[ -n "$first" ] && echo "$first"
}

# counters FILE: rxe hw counters, eth0 bytes and (SMC contenders) the SMC
# statistics of `smcr -a stats`, as key=value lines.
counters() {
	local f
	{
		for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
			[ "${f##*/}" = lifespan ] && continue
			[ -r "$f" ] && printf 'rxe_%s=%s\n' "${f##*/}" "$(cat "$f")"
		done
		printf 'eth_tx_bytes=%s\neth_rx_bytes=%s\n' \
			"$(cat /sys/class/net/eth0/statistics/tx_bytes)" \
			"$(cat /sys/class/net/eth0/statistics/rx_bytes)"
		if smc_contender && [ -x "$smcr" ]; then
			"$smcr" -a stats 2>/dev/null | awk '
				/^  SMC connections/ { print "smc_conns=" $3 }
				/^  Handshake errors/ { print "smc_hs_errors=" $3 }
				/^  TCP fallback/ { print "smc_fallbacks=" $3 }
				/^  Data transmitted \(Bytes\)/ { n++; print (n == 1 ? "smc_rx_bytes=" : "smc_tx_bytes=") $4 }'
		fi
	} >"$1" 2>/dev/null
}

# as_contender PROGRAM ARGS...: runs an unmodified program as the contender
# has it: under smc_run for the SMC contenders, as it is for TCP.
as_contender() {
	if smc_contender; then
		"$smc_run" "$@"
	else
		"$@"
	fi
}

# redis_server start|stop: Redis on VM 1 (ctl request), started as the
# contender has it, answering on $server_addr:$redis_port.
redis_server() {
	local pidfile=/tmp/bench-redis.pid
	case "$1" in
	start)
		command -v redis-server >/dev/null || { note "no redis-server"; return 1; }
		as_contender setsid redis-server --port "$redis_port" --bind "$server_addr" \
			--protected-mode no --save "" --appendonly no --dir /tmp \
			--pidfile "$pidfile" --daemonize yes \
			--logfile "$SMC_OUT/redis-server-vm$SMC_VM.txt" </dev/null >/dev/null 2>&1
		for _ in $(seq 100); do
			[ "$(redis-cli -h "$server_addr" -p "$redis_port" ping 2>/dev/null)" = PONG ] && return 0
			sleep 0.1
		done
		note "redis-server did not answer"
		return 1
		;;
	stop)
		[ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
		rm -f "$pidfile"
		sleep 1
		;;
	esac
}

# anchors_server start|stop: the anchors' servers on VM 1 (ctl request),
# started as the contender has them: qperf's (control and data on
# $anchors_port and the ports it picks) and sockperf's (TCP on
# $anchors_port + 1).
anchors_server() {
	local pids=/tmp/bench-anchors.pids
	case "$1" in
	start)
		command -v qperf >/dev/null && command -v sockperf >/dev/null ||
			{ note "no qperf or sockperf"; return 1; }
		as_contender setsid qperf -lp "$anchors_port" </dev/null \
			>"$SMC_OUT/qperf-server-vm$SMC_VM.txt" 2>&1 &
		echo $! >"$pids"
		as_contender setsid sockperf server -i "$server_addr" -p $((anchors_port + 1)) --tcp \
			</dev/null >"$SMC_OUT/sockperf-server-vm$SMC_VM.txt" 2>&1 &
		echo $! >>"$pids"
		for _ in $(seq 200); do
			ss -Hltn "sport = :$anchors_port" 2>/dev/null | grep -q . &&
				ss -Hltn "sport = :$((anchors_port + 1))" 2>/dev/null | grep -q . && return 0
			sleep 0.1
		done
		note "qperf or sockperf server did not listen"
		return 1
		;;
	stop)
		[ -s "$pids" ] && xargs -r kill <"$pids" 2>/dev/null
		rm -f "$pids"
		sleep 1
		;;
	esac
}

# qperf_value FILE TEST: what qperf printed for TEST (tcp_bw in MB/s,
# tcp_lat in us), from its "bw  =  440 KB/sec" or "latency  =  1.1 ms".
qperf_value() {
	awk -v T="$2:" '
		$1 == T { on = 1; next }
		on && ($1 == "bw" || $1 == "latency") {
			v = $3; u = $4
			if (u ~ /^GB/) v *= 1000; else if (u ~ /^KB/) v /= 1000; else if (u ~ /^B\//) v /= 1000000
			if (u == "ms") v *= 1000; else if (u == "sec") v *= 1000000; else if (u == "ns") v /= 1000
			print v; exit
		}' "$1"
}

# result METRIC REP RC VALUE UNIT: the RESULT line of a program's figure:
# failed when it exited with RC other than 0 or printed none.
result() {
	if [ "$3" = 0 ] && [ -n "$4" ]; then
		echo "RESULT metric=$1 rep=$2 status=ok value=$4 unit=$5 family=$family"
	else
		echo "RESULT metric=$1 rep=$2 status=failed family=$family error=exit-$3"
	fi >>"$SMC_OUT/results.txt"
}

# anchors_workload REP: the tools the SMC work upstream was measured with,
# each program as the contender runs it: qperf tcp_bw and tcp_lat with
# 1-byte and 64 KiB messages, sockperf's TCP ping-pong (14-byte messages);
# RESULT lines metric=qperf_{bw,lat}_{1,64k} (MB/s, us) and
# metric=sockperf_{avg,p50} (us).
anchors_workload() {
	local r=$1 m name out rc v test metric unit
	progress "qperf tcp_bw/tcp_lat (1 B, 64 KiB), sockperf ping-pong, rep $r/$reps"
	if ! ctl "anchors start"; then
		for metric in qperf_bw_1 qperf_lat_1 qperf_bw_64k qperf_lat_64k sockperf_avg sockperf_p50; do
			echo "RESULT metric=$metric rep=$r status=failed family=$family error=no-server"
		done >>"$SMC_OUT/results.txt"
		return
	fi
	counters "$SMC_OUT/ctr-anchors-r$r-before-vm2.txt"
	for m in 1 65536; do
		name=1
		[ "$m" = 65536 ] && name=64k
		out=$SMC_OUT/qperf-$name-r$r-vm2.txt
		rc=0
		as_contender timeout $((2 * secs + 60)) qperf -lp "$anchors_port" -t "$secs" -m "$m" \
			"$server_addr" tcp_bw tcp_lat >"$out" 2>&1 </dev/null || rc=$?
		for test in tcp_bw tcp_lat; do
			metric=qperf_bw_$name unit=MB/s
			[ "$test" = tcp_lat ] && metric=qperf_lat_$name unit=us
			result "$metric" "$r" "$rc" "$(qperf_value "$out" "$test")" "$unit"
		done
	done
	out=$SMC_OUT/sockperf-r$r-vm2.txt
	rc=0
	as_contender timeout $((secs + 60)) sockperf ping-pong -i "$server_addr" -p $((anchors_port + 1)) \
		--tcp -t "$secs" >"$out" 2>&1 </dev/null || rc=$?
	for metric in sockperf_avg sockperf_p50; do
		if [ "$metric" = sockperf_avg ]; then
			v=$(sed -n 's/.*Summary: Latency is \([0-9.]*\) usec.*/\1/p' "$out" | head -n 1)
		else
			v=$(awk '/percentile 50.000 =/ { print $NF; exit }' "$out")
		fi
		result "$metric" "$r" "$rc" "$v" us
	done
	counters "$SMC_OUT/ctr-anchors-r$r-after-vm2.txt"
	ctl "anchors stop"
}

# redis_workload REP: redis-benchmark SET and GET with 1 and 50 clients
# against the server's Redis, both programs as the contender runs them;
# RESULT lines metric=redis_{set,get}_c{1,50} in requests/s.
redis_workload() {
	local r=$1 c csv rc label=redis-r$1 t rps
	progress "redis-benchmark SET/GET, 1 and 50 clients, rep $r/$reps"
	if ! ctl "redis start"; then
		for c in 1 50; do
			for t in set get; do
				echo "RESULT metric=redis_${t}_c$c rep=$r status=failed family=$family error=no-server" \
					>>"$SMC_OUT/results.txt"
			done
		done
		return
	fi
	counters "$SMC_OUT/ctr-$label-before-vm2.txt"
	if profiled redis "$r"; then
		ctl "perf start redis"
		perf_start redis
	fi
	for c in 1 50; do
		csv=$SMC_OUT/redis-c$c-r$r-vm2.csv
		rc=0
		as_contender timeout 600 redis-benchmark -h "$server_addr" -p "$redis_port" \
			-t set,get -n "$redis_n" -c "$c" --csv >"$csv" 2>>"$SMC_OUT/client-stderr.txt" &
		# The connections as smc_diag sees them, while they are open.
		[ "$c" = 50 ] && { sleep 1; $self probe "$label"; }
		wait $! || rc=$?
		for t in set get; do
			rps=$(awk -F'"' -v T="${t^^}" '$2 == T { print $4; exit }' "$csv")
			result "redis_${t}_c$c" "$r" "$rc" "$rps" req/s
		done
	done
	if profiled redis "$r"; then
		perf_stop redis
		ctl "perf stop redis"
	fi
	counters "$SMC_OUT/ctr-$label-after-vm2.txt"
	ctl "redis stop"
}

smcss_dump() {
	if smc_contender && [ -x "$smcss" ]; then
		"$smcss" -a -d 2>&1
	else
		echo "(no smcss: contender $contender, family $family)"
	fi
}

# profiled LABEL REP: whether this workload's repetition runs under perf.
profiled() {
	[ "$2" = 1 ] && [ "$dryrun" != 1 ] && [[ " $profile " == *" $1 "* ]]
}

# perf_start LABEL / perf_stop LABEL: a system-wide CPU profile of this VM
# (cpu-clock samples: the emulated CPU has no PMU), written as a flat
# `perf report` by symbol while the module's symbols are still loaded.
# record_start NAME ARGS... / record_stop NAME: `perf record -a ARGS` of
# cpu-clock samples into /tmp/NAME.data; record_stop returns once perf
# wrote it (1 when no recording ran).
record_start() {
	local name=$1
	shift
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	echo 0 >/proc/sys/kernel/kptr_restrict
	perf record -a "$@" -e cpu-clock -F 1000 -o "/tmp/$name.data" >/dev/null 2>&1 </dev/null &
	echo $! >"/tmp/$name.pid"
}

record_stop() {
	local pid
	pid=$(cat "/tmp/$1.pid" 2>/dev/null) || return 1
	kill -INT "$pid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
}

perf_start() {
	record_start "perf-$1"
	sleep 2
}

perf_stop() {
	record_stop "perf-$1" || return 0
	{
		echo "== perf report: $contender, $1, VM $SMC_VM (cpu-clock, system-wide)"
		perf report -i "/tmp/perf-$1.data" --stdio --no-children --sort dso,sym \
			--percent-limit 0.3 2>&1 | grep -v '^$'
	} >"$SMC_OUT/perf-$1-vm$SMC_VM.txt"
	rm -f "/tmp/perf-$1.data" "/tmp/perf-$1.pid"
}

# cpu_start LABEL / cpu_stop LABEL: the CPU split of a workload on this VM
# (the CPU pass): a system-wide `perf record -g` of cpu-clock samples, one
# a millisecond of CPU time, sorted by cpu_split.py into idle, the RNIC's
# work, the SMC module's and the rest, as key=value lines in
# cpu-LABEL-vmN.txt.
cpu_start() {
	record_start "cpu-$1" -g
	sleep 1
}

cpu_stop() {
	record_stop "cpu-$1" || return 0
	cpu_split_out "$1"
}

# cpu_split_out LABEL: the split of a stopped recording into
# cpu-LABEL-vmN.txt (perf script under the emulator takes a while: both
# VMs stop recording first).
cpu_split_out() {
	local kind=tcp
	smc_contender && kind=smc
	[ -f "/tmp/cpu-$1.data" ] || return 0
	perf script -i "/tmp/cpu-$1.data" -F comm,ip,sym,dso 2>/dev/null |
		python3 "$here/cpu_split.py" "$kind" >"$SMC_OUT/cpu-$1-vm$SMC_VM.txt"
	rm -f "/tmp/cpu-$1.data" "/tmp/cpu-$1.pid"
}

# cpu_workload LABEL ARGS...: one run of a workload in the CPU pass, both
# VMs sampled; its RESULT lines (the operations it did) go to
# cpu-results.txt, apart from the figures of the repetitions.
cpu_workload() {
	local label=$1
	shift
	progress "CPU pass: $label under perf (both VMs)"
	ctl "cpu start $label"
	cpu_start "$label"
	if [ "$label" = redis ]; then
		as_contender timeout 600 redis-benchmark -h "$server_addr" -p "$redis_port" \
			-t set,get -n "$redis_n" -c 50 --csv >"$SMC_OUT/cpu-redis-vm2.csv" 2>>"$SMC_OUT/client-stderr.txt" ||
			note "CPU pass: redis-benchmark exited $?"
	else
		timeout $((4 * secs + 150)) "$bin" client -f "$family" -a "$server_addr" -p "$port" -r 1 \
			-s "$secs" -W 10 "$@" >>"$SMC_OUT/cpu-results.txt" 2>>"$SMC_OUT/client-stderr.txt" ||
			note "CPU pass: $label: smc_bench exited $?"
	fi
	record_stop "cpu-$label"
	ctl "cpu stop $label"
	cpu_split_out "$label"
}

# cpu_pass: the CPU each workload costs (Documentation/benchmarks.rst,
# "CPU per operation"): ping-pong exchanges, a bulk stream and Redis at 50
# clients, each once more with both VMs sampled (the repetitions' figures
# stay unperturbed).
cpu_pass() {
	cpu_workload pingpong -w pingpong -n "$pp_count"
	cpu_workload bulk1 -w bulk -t 1
	if [ "$redis_n" -gt 0 ] && ctl "redis start"; then
		cpu_workload redis
		ctl "redis stop"
	fi
}

# snap LABEL: memory snapshot of this VM, caches dropped first so that page
# cache and reclaimable slab churn stay out of the difference.
snap() {
	if [ "$dryrun" != 1 ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches
		sleep 1
	fi
	{
		echo "== meminfo"
		cat /proc/meminfo
		echo "== slabinfo"
		cat /proc/slabinfo
		echo "== smcss"
		smcss_dump
	} >"$SMC_OUT/mem-vm$SMC_VM-$1.txt" 2>&1
}

# perftest_server bw|lat REP: starts the perftest server in the background
# and returns once it listens.
perftest_server() {
	local kind=$1 r=$2 gid
	gid=$(gid_index)
	[ -n "$gid" ] || { note "no RoCE v2 GID on rxe0"; return 1; }
	echo "gid index $gid: $(cat /sys/class/infiniband/rxe0/ports/1/gids/"$gid")" \
		>"$SMC_OUT/perftest-$kind-r$r-vm1.txt"
	case "$kind" in
	bw) timeout $((secs + 90)) ib_write_bw -d rxe0 -i 1 -x "$gid" -F --report_gbits -D "$secs" \
		-p "$perftest_port" >>"$SMC_OUT/perftest-$kind-r$r-vm1.txt" 2>&1 </dev/null & ;;
	lat) timeout 150 ib_write_lat -d rxe0 -i 1 -x "$gid" -F -n "$rdma_iters" \
		-p "$perftest_port" >>"$SMC_OUT/perftest-$kind-r$r-vm1.txt" 2>&1 </dev/null & ;;
	*) return 2 ;;
	esac
	for _ in $(seq 100); do
		ss -Hltn "sport = :$perftest_port" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	note "perftest $kind server did not listen"
	return 1
}

common_setup() {
	# SMC-Rv2 needs a UEID on both sides; the bed gives upstream's module
	# one when it loads it, smc_rs gets the same one here.
	[ "$contender" = smc_rs ] && [ "$dryrun" != 1 ] &&
		"$top/selftests/tools/smc_ueid" add SMC-RS-TESTBED
	# Connection-rate runs leave thousands of TIME_WAIT sockets on VM 2.
	[ "$dryrun" = 1 ] ||
		sysctl -qw net.ipv4.ip_local_port_range="1024 65000" net.ipv4.tcp_tw_reuse=1
	ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
	{
		echo "contender=$contender family=$family vm=$SMC_VM kernel=$(uname -r)"
		echo "== modules"; lsmod | grep -E '^(smc|smc_rs|smc_diag) ' || echo "(none)"
		echo "== rdma link"; rdma link 2>&1
		echo "== gids"
		for f in /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/*; do
			t=$(cat "$f" 2>/dev/null) || continue
			echo "${f##*/} $t $(cat "/sys/class/infiniband/rxe0/ports/1/gids/${f##*/}" 2>/dev/null)"
		done
		echo "== hw_counters"; ls /sys/class/infiniband/rxe0/ports/1/hw_counters 2>&1
		echo "== smcr ueid"; [ -x "$smcr" ] && smc_contender && "$smcr" ueid show 2>&1
		echo "== sysctl net.smc"; sysctl net.smc 2>&1
	} >"$SMC_OUT/env-vm$SMC_VM.txt" 2>&1
}

# workload LABEL REP DESCRIPTION METRICS -- SMC_BENCH_ARGS...: one smc_bench
# client run with the counters recorded around it. A run that ends without
# its RESULT lines (killed by its timeout, say) gets failed ones.
workload() {
	local label=$1 r=$2 what=$3 metrics=$4 m rc=0
	shift 5
	progress "$what, rep $r/$reps"
	counters "$SMC_OUT/ctr-$label-r$r-before-vm2.txt"
	if profiled "$label" "$r"; then
		ctl "perf start $label"
		perf_start "$label"
	fi
	timeout $((4 * secs + 150)) "$bin" client -f "$family" -a "$server_addr" -p "$port" -r "$r" \
		-s "$secs" -W 10 "$@" >>"$SMC_OUT/results.txt" 2>>"$SMC_OUT/client-stderr.txt" || rc=$?
	if profiled "$label" "$r"; then
		perf_stop "$label"
		ctl "perf stop $label"
	fi
	[ "$rc" = 0 ] || note "$label rep $r: smc_bench exited $rc"
	counters "$SMC_OUT/ctr-$label-r$r-after-vm2.txt"
	for m in $metrics; do
		grep -q "^RESULT metric=$m rep=$r " "$SMC_OUT/results.txt" 2>/dev/null ||
			echo "RESULT metric=$m rep=$r status=failed family=$family error=exit-$rc" \
				>>"$SMC_OUT/results.txt"
	done
}

ceiling_run() {
	local r=$1 kind gid
	gid=$(gid_index)
	if [ -z "$gid" ]; then
		note "ceiling: no RoCE v2 GID on rxe0"
		return
	fi
	for kind in bw lat; do
		if [ "$kind" = bw ]; then
			progress "ceiling: rxe RDMA WRITE bandwidth (ib_write_bw), rep $r/$reps"
		else
			progress "ceiling: rxe RDMA WRITE latency (ib_write_lat), rep $r/$reps"
		fi
		if ! ctl "perftest $kind $r"; then
			note "ceiling $kind rep $r: the server did not start"
			continue
		fi
		counters "$SMC_OUT/ctr-rdma_$kind-r$r-before-vm2.txt"
		{
			echo "gid index $gid: $(cat /sys/class/infiniband/rxe0/ports/1/gids/"$gid")"
			if [ "$kind" = bw ]; then
				timeout $((secs + 90)) ib_write_bw -d rxe0 -i 1 -x "$gid" -F --report_gbits \
					-D "$secs" -p "$perftest_port" "$server_addr"
			else
				timeout 150 ib_write_lat -d rxe0 -i 1 -x "$gid" -F -n "$rdma_iters" \
					-p "$perftest_port" "$server_addr"
			fi
			echo "exit status $?"
		} >"$SMC_OUT/perftest-$kind-r$r-vm2.txt" 2>&1 </dev/null
		counters "$SMC_OUT/ctr-rdma_$kind-r$r-after-vm2.txt"
		# The server side ends on its own; give it time to let the port go.
		sleep 2
	done
}

client() {
	local r
	common_setup
	progress "waiting for VM 1"
	if ! "$bin" client -f tcp -a "$server_addr" -p "$port" -w ctl -l ping -W 180 -T 200; then
		note "VM 1 never answered"
		return 1
	fi

	# Idle connections first, before any other workload has made SMC-R
	# link groups and buffers that the idle connections could reuse.
	progress "memory: $idle_conns idle connections"
	snap idle-before
	ctl "snap idle-before"
	counters "$SMC_OUT/ctr-idle-r1-before-vm2.txt"
	timeout $((idle_conns + 300)) "$bin" client -f "$family" -a "$server_addr" -p "$port" -r 1 \
		-w idle -n "$idle_conns" -W 10 -T $((idle_conns + 280)) -M "$self held idle" \
		>>"$SMC_OUT/results.txt" 2>>"$SMC_OUT/client-stderr.txt" ||
		note "idle: smc_bench exited $? (memory snapshots may be missing)"
	counters "$SMC_OUT/ctr-idle-r1-after-vm2.txt"
	sleep "$settle"
	snap idle-after
	ctl "snap idle-after"

	# Repetitions outermost: each workload's samples spread over the boot.
	for r in $(seq "$reps"); do
		workload bulk1 "$r" "bulk, 1 stream" bulk1 -- -w bulk -t 1 -M "$self probe bulk1-r$r"
		workload "bulk$streams" "$r" "bulk, $streams streams" "bulk$streams" -- \
			-w bulk -t "$streams" -M "$self probe bulk$streams-r$r"
		workload pingpong "$r" "1-byte ping-pong" "lat_p50 lat_p99" -- \
			-w pingpong -n "$pp_count" -M "$self probe pingpong-r$r"
		workload cps1 "$r" "connections/s, 1 thread" cps1 -- -w cps -t 1
		workload "cps$cps_threads" "$r" "connections/s, $cps_threads threads" "cps$cps_threads" -- \
			-w cps -t "$cps_threads"
		[ "$redis_n" -gt 0 ] && redis_workload "$r"
		[ "$anchors" = 1 ] && anchors_workload "$r"
	done
	[ "$dryrun" = 1 ] || [ "$cpu" != 1 ] || cpu_pass
	if [ "$ceiling" = 1 ]; then
		for r in $(seq "$reps"); do ceiling_run "$r"; done
	fi
	progress "done"
	ctl quit
}

server() {
	common_setup
	timeout "$budget" "$bin" server -f "$family" -p "$port" -c "$self ctl" -T "$budget" \
		>"$SMC_OUT/server.txt" 2>&1
}

case "${1:-}" in
server) server ;;
client) client ;;
ctl)
	shift
	case "${1:-}" in
	snap) snap "$2" ;;
	probe) smcss_dump >"$SMC_OUT/smcss-$2-vm$SMC_VM.txt" 2>&1 ;;
	perftest) perftest_server "$2" "$3" ;;
	redis) redis_server "$2" ;;
	anchors) anchors_server "$2" ;;
	perf | cpu)
		case "${2:-}" in
		start | stop) "$1_$2" "$3" ;;
		*) exit 2 ;;
		esac
		;;
	*) exit 2 ;;
	esac
	;;
probe)
	smcss_dump >"$SMC_OUT/smcss-$2-vm$SMC_VM.txt" 2>&1
	ctl "probe $2"
	;;
held)
	sleep "$settle"
	smcss_dump >"$SMC_OUT/smcss-$2-vm$SMC_VM.txt" 2>&1
	ctl "probe $2"
	snap "$2-during"
	ctl "snap $2-during"
	;;
*)
	echo "usage: bench-vm.sh server|client|ctl REQUEST|probe LABEL|held LABEL" >&2
	exit 2
	;;
esac
