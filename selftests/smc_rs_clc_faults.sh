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
# A Confirm that comes late on a busy link group: a client answers the
# Accepts of a link group one at a time (upstream's does, under a lock),
# so with many handshakes at once the last answer comes long after its
# Accept. The client arms knob 9 (its next Confirm goes out 8 s late,
# after the server's 6 s CLC wait) and, while that handshake waits, makes
# four more connections on the same link group. The server must wait on
# as long as the link group's other Accepts are answered: all six echoes
# intact over SMC-R, no handshake error, no fallback on either side, rxe
# carried the payload.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=badmtu
port=7440
knob=/sys/kernel/debug/smc_rs/inject
pair_modules
if [ "$mine" != smc_rs ] || [ "$other_mod" != smc_rs ]; then
	skip_test "qp_mtu 0 in CLC ($side side)" "needs smc_rs on both sides (the fault injection knob)"
	exit 0
fi
# First contacts: no link group left from the scripts before.
run_test "smc_rs $side: loaded afresh for the qp_mtu cases" fresh_smc_rs

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

# The late Confirm: connection A makes the link group, B's Confirm is
# held 8 s, C1..C4 go meanwhile (the knob is back to 0 once B took it).
late_confirm() {
	local b rc=0 _
	smc_echo client -f smc -a "$peer" -p "$port" -s 65536 -w 90 || return 1
	echo 9 >"$knob"
	smc_echo client -f smc -a "$peer" -p "$port" -s 1048576 -w 90 &
	b=$!
	for _ in $(seq 100); do
		[ "$(cat "$knob")" = 0 ] && break
		sleep 0.1
	done
	for _ in 1 2 3 4; do
		smc_echo client -f smc -a "$peer" -p "$port" -s 65536 -w 90 || rc=1
		sleep 1
	done
	wait "$b" || rc=1
	return $rc
}
port=7442
before_smcr
pair_signal late
pair_await late 60
if [ "$side" = server ]; then
	run_test "smc_rs server, a Confirm 8 s late while the link group's other Accepts are answered: 6 connections echoed (server side)" \
		timeout 180 smc_echo server -f smc -p "$port" -n 6
else
	run_test "smc_rs client, its Confirm 8 s late, 4 connections meanwhile: all 6 echoed intact" late_confirm
fi
run_test "smc_rs $side, the late Confirm: 6 SMC-Rv2 connections, no handshake error, no fallback" smcr_stats_moved 6
run_test "smc_rs $side, the late Confirm: rxe carried the payload" rxe_moved $((1048576 + 5 * 65536))
pair_signal done-late
pair_await done-late 120
echo 0 >"$knob"
run_test "smc_rs unloads after the qp_mtu cases ($side side)" unload_smc_rs
exit 0
