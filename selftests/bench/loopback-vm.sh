#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The loopback benchmark inside one VM (scripts/bench.sh boots it; see
# Documentation/benchmarks.rst): both ends on this host, over 127.0.0.1,
# for each contender in turn in the same boot: TCP over lo (smc_rs loaded,
# AF_INET sockets), upstream smc.ko's SMC-D through its loopback-ism, and
# smc_rs's SMC-D through its loopback device (net.smc.smcd_loopback=1).
# Both SMC modules get the UEID SMC-D needs off s390. Workloads: bulk with
# 1 and BENCH_STREAMS streams, 1-byte ping-pong, connections per second
# (1 thread), and redis-benchmark SET/GET with 1 and 50 clients through
# smc_run; beside the ping-pong and Redis rows, the CPU time the whole VM
# spent busy per exchange and per request (both ends, from /proc/stat).
# Each contender's data path is checked from outside: TCP
# segments sent during its bulk runs (/proc/net/snmp) must stay in the
# dozens for the SMC contenders, else its figures are marked not-smcd.
#
# Settings: BENCH_REPS, BENCH_SECS, BENCH_STREAMS, BENCH_PP_COUNT,
# BENCH_REDIS_N, BENCH_PORT, BENCH_CONTENDERS, BENCH_PROFILE (pingpong
# and redis are profiled here: their first repetition under perf, the
# reports in perf-loopback-*.txt).
# Output in $SMC_OUT: loopback-results.txt (RESULT lines with
# contender=), loopback-notes.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${SMC_OUT:?run inside the VM bed (make bench)}"

reps=${BENCH_REPS:-3}
secs=${BENCH_SECS:-4}
streams=${BENCH_STREAMS:-4}
pp_count=${BENCH_PP_COUNT:-2000}
redis_n=${BENCH_REDIS_N:-10000}
port=${BENCH_PORT:-7400}
contenders=${BENCH_CONTENDERS:-tcp upstream smc_rs}
profile=${BENCH_PROFILE:-}
bin=$here/smc_bench
smc_run=$top/tools/target/release/smc_run
ueid=$top/selftests/tools/smc_ueid
results=$SMC_OUT/loopback-results.txt
notes=$SMC_OUT/loopback-notes.txt
: >"$results"

note() { printf '%s\n' "$*" >>"$notes"; }

# busy: the jiffies (USER_HZ) all CPUs spent busy so far (user, nice,
# system, irq, softirq: not idle or iowait), from /proc/stat.
busy() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}
clk_tck=$(getconf CLK_TCK)

# cpu_us BEFORE AFTER COUNT: busy microseconds per unit of COUNT.
cpu_us() {
	echo $(( ($2 - $1) * 1000000 / clk_tck / $3 ))
}

# profiled WHAT REP LABEL CMD...: runs CMD; under a system-wide perf
# record when BENCH_PROFILE lists WHAT and REP is the first repetition,
# its report by module and symbol (ours resolved through /proc/kallsyms)
# into perf-loopback-LABEL.txt.
profiled() {
	local what=$1 rep=$2 label=$3 pid rc
	shift 3
	case " $profile " in
	*" $what "*) [ "$rep" = 1 ] || { "$@"; return; } ;;
	*) "$@"; return ;;
	esac
	echo 0 >/proc/sys/kernel/kptr_restrict
	perf record -a -g -e cpu-clock -F 1000 -o "/tmp/perf-$label.data" >/dev/null 2>&1 </dev/null &
	pid=$!
	# perf takes a while to start on the emulated CPUs: a ping-pong run
	# (under a second) would be over before it samples.
	sleep 2
	"$@"
	rc=$?
	kill -INT "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	perf report --kallsyms=/proc/kallsyms -i "/tmp/perf-$label.data" --stdio --no-children \
		--sort dso,sym --percent-limit 0.3 -g none >"$SMC_OUT/perf-loopback-$label.txt" 2>&1
	rm -f "/tmp/perf-$label.data"
	return $rc
}

tcp_segs() {
	awk '/^Tcp:/ { if (h) { print $12; exit } h = 1 }' /proc/net/snmp
}

