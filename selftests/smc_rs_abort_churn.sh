#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Abortive-close churn over SMC-R: the client makes connection after
# connection (4 threads), each sends 256 KiB of words that hold its own id
# (its port) and closes with SO_LINGER 0 while bytes are still on their
# way (smc_abort_churn.py). A sender that gave a send buffer to the next
# connection before its RDMA WRITEs completed would make the server read
# zeros or another connection's words: the server checks every whole word
# it read against the connection's id. SMC-R is proven from outside: rxe
# received the payload. Runs in a pair round with either module on either
# side.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
pair_tag=churn
port=7450
conns=$(scaled 50 400)
pair_modules
pkts=$(cat "$counters/rcvd_pkts")

if [ "$side" = server ]; then
	run_test "$mine server <- $conns abortive closes of $other_mod senders: every word read is the connection's own" \
		timeout 600 python3 "$here/smc_abort_churn.py" server "$port" "$conns"
	rxe_rose() {
		local now
		now=$(cat "$counters/rcvd_pkts")
		echo "rxe rcvd_pkts: $pkts -> $now"
		[ $((now - pkts)) -ge $((conns * 16)) ]
	}
	run_test "$mine server: rxe received the churn's payload in RoCE packets" rxe_rose
else
	run_test "$mine client: $conns connections of 256 KiB each closed with SO_LINGER 0 -> $other_mod server" \
		timeout 600 python3 "$here/smc_abort_churn.py" client "$peer" "$port" "$conns" 4
fi
pair_signal done
pair_await done 600
[ "$mine" = smc_rs ] && run_test "smc_rs unloads after the abortive closes ($side side)" unload_smc_rs
exit 0
