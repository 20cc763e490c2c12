#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# CLC faults between two smc_rs, each from one side's fault injection knob.
#
# A peer's qp_mtu that is no IB MTU (0) must never reach the device: the
# side that receives it declines and both fall back to TCP, data intact.
# Each side in turn arms knob 8 (the next SMC-R CLC Accept or Confirm it
# sends names qp_mtu 0): first the server's Accept, then the client's
# Confirm. smc_echo checks each echo byte for byte; both modules'
# statistics count each fallback; the knob is back to 0 (the message went
# out).
#
# A slow client delays nobody else: the client arms knob 9 (its next
# Confirm goes out 4 s late) and makes the first connection to the
# server, B, which thus holds a new link group in its setup for 4 s
# (upstream holds its host-wide pending lock all that time). Meanwhile
# three more connections start at once: each must be echoed while B still
# waits for its Confirm to go out (the server waits for a link group being
# made one second at most, then makes its own), then B too; all four over
# SMC-R by both modules' statistics, with no handshake error and no
# fallback, and rxe carried the payload.
#
# A busy server is no server without CLC: the server arms knob 10 (its
# next Accept is held back 7 s; a client waits 6 s for it). The client
# makes that connection again without the option (echoed intact over
# TCP), but it heard this server speak CLC before: its next connection
# offers SMC again and runs over SMC-R. A client that took the silence
# for a peer without CLC would skip SMC towards it for ten minutes.
#
# A link group the client lost is soon gone at the server too: the
# client's RDMA device goes and comes back while its link group idles
# (nothing tells the server, whose TEST LINK would come after 30 s of
# silence). The next connection gets an Accept naming the lost link group,
# declines it with NOSRVLINK and falls back, data intact; on that Decline
# the server tests the link at once, so a connection 5 s later makes a new
# link group and runs over SMC-R (statistics, rxe's counters) instead of
# falling back for another half minute.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=clcfaults
port=7440
knob=/sys/kernel/debug/smc_rs/inject
pair_modules
if [ "$mine" != smc_rs ] || [ "$other_mod" != smc_rs ]; then
	skip_test "qp_mtu 0 in CLC ($side side)" "needs smc_rs on both sides (the fault injection knob)"
	exit 0
fi
# First contacts: no link group left from the scripts before.
run_test "smc_rs $side: loaded afresh for the qp_mtu cases" fresh_smc_rs

# serve_or_run N SERVER_TEST CLIENT_TEST CLIENT_FN: the server echoes N
# connections on $port, the client runs CLIENT_FN; one test each.
serve_or_run() {
	if [ "$side" = server ]; then
		run_test "$2" timeout 120 smc_echo server -f smc -p "$port" -n "$1"
	else
		run_test "$3" "$4"
	fi
}

# fallbacks_rose BEFORE: one more TCP fallback than BEFORE.
fallbacks_rose() {
	local now
	now=$(smc_stat "  TCP fallback")
	echo "TCP fallbacks: $1 -> $now"
	[ "$now" -eq $(($1 + 1)) ]
}

# case WHO WHAT: WHO (server or client) arms the knob; one connection.
case_mtu0() {
	local fb
	fb=$(smc_stat "  TCP fallback")
	if [ "$side" = "$1" ]; then
		echo 8 >"$knob"
	fi
	pair_signal "armed-$1"
	pair_await "armed-$1" 60
	if [ "$side" = server ]; then
		run_test "smc_rs server, qp_mtu 0 in the $2: the connection echoed over TCP (server side)" \
			timeout 120 smc_echo server -f smc -p "$port" -n 1
	else
		run_test "smc_rs client, qp_mtu 0 in the $2: declined, 1 MiB echoed intact over TCP" \
			timeout 120 smc_echo client -f smc -a "$peer" -p "$port" -s 1048576 -w 90
	fi
	run_test "smc_rs $side, qp_mtu 0 in the $2: the fallback counted" fallbacks_rose "$fb"
	[ "$side" = "$1" ] && run_test "smc_rs $1: the $2 with qp_mtu 0 went out (knob back to 0)" \
		test "$(cat "$knob")" = 0
	pair_signal "done-$1"
	pair_await "done-$1" 120
}

case_mtu0 server "server's Accept"
port=7441
case_mtu0 client "client's Confirm"
echo 0 >"$knob"

