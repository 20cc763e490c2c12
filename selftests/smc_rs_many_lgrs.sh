#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# More link groups than a fixed table of 64 could hold: between two smc_rs
# with net.smc.smcr_max_conns_per_lgr=16 (upstream's minimum) on both
# sides, 1040 concurrent connections need 65 link groups. Every echo must
# come back byte for byte (smc_echo), both sides count the connections as
# SMC-Rv2 with no fallback, and both list at least 65 link groups
# (`smcr linkgroup`: idle link groups linger).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=lgrs
port=7460
conns=1040
[ "$side" = server ] && other=client || other=server
pair_modules
if [ "$mine" != smc_rs ] || [ "$other_mod" != smc_rs ]; then
	skip_test "65 link groups ($side side)" "needs smc_rs on both sides"
	exit 0
fi
run_test "smc_rs $side: loaded afresh with net.smc.smcr_max_conns_per_lgr=16" \
	eval 'fresh_smc_rs && sysctl -w net.smc.smcr_max_conns_per_lgr=16'
pair_signal ready
pair_await ready 120
before_smcr

if [ "$side" = server ]; then
	run_test "smc_rs server: $conns concurrent connections on link groups of 16 echoed (server side)" \
		timeout 600 smc_echo server -f smc -p "$port" -n "$conns"
else
	run_test "smc_rs client: $conns concurrent connections x 1 KiB echoed intact over 65 link groups" \
		timeout 600 smc_echo client -f smc -a "$peer" -p "$port" -s 1024 -n "$conns" -w 90
fi
run_test "smc_rs $side: statistics count the $conns connections as SMC-Rv2, no fallback" \
	smcr_stats_moved "$conns"
lgrs_listed() {
	local n
	n=$(smc_lgr_ids | wc -l)
	echo "link groups listed: $n"
	[ "$n" -ge 65 ]
}
run_test "smc_rs $side: at least 65 link groups (smcr linkgroup)" lgrs_listed
pair_signal done
pair_await done 300
run_test "smc_rs unloads after the 65 link groups ($side side)" unload_smc_rs
exit 0