# load CONTENDER: the module it needs, with what SMC-D needs.
load() {
	modprobe -r smc_diag 2>/dev/null
	rmmod smc_rs 2>/dev/null
	rmmod smc 2>/dev/null
	case "$1" in
	upstream)
		modprobe smc && "$ueid" add SMC-RS-TESTBED ;;
	smc_rs | tcp)
		insmod "${SMC_KO:-$top/smc_rs.ko}" || return 1
		if [ "$1" = smc_rs ]; then
			"$ueid" add SMC-RS-TESTBED && sysctl -qw net.smc.smcd_loopback=1
		fi ;;
	esac
}

# run CONTENDER FAMILY: every workload, RESULT lines tagged.
run() {
	local c=$1 fam=$2 r w spid p=$port before after segs
	timeout 3000 "$bin" server -f "$fam" -b 127.0.0.1 -p "$p" -T 2900 >/dev/null 2>>"$notes" &
	spid=$!
	sleep 1
	for r in $(seq "$reps"); do
		before=$(tcp_segs)
		for w in "bulk 1" "bulk $streams"; do
			set -- $w
			timeout 120 "$bin" client -f "$fam" -a 127.0.0.1 -p "$p" -w bulk -t "$2" -s "$secs" -r "$r" -T 100
		done
		after=$(tcp_segs)
		segs=$((after - before))
		echo "RESULT metric=bulk_tcp_segs rep=$r status=ok value=$segs unit=segs"
		before=$(busy)
		profiled pingpong "$r" "pingpong-$c" \
			timeout 120 "$bin" client -f "$fam" -a 127.0.0.1 -p "$p" -w pingpong -n "$pp_count" -s 60 -r "$r" -T 100
		after=$(busy)
		echo "RESULT metric=cpu_pp rep=$r status=ok value=$(cpu_us "$before" "$after" "$pp_count") unit=us"
		timeout 120 "$bin" client -f "$fam" -a 127.0.0.1 -p "$p" -w cps -t 1 -s "$secs" -r "$r" -T 100
	done | sed "s/^RESULT /RESULT contender=$c /" >>"$results"
	timeout 20 "$bin" client -f tcp -a 127.0.0.1 -p "$p" -w ctl -l quit -W 10 -T 15 >/dev/null 2>&1
	wait "$spid" 2>/dev/null
	redis "$c" "$fam"
}

# redis CONTENDER FAMILY: redis-benchmark SET/GET, 1 and 50 clients, both
# ends under smc_run for the SMC contenders.
redis() {
	local c=$1 fam=$2 rp=$((port + 10)) wrap="" r n t rps pid before after
	command -v redis-server >/dev/null || { note "no redis-server"; return 0; }
	[ "$fam" = smc ] && wrap=$smc_run
	$wrap setsid redis-server --port "$rp" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --logfile "$SMC_OUT/loopback-redis-$c.txt" </dev/null >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		[ "$(redis-cli -p "$rp" ping 2>/dev/null)" = PONG ] && break
		sleep 0.1
	done
	for r in $(seq "$reps"); do
		for n in 1 50; do
			before=$(busy)
			profiled redis "$r" "redis-c$n-$c" \
				$wrap timeout 300 redis-benchmark -h 127.0.0.1 -p "$rp" -t set,get -n "$redis_n" -c "$n" --csv 2>/dev/null |
				tr -d '"' | while IFS=, read -r t rps _; do
					case "$t" in SET | GET) ;; *) continue ;; esac
					t=$(echo "$t" | tr 'A-Z' 'a-z')
					echo "RESULT contender=$c metric=redis_${t}_c$n rep=$r status=ok value=$rps unit=req/s"
				done >>"$results"
			after=$(busy)
			echo "RESULT contender=$c metric=cpu_redis_c$n rep=$r status=ok value=$(cpu_us "$before" "$after" $((2 * redis_n))) unit=us" >>"$results"
		done
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

for c in $contenders; do
	load "$c" || { note "$c: cannot load its module"; continue; }
	fam=smc
	[ "$c" = tcp ] && fam=tcp
	run "$c" "$fam"
done
load smc_rs