# slow_first B_SECS: B with its Confirm held, and three connections that
# start once B took the knob; they must end while B still runs.
slow_first() {
	local b i t0 rc=0 v=9 pids=()
	echo 9 >"$knob"
	smc_echo client -f smc -a "$peer" -p "$port" -s 65536 -w 90 &
	b=$!
	for _ in $(seq 200); do
		read -r v <"$knob"
		[ "$v" = 0 ] && break
		sleep 0.05
	done
	[ "$v" = 0 ] || { echo "B never took the knob"; kill "$b"; return 1; }
	t0=$EPOCHREALTIME
	for i in 1 2 3; do
		(
			smc_echo client -f smc -a "$peer" -p "$port" -s 65536 -w 90 || exit 1
			echo "C$i echoed $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s after B held its Confirm"
		) &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	if kill -0 "$b" 2>/dev/null; then
		echo "B still waits for its Confirm to go out"
	else
		echo "B ended before the others: they waited for it"
		rc=1
	fi
	wait "$b" || rc=1
	echo "B echoed $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s after it held its Confirm"
	return $rc
}
port=7442
run_test "smc_rs $side: no link group before the slow client" test -z "$(smc_lgr_ids)"
before_smcr
pair_signal slow
pair_await slow 60
serve_or_run 4 "smc_rs server, a first contact whose Confirm is 4 s late: 4 connections echoed (server side)" \
	"smc_rs client, its first Confirm 4 s late: 3 more connections echoed intact meanwhile, then it" slow_first
run_test "smc_rs $side, the slow client: 4 SMC-Rv2 connections, no handshake error, no fallback" smcr_stats_moved 4
run_test "smc_rs $side, the slow client: rxe carried the payload" rxe_moved $((4 * 65536))
pair_signal done-slow
pair_await done-slow 120

# busy_server_client: the connection whose Accept is late, then one more.
busy_server_client() {
	local fb
	fb=$(smc_stat "  TCP fallback")
	timeout 60 smc_echo client -f smc -a "$peer" -p "$port" -s 65536 -w 30 || return 1
	fallbacks_rose "$fb" || return 1
	before_smcr
	timeout 60 smc_echo client -f smc -a "$peer" -p "$port" -s 65536 -w 30 || return 1
	smcr_stats_moved 1
}
# busy_server_server: two connections, the first with its Accept late:
# one SMC-R connection and one fallback more.
busy_server_server() {
	local c f
	timeout 120 smc_echo server -f smc -p "$port" -n 2 || return 1
	c=$(smc_stat "  SMC connections") f=$(smc_stat "  TCP fallback")
	echo "SMC connections $stat_conns -> $c, fallback $stat_fback -> $f (want +1 each)"
	[ "$(cat "$knob")" = 0 ] || { echo "the late Accept never went"; return 1; }
	[ $((c - stat_conns)) -eq 1 ] && [ $((f - stat_fback)) -eq 1 ]
}
port=7443
before_smcr
[ "$side" = server ] && echo 10 >"$knob"
pair_signal busy
pair_await busy 60
if [ "$side" = server ]; then
	run_test "smc_rs server, its Accept 7 s late: the client's second try over TCP, its next connection over SMC-R (server side)" \
		busy_server_server
else
	run_test "smc_rs client, the server's Accept 7 s late: echoed over TCP, and the next connection still offers SMC and runs over SMC-R" \
		busy_server_client
fi
echo 0 >"$knob"
pair_signal done-busy
pair_await done-busy 120

# lost_lgr_client: an echo (a link group with the server), the device
# gone and back while that link group idles, then a connection the
# server's Accept ties to the lost link group (a fallback, data intact),
# then, 5 s later, one over SMC-R on a new link group.
lost_lgr_client() {
	local fb
	timeout 60 smc_echo client -f smc -a "$peer" -p "$port" -s 65536 -w 30 || return 1
	rdma link delete rxe0 || return 1
	rdma link add rxe0 type rxe netdev eth0 || return 1
	for _ in $(seq 50); do
		grep -q ACTIVE "$rxe_counters/../state" 2>/dev/null && break
		sleep 0.1
	done
	fb=$(smc_stat "  TCP fallback")
	timeout 60 smc_echo client -f smc -a "$peer" -p "$port" -s 65536 -w 30 || return 1
	fallbacks_rose "$fb" || return 1
	sleep 5
	before_smcr
	timeout 60 smc_echo client -f smc -a "$peer" -p "$port" -s 1048576 -w 30 || return 1
	smcr_stats_moved 1 && rxe_moved 1048576
}
port=7444
pair_signal lost
pair_await lost 60
serve_or_run 3 "smc_rs server, the client lost the link group (device gone and back): 3 connections echoed (server side)" \
	"smc_rs client, its device gone and back under an idle link group: the Accept naming it declined (NOSRVLINK) and echoed over TCP; 5 s later SMC-R again (the server tested the link at once)" \
	lost_lgr_client
pair_signal done-lost
pair_await done-lost 120
run_test "smc_rs unloads after the CLC faults ($side side)" unload_smc_rs
exit 0
