#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The peer's RMB key table (upstream's rtokens: 255 rows per link group)
# across connections of two RMB sizes. The smc_rs side keeps the RMBs of
# ended connections registered in its link group's pool for later ones of
# the same size; a new RMB of another size lets a pooled one go, its row
# at the peer deleted first (DELETE RKEY, answered). VM 1 serves, VM 2
# connects; the smc_rs side (between two smc_rs, both) asks for 128 KiB
# RMBs (net.smc.rmem=65536), $conns concurrent connections echo, end and
# their buffers are pooled; then 64 KiB RMBs (net.smc.rmem=32768) for
# $conns more. Together more RMBs than the table has rows: without the
# deletions, an upstream client would find its table full and decline
# (fallback to TCP), an upstream server would start a second link group.
# Proof from outside smc_rs: each echo is checked byte for byte, the
# statistics (upstream's own where it runs) count every connection as
# SMC-Rv2 with no handshake error and no fallback, and each side lists one
# link group more than before, not two.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=rkeys
port=7511
conns=130
size=1024
pair_modules
echo "$side: $mine, the $other: $other_mod"
if [ "$mine" = smc_rs ]; then
	run_test "smc_rs $side: loaded afresh" fresh_smc_rs
fi
before_smcr
lgrs_before=$(smc_lgr_ids | sort | tr '\n' ' ')

# conns_ended: this side's link groups carry no connection (the ended
# ones' buffers are pooled), within 30 s.
conns_ended() {
	local _
	for _ in $(seq 300); do
		"$SMC_TOP/tools/target/release/smcr" linkgroup |
			awk '($2 == "SERV" || $2 == "CLNT") && $5 != 0 { busy = 1 } END { exit busy }' &&
			return 0
		sleep 0.1
	done
	"$SMC_TOP/tools/target/release/smcr" linkgroup
	return 1
}

# phase RMEM: net.smc.rmem=RMEM on the smc_rs side, then $conns
# concurrent connections echoed, then every connection ended on this side.
phase() {
	local rmb=$(($1 * 2 >> 10))
	[ "$mine" = smc_rs ] && sysctl -qw net.smc.rmem="$1"
	pair_signal "rmem-$1"
	pair_await "rmem-$1" 120
	if [ "$side" = server ]; then
		pair_signal "listen-$1"
		run_test "$mine server: $conns concurrent connections with $rmb KiB RMBs on the smc_rs side echoed (server side)" \
			timeout 300 smc_echo server -f smc -p "$port" -n "$conns"
	else
		pair_await "listen-$1" 120
		run_test "$mine client -> $other_mod server: $conns concurrent connections x $size bytes echoed intact, $rmb KiB RMBs on the smc_rs side" \
			timeout 300 smc_echo client -f smc -a "$peer" -p "$port" -s "$size" -n "$conns" -w 90
	fi
	run_test "$mine $side: the $conns connections with $rmb KiB RMBs ended" conns_ended
	pair_signal "ended-$1"
	pair_await "ended-$1" 120
}
phase 65536
phase 32768
[ "$mine" = smc_rs ] && sysctl -qw net.smc.rmem=65536

run_test "$mine $side: statistics count $((2 * conns)) more SMC-Rv2 connections, no handshake error, no fallback" \
	smcr_stats_moved $((2 * conns))

# one_more_lgr: the connections of both sizes ran on one link group.
one_more_lgr() {
	local id new=0 after
	after=$(smc_lgr_ids | sort | tr '\n' ' ')
	for id in $after; do
		case " $lgrs_before " in *" $id "*) ;; *) new=$((new + 1)) ;; esac
	done
	"$SMC_TOP/tools/target/release/smcr" linkgroup
	echo "link groups before: $lgrs_before; after: $after; new: $new"
	[ "$new" = 1 ]
}
run_test "$mine $side: all $((2 * conns)) connections on one new link group (the peer's key table kept room)" one_more_lgr

pair_signal done
pair_await done 120
if [ "$mine" = smc_rs ]; then
	# Between two smc_rs the client goes first.
	[ "$other_mod" = smc_rs ] && [ "$side" = server ] && pair_await unloaded 120
	run_test "smc_rs $side: unloads after the link group's $((2 * conns)) connections" unload_smc_rs
	pair_signal unloaded
fi
exit 0
