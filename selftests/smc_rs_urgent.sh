#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Urgent data behind a full send path (selftests/smc_urgent_load.py): 16
# rounds of 256 KiB, each followed by one byte with MSG_OOB while the
# data before it is still being pushed. The server must find every urgent
# byte at its mark (SIOCATMARK), take it with MSG_OOB, read exactly the
# round's bytes around it and get a SIGURG, as TCP gives them: first over
# TCP (the reference, same script), then over SMC-R, proven by both sides'
# statistics (one SMC-Rv2 connection, no fallback, no handshake error) and
# rxe's counters.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=urgent
rounds=16
pair_modules

# urgent FAMILY PORT: one run of the probe, this side's half.
urgent() {
	if [ "$side" = server ]; then
		timeout 180 python3 "$here/smc_urgent_load.py" server "$2" "$rounds" $1
	else
		timeout 180 python3 "$here/smc_urgent_load.py" client "$peer" "$2" "$rounds" $1
	fi
}
pair_signal tcp
pair_await tcp 120
run_test "TCP ($side side): every urgent byte behind 256 KiB at its mark, with SIGURG" urgent inet 7460
pair_signal tcp-done
pair_await tcp-done 120
# The reader must be smc_rs: upstream 6.12's receiver, when the urgent
# byte arrives after its reader reached the mark and is then taken with
# MSG_OOB, never moves its consumer cursor past it (smc_rx_recv_urg marks
# it read before smc_rx_update_consumer, which then skips nothing). A
# sender that writes nothing after an urgent byte until the peer consumed
# it stops there: ours, and upstream's own (its urg_tx_pend waits for the
# whole RMB to be free). Seen with upstream on both sides of this script:
# round 0 ok, round 1 "no mark after 0 bytes", as with our sender. Writing
# on would put the byte in-band and shift the stream by one byte.
receiver=$mine
[ "$side" = client ] && receiver=$other_mod
if [ "$receiver" != smc_rs ]; then
	skip_test "$mine $side: urgent data over SMC-R" "upstream 6.12 receivers stop at an urgent byte taken with MSG_OOB at the mark, with upstream's sender too (see the script)"
	pair_signal done
	pair_await done 120
	exit 0
fi
before_smcr
run_test "$mine $side against $other_mod: every urgent byte behind 256 KiB at its mark over SMC-R, with SIGURG" urgent "" 7461
run_test "$mine $side, urgent data: one SMC-Rv2 connection, no handshake error, no fallback" smcr_stats_moved 1
run_test "$mine $side, urgent data: rxe carried the payload" rxe_one_way $((rounds * 262144))
pair_signal done
pair_await done 120
exit 0
