#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Two links per link group, and a failover that loses nothing: the pair's
# second link (eth1, rxe1: selftests/lib.sh second_link_up) gives each
# side a second RoCE port. After first contact the server adds a second
# link over it (ADD LINK, its continuation with the rkeys, CONFIRM LINK on
# the new link): `smcr linkgroup` must show the group SYM on both sides,
# its link-show both links active, one on eth0 and one on eth1. Then one
# side's eth0 goes down in the middle of a checksummed 32 MiB echo
# (SMC_TWOLINKS_DOWN: server, the default, or client): the connection
# must move to the link over eth1 and the echo arrive intact. Proof from
# outside the module: rxe1's hardware counters carry the rest of the
# traffic, and TCP sent a handful of segments at most meanwhile (the data
# never fell back). eth0 comes back up afterwards.
#
# make check runs it between two upstream modules: the bed's reference,
# what smc_rs must match with two links (any pairing works). Upstream
# 6.12 passes with the server's eth0 down; with the client's, its echo
# stopped after 11 of 32 MiB and both guests hung: the server's
# smc_llc_delete_link_work waiting for the lost link's sends
# (smc_wr_tx_wait_no_pending_sends), its smc_link_down_work behind it.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=twolinks
port=7460
size=$(scaled 33554432 67108864)
smcr=$SMC_TOP/tools/target/release/smcr
pair_modules

run_test "$mine $side: second link up (eth1 10.10.0.1$SMC_VM, rxe1)" second_link_up
pair_signal up
pair_await up 120

# lgr_sym: the link group SYM within 15 s, both links active, one on
# eth0 and one on eth1.
lgr_sym() {
	local _ show
	for _ in $(seq 150); do
		show=$("$smcr" linkgroup link-show 2>/dev/null)
		if echo "$show" | awk '$3 == "SYM" && $5 == "LINK_ACTIVE" { print $4 }' |
			sort -u | tr '\n' ' ' | grep -qx 'eth0 eth1 '; then
			"$smcr" linkgroup
			echo "$show"
			return 0
		fi
		sleep 0.1
	done
	"$smcr" linkgroup
	"$smcr" linkgroup link-show
	return 1
}

# tcp_out_segs: the segments TCP sent so far (/proc/net/snmp).
tcp_out_segs() {
	awk '$1 == "Tcp:" && !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
		$1 == "Tcp:" { print $c["OutSegs"] }' /proc/net/snmp
}

# down_mid_echo CMD...: runs the echo CMD, takes this side's eth0 down once
# a part of the echo went over rxe0, waits for CMD and brings eth0 back;
# passes when CMD did, the rest went over rxe1 and TCP stayed flat.
down_mid_echo() {
	local pid rc=0 _ sent0 sent1 segs down1
	sent0=$(rxe_sent rxe0) sent1=$(rxe_sent rxe1) segs=$(tcp_out_segs)
	"$@" &
	pid=$!
	for _ in $(seq 3000); do
		[ $(($(rxe_sent rxe0) - sent0)) -ge $((size / 8192)) ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "rxe0 sent_pkts $sent0 -> $(rxe_sent rxe0) when eth0 went down"
	ip link set eth0 down
	down1=$(rxe_sent rxe1)
	wait "$pid" || rc=1
	ip link set eth0 up
	echo "rxe1 sent_pkts $sent1 -> $down1 (eth0 down) -> $(rxe_sent rxe1)"
	echo "TCP OutSegs $segs -> $(tcp_out_segs)"
	"$smcr" linkgroup link-show
	[ "$rc" = 0 ] && [ $(($(rxe_sent rxe1) - down1)) -ge $((size / 8192)) ] &&
		[ $(($(tcp_out_segs) - segs)) -lt 200 ]
}

# rxe1_carried CMD...: runs CMD; passes when it did and rxe1 carried a
# part of the echo.
rxe1_carried() {
	local sent1 rc=0
	sent1=$(rxe_sent rxe1)
	"$@" || rc=1
	echo "rxe1 sent_pkts $sent1 -> $(rxe_sent rxe1)"
	[ "$rc" = 0 ] && [ $(($(rxe_sent rxe1) - sent1)) -ge $((size / 8192)) ]
}

# SMC_TWOLINKS_DOWN: the side whose eth0 goes down.
down_side=${SMC_TWOLINKS_DOWN:-server}
if [ "$side" = "$down_side" ]; then
	failover=down_mid_echo what="its eth0 down mid-echo"
else
	failover=rxe1_carried what="the $down_side's eth0 down mid-echo"
fi
if [ "$side" = server ]; then
	run_test "$mine server, two links: 1 MiB echoed (server side)" \
		timeout 120 smc_echo server -f smc -p "$port" -n 1
	run_test "$mine server: the link group is SYM, links on eth0 and eth1 active (smcr linkgroup link-show)" lgr_sym
	pair_signal sym
	run_test "$mine server, $what: $((size >> 20)) MiB echoed, the rest over rxe1 (server side)" \
		$failover timeout 600 smc_echo server -f smc -p "$port" -n 1
else
	run_test "$mine client, two links -> $other_mod server: 1 MiB echoed intact" \
		timeout 120 smc_echo client -f smc -a "$peer" -p "$port" -s 1048576 -w 90
	run_test "$mine client: the link group is SYM, links on eth0 and eth1 active (smcr linkgroup link-show)" lgr_sym
	pair_await sym 60
	run_test "$mine client, $what -> $other_mod server: $((size >> 20)) MiB echoed intact, the rest over rxe1 (rxe counters)" \
		$failover timeout 600 smc_echo client -f smc -a "$peer" -p "$port" -s "$size" -w 90
fi

pair_signal done
pair_await done 600
run_test "$mine $side: second link taken down again" second_link_down
exit 0
