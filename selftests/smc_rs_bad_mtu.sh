#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer's qp_mtu that is no IB MTU (0) must never reach the device: the
# side that receives it declines and both fall back to TCP, data intact.
# Between two smc_rs, each side in turn arms its fault injection knob 8
# (the next SMC-R CLC Accept or Confirm it sends names qp_mtu 0): first the
# server's Accept, then the client's Confirm. smc_echo checks each echo
# byte for byte; both modules' statistics count each fallback; the knob is
# back to 0 (the message went out).
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
echo 0 >"$knob"
run_test "smc_rs unloads after the qp_mtu cases ($side side)" unload_smc_rs
exit 0
