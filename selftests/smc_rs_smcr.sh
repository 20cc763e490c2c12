#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# SMC-R data path across the VM pair: VM 1 serves, VM 2 connects; each runs
# smc_rs or upstream smc.ko (vm.sh chooses), both with the bed's UEID and
# an rxe device. Every connection must be SMC-R, proven from outside smc_rs:
# rxe's hardware counters rise with the payload on both sides, and where
# upstream runs, its own statistics count SMC-Rv2 connections and no
# fallback.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
smcr=$SMC_TOP/tools/target/release/smcr
counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
# 8 MiB wraps a 64 KiB RMB 128 times; `make check-long` adds 64 MiB.
sizes="1 4096 65536 1048576 8388608 $(scaled "" 67108864)"
n=$(echo $sizes | wc -w)
total=0
for s in $sizes; do total=$((total + s + 8)); done

round_module

# The last connection loses its link (the client's device goes away) when
# both sides run smc_rs. With upstream on either side it is left out:
# upstream smc.ko leaks the connection's socket then (kmemleak: sk_alloc in
# smc_create on the client, in smc_tcp_listen_work on the server), which is
# not ours to report. Each side tells the other which module it runs.
echo "$mine" >"$SMC_OUT/$side-module"
for _ in $(seq 1200); do
	[ -s "$SMC_OUT/$other-module" ] && break
	sleep 0.1
done
other_mod=$(cat "$SMC_OUT/$other-module" 2>/dev/null)
[ "$side" = server ] && server_mod=$mine || server_mod=$other_mod
lost=0 many=0 big=0 short=0 short_threads=8
if [ "$mine" = smc_rs ] && [ "$other_mod" = smc_rs ]; then
	lost=1
	# More connections than one link group takes (255), then many short
	# ones (connect, 1 byte each way, close) in 8 threads: each link
	# group's connection slots, tokens and pooled buffers are used again
	# and again (`make check-long`: 1000 and 20000).
	big=$(scaled 300 1000)
	short=$(scaled 1000 20000)
fi
rmem_probe=0
if [ "$server_mod" = smc_rs ]; then
	# Concurrent connections on one link group.
	many=100
	# One more connection, whose RMB the client sees sized by the
	# server's net.smc.rmem (32 KiB: half the socket's doubled value).
	rmem_probe=1
	[ "$side" = server ] && sysctl -w net.smc.rmem=32768
fi

# Operators' tools look at one held connection first (smcr_view.sh).
. "$here/smcr_view.sh"

# stats_counted SIDE: the module's statistics saw the SMC-Rv2 connections
# on SIDE ($n echoes and the held one) and no fallback.
stats_counted() {
	local c=0 s=0 k=$((n + 1))
	# The server has also served the connection whose link is lost below.
	# The server also counts the client's Redis connections (smc_run_redis.sh).
	[ "$1" = client ] && c=$k || {
		k=$((n + many + lost + big + short + 1 + rmem_probe + $(cat "$SMC_OUT/redis-conns" 2>/dev/null || echo 0)))
		s=$k
	}
	"$smcr" -d stats
	"$smcr" -d stats | grep -Eq "^  SMC connections +$k \(client $c, server $s\)" &&
		"$smcr" -d stats | grep -Eq "^    v2 +$k\$" &&
		"$smcr" -d stats | grep -Eq '^  TCP fallback +0 '
}

# stats_data: the data path counters (smcr stats) saw the echoed payload
# each way, in requests and buffers of each direction.
stats_data() {
	"$smcr" -a stats | tee /dev/stderr | awk -v min=$((total - 8 * n)) '
		/^RX Stats/ { dir = "rx" }
		/^TX Stats/ { dir = "tx" }
		/^  Data transmitted/ { bytes[dir] = $4 }
		/^  Total requests/ { reqs[dir] = $3 }
		/^  Bufs/ { for (i = 2; i <= NF; i++) bufs[dir] += $i }
		END {
			printf "rx %d bytes, %d requests; tx %d bytes, %d requests (at least %d bytes each)\n",
				bytes["rx"], reqs["rx"], bytes["tx"], reqs["tx"], min
			exit !(bytes["rx"] >= min && bytes["tx"] >= min && reqs["rx"] > 0 &&
				reqs["tx"] > 0 && bufs["rx"] > 0 && bufs["tx"] > 0)
		}'
}

# rxe_counted FILE BEFORE: the device moved at least the payload in
# RoCE packets of at most 4096 bytes (each echo crosses twice).
rxe_counted() {
	local after
	after=$(cat "$counters/$1")
	echo "rxe $1: $2 -> $after for $total payload bytes each way"
	[ $((after - $2)) -ge $((total / 4096)) ]
}

# Unmodified programs under smc_run: smc_preload_check now, Redis below.
. "$here/smc_run_redis.sh"

