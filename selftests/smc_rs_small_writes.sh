#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Small writes behind a full send path (selftests/smc_small_writes.py):
# the client writes 128 KiB at once, which blocks it, then 32 KiB one
# byte per send(); the server waits, reads 32 KiB one byte per recv(),
# then the rest. The server must get every byte in order, over SMC-R
# (both sides' statistics: one SMC-Rv2 connection, no fallback; rxe's
# counters). An smc_rs reader must announce its consumer cursor as
# upstream's does, once more than a tenth of its RMB was read, not after
# every byte: its rxe device, counted from outside the module, completes
# at most one RDMA SEND (CDC message) per 512 bytes read byte by byte
# (one a byte when the cursor goes back after each byte to the blocked
# writer, which then writes a byte a message).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=small-writes
bytes=32768
port=7470
pair_modules

before_smcr
small_writes() {
	local out
	if [ "$side" = server ]; then
		out=$(timeout 300 python3 "$here/smc_small_writes.py" server "$port" "$bytes" "$rxe_counters") || {
			echo "$out"
			return 1
		}
		echo "$out"
		messages=$(echo "$out" | sed -n 's/^messages=//p')
	else
		timeout 300 python3 "$here/smc_small_writes.py" client "$peer" "$port" "$bytes"
	fi
}
run_test "$mine $side against $other_mod: 32 KiB in 1-byte writes behind 128 KiB, read 1 byte at a time, every byte in order" small_writes
run_test "$mine $side, small writes: one SMC-Rv2 connection, no handshake error, no fallback" smcr_stats_moved 1
run_test "$mine $side, small writes: rxe carried the payload" rxe_one_way $((bytes + 131072))
# few_updates: the reader's device sent few messages while it read.
few_updates() {
	echo "the reader's rxe completed ${messages:-?} RDMA SENDs for $bytes bytes read one at a time (at most $((bytes / 512)))"
	[ -n "${messages:-}" ] && [ "$messages" -le $((bytes / 512)) ]
}
[ "$side" = server ] && [ "$mine" = smc_rs ] &&
	run_test "$mine reader: the consumer cursor goes back once per tenth of the RMB read, not per byte" few_updates
pair_signal done
pair_await done 120
exit 0
