# SPDX-License-Identifier: GPL-2.0
# smc_run across the VM pair: an unmodified Redis server (VM 1) and
# redis-cli / redis-benchmark (VM 2), each started by smc_run, talk over
# SMC-R. Proven from outside the preload library: the client's module
# statistics count the connections (and no fallback), smcss -a lists them
# as SMCR while the benchmark runs, rxe's counters move. Also
# smc_preload_check (what the library promises a program) on each side.
# Sourced by smc_rs_smcr.sh (needs $side, $mine, $peer, $smcr, $counters,
# lib.sh's run_test); the server's statistics check adds the client's
# redis connections ($SMC_OUT/redis-conns).

smc_run=$SMC_TOP/tools/target/release/smc_run
redis_port=6380
redis_sock=
redis_pid=

run_test "$mine $side: smc_preload_check under smc_run (AF_SMC sockets, flags, fork, exec, threads)" \
	"$smc_run" smc_preload_check

# smc_stat NAME: a number of `smcr -d stats`: "conns" (SMC connections) or
# "fallback" (TCP fallback).
smc_stat() {
	case "$1" in
	conns) "$smcr" -d stats | awk '/^  SMC connections / { print $3; exit }' ;;
	fallback) "$smcr" -d stats | awk '/^  TCP fallback / { print $3; exit }' ;;
	esac
}

# Server: Redis under smc_run on $server_addr:6380 (and a UNIX socket for the
# local checks), then "redis-ready" (or "redis-none") for the client.
redis_server_start() {
	if ! command -v redis-server >/dev/null; then
		echo none >"$SMC_OUT/redis-ready"
		return 0
	fi
	redis_sock=$(mktemp -u /tmp/redis-smc_run.XXXXXX).sock
	"$smc_run" redis-server --port "$redis_port" --bind "$server_addr" --protected-mode no \
		--save "" --appendonly no --dir /tmp --unixsocket "$redis_sock" \
		--logfile "$SMC_OUT/redis-server.log" &
	redis_pid=$!
	for _ in $(seq 300); do
		[ "$(redis-cli -s "$redis_sock" ping 2>/dev/null)" = PONG ] && break
		sleep 0.1
	done
	redis-cli -s "$redis_sock" ping >"$SMC_OUT/redis-ready" 2>&1
}

# Server: waits for the client's redis runs, stops Redis.
redis_server_finish() {
	[ -n "$redis_pid" ] || return 0
	for _ in $(seq 9000); do
		[ -e "$SMC_OUT/redis-done" ] && break
		sleep 0.1
	done
	redis-cli -s "$redis_sock" info stats | grep -E '^(total_connections|total_commands)' >>"$LOG_FILE"
	kill "$redis_pid" 2>/dev/null
	wait "$redis_pid"
	rm -f "$redis_sock"
}

# redis_round_trip: SET through smc_run, GET it back.
redis_round_trip() {
	local value got
	value="smc_run-$$-$RANDOM"
	"$smc_run" redis-cli -h "$peer" -p "$redis_port" SET smc_run_key "$value" || return 1
	got=$("$smc_run" redis-cli -h "$peer" -p "$redis_port" GET smc_run_key) || return 1
	echo "GET smc_run_key: $got"
	[ "$got" = "$value" ]
}

# Requests per redis-benchmark test (`make check-long`: 2000).
redis_n=$(scaled 200 2000)

# redis_bench CLIENTS: redis-benchmark SET and GET, $redis_n requests each,
# CLIENTS connections; with 50, smcss -a must list SMCR sockets to the
# server's port while it runs.
redis_bench() {
	local pid rc seen=0
	"$smc_run" redis-benchmark -h "$peer" -p "$redis_port" -t set,get -n "$redis_n" -c "$1" -q &
	pid=$!
	if [ "$1" -gt 1 ]; then
		for _ in $(seq 600); do
			"$SMC_TOP/tools/target/release/smcss" -a 2>/dev/null |
				grep -F " $peer:$redis_port " | grep -q ' SMCR' && { seen=1; break; }
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		"$SMC_TOP/tools/target/release/smcss" -a | grep -F ":$redis_port " | head -5
	fi
	wait "$pid"
	rc=$?
	echo "redis-benchmark -c $1: exit status $rc"
	[ "$rc" = 0 ] || return 1
	if [ "$1" -gt 1 ] && [ "$seen" = 0 ]; then
		echo "smcss -a never showed an SMCR socket to $peer:$redis_port"
		return 1
	fi
}

# Client: the round trip and the two benchmarks, then the evidence.
redis_client_run() {
	local ready conns0 fb0 sent0 conns1 fb1 sent1
	for _ in $(seq 3000); do
		[ -s "$SMC_OUT/redis-ready" ] && break
		sleep 0.1
	done
	ready=$(cat "$SMC_OUT/redis-ready" 2>/dev/null)
	if [ "$ready" != PONG ] || ! command -v redis-benchmark >/dev/null; then
		echo 0 >"$SMC_OUT/redis-conns"
		touch "$SMC_OUT/redis-done"
		if [ "$ready" = none ] || ! command -v redis-benchmark >/dev/null; then
			skip_test "$mine client: Redis through smc_run" "no redis-server/redis-tools"
		else
			run_test "$mine client: the server's Redis under smc_run answers (${ready:-no answer})" false
		fi
		return 0
	fi
	conns0=$(smc_stat conns) fb0=$(smc_stat fallback) sent0=$(cat "$counters/sent_pkts")
	run_test "$mine client: smc_run redis-cli SET, GET returns the value" redis_round_trip
	run_test "$mine client: smc_run redis-benchmark -t set,get -n $redis_n -c 1" redis_bench 1
	# 50 clients at once only between two smc_rs: upstream smc.ko declines
	# or falls back on some connections of such a burst under emulation
	# (its server counts handshake errors, its client declines), which is
	# not ours to judge.
	local want=4
	if [ "$lost" = 1 ]; then
		want=104
		run_test "$mine client: smc_run redis-benchmark -t set,get -n $redis_n -c 50 (smcss -a: SMCR)" redis_bench 50
	fi
	conns1=$(smc_stat conns) fb1=$(smc_stat fallback) sent1=$(cat "$counters/sent_pkts")
	echo $((conns1 - conns0)) >"$SMC_OUT/redis-conns"
	touch "$SMC_OUT/redis-done"
	run_test "$mine client: the Redis connections were SMC-R (smcr -d stats, rxe counters)" \
		redis_evidence $((conns1 - conns0)) "$fb0" "$fb1" $((sent1 - sent0)) "$want"
}

# redis_evidence CONNS FALLBACK_BEFORE FALLBACK_AFTER SENT WANT: at least
# WANT SMC connections (2 redis-cli, 1 + 1 benchmark clients, and 50 + 50
# with the burst), no new fallback, at least 3 RoCE packets sent for each
# of the 1-client benchmark's 2 x $redis_n requests (its RDMA write and CDC
# message, and the acknowledgement of the answer's; about 4 were seen).
redis_evidence() {
	echo "SMC connections +$1 (at least $5), TCP fallback $2 -> $3, rxe sent_pkts +$4"
	[ "$1" -ge "$5" ] && [ -n "$2" ] && [ "$2" = "$3" ] && [ "$4" -ge $((redis_n * 6)) ]
}