sent_before=$(cat "$counters/sent_pkts")
rcvd_before=$(cat "$counters/rcvd_pkts")
if [ "$side" = server ]; then
	redis_server_start
	view_server_side &
	viewer=$!
	# A client connection that failed never comes: the wait is bounded
	# by the client's series at a slow machine's pace, twice over.
	run_test "$mine server for SMC-R clients (server side)" \
		timeout "$(scaled 600 3000)" smc_echo server -f smc -p 7301 \
		-n "$((n + many + lost + big + short + 1 + rmem_probe))"
	wait "$viewer"
	redis_server_finish
else
	view_client_side
	for s in $sizes; do
		run_test "$mine client -> SMC-R server, $s bytes echoed" \
			timeout 300 smc_echo client -f smc -a "$peer" -p 7301 -s "$s" -w 90
	done
fi
[ "$mine" = upstream ] &&
	run_test "upstream counts the SMC-Rv2 $side connections and no fallback" stats_counted "$side"
# Our own statistics, read by the same tool, say the same.
[ "$mine" = smc_rs ] &&
	run_test "smc_rs counts the SMC-Rv2 $side connections and no fallback" stats_counted "$side"
run_test "$mine counts the data path ($side side): the payload each way, requests, buffers" stats_data
run_test "rxe sent the payload in RoCE packets ($side side)" rxe_counted sent_pkts "$sent_before"
run_test "rxe received the payload in RoCE packets ($side side)" rxe_counted rcvd_pkts "$rcvd_before"

# rmem_seen: a connection's peer RMB (smc_diag, as smcss -d prints it:
# token, send buffer, RMB, peer RMB) is the 32 KiB the server's
# net.smc.rmem=32768 asks for.
rmem_seen() {
	local pid out=
	timeout 120 smc_echo client -f smc -a "$peer" -p 7301 -s 8388608 -w 90 &
	pid=$!
	for _ in $(seq 300); do
		out=$("$SMC_TOP/tools/target/release/smcss" -a -d 2>/dev/null | grep SMCR)
		[ -n "$out" ] && break
		sleep 0.1
	done
	echo "$out"
	wait "$pid" || return 1
	echo "$out" | grep -Eq ' [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8} 00008000 '
}
[ "$side" = client ] && [ "$rmem_probe" = 1 ] &&
	run_test "$mine client: the server's net.smc.rmem=32768 gives a 32 KiB peer RMB" rmem_seen

[ "$side" = client ] && [ "$many" -gt 0 ] &&
	run_test "$mine client: $many concurrent SMC-R connections x 64 KiB echoed" \
		timeout 300 smc_echo client -f smc -a "$peer" -p 7301 -s 65536 -n "$many" -w 90

[ "$side" = client ] && [ "$big" -gt 0 ] &&
	run_test "$mine client: $big concurrent SMC-R connections x 4 KiB echoed (several link groups)" \
		timeout 600 smc_echo client -f smc -a "$peer" -p 7301 -s 4096 -n "$big" -w 90
[ "$side" = client ] && [ "$short" -gt 0 ] &&
	run_test "$mine client: $short short SMC-R connections (1 byte echoed each)" \
		timeout 900 smc_echo client -f smc -a "$peer" -p 7301 -s 1 -n "$short_threads" \
		-r "$((short / short_threads))" -w 90

# Redis through smc_run, while the client still has its device.
[ "$side" = client ] && redis_client_run

# The client's RDMA device goes away in the middle of a 64 MiB echo: the
# client's calls fail (or the echo completes first); nothing hangs on
# either side, and each side's link group ends.
device_lost() {
	local pid rc
	timeout 120 smc_echo client -f smc -a "$peer" -p 7301 -s 67108864 -w 90 &
	pid=$!
	# Once the connection runs over SMC-R (as the module's smc_diag says),
	# a moment into the transfer. A connection that never does (a
	# fallback) proves nothing here.
	local smcr=0
	for _ in $(seq 300); do
		"$SMC_TOP/tools/target/release/smcss" -a 2>/dev/null | grep -q SMCR && smcr=1 && break
		sleep 0.1
	done
	if [ "$smcr" = 0 ]; then
		echo "the connection did not run over SMC-R"
		kill "$pid"
		wait "$pid"
		return 1
	fi
	sleep 1
	"$SMC_TOP/tools/target/release/smcss" -a
	rdma link delete rxe0 || return 1
	wait "$pid"
	rc=$?
	echo "client exit status $rc after its device went away"
	[ "$rc" != 124 ]
}
[ "$side" = client ] && [ "$lost" = 1 ] &&
	run_test "$mine client: device removed mid-transfer, the connection ends, no hang" device_lost
# With the link groups ended or failed, the module unloads.
[ "$mine" = smc_rs ] && run_test "smc_rs unloads after the SMC-R runs ($side side)" rmmod smc_rs
dmesg | grep smc_rs | tail -30
exit 0
