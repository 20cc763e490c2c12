#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Two links per link group, and failovers that lose nothing: the pair's
# second link (eth1, rxe1: selftests/lib.sh second_link_up) gives each
# side a second RoCE port. After first contact the server adds a second
# link over it (ADD LINK with the rkeys in its v2 extension, CONFIRM LINK
# on the new link): `smcr linkgroup` must show the group SYM on both
# sides, its link-show both links active, one on eth0 and one on eth1.
# Then one side's eth0 goes down in the middle of a checksummed 32 MiB
# echo (64 MiB in make check-long; SMC_TWOLINKS_DOWN: server, the default, or client): the
# connection must move to the link over eth1 and the echo arrive intact.
# Proof from outside the module: rxe1's hardware counters carry the rest
# of the traffic, and TCP sent a handful of segments at most meanwhile
# (the data never fell back). eth0 comes back up: the link over it must
# return (SYM again), and then eth1 goes down under two echoes at once
# (one connection on each link), whose rest rxe0 must carry, and
# (SMC_TWOLINKS_MANY=1) once more under 500 connections, all connected
# first, spread over both links.
# SMC_TWOLINKS_PNET=1: before the first connection, both NICs and both
# RoCE ports get one PNET ID on each side (smc_pnet), so that the devices
# are chosen by PNET ID; everything else runs the same.
# SMC_TWOLINKS_ONLY=1: no NIC failovers, only the phases asked for.
# SMC_TWOLINKS_BURST=1: the server's rxe1 goes (rdma link delete) under
# one held connection, and comes back while the client opens 120 more,
# each with a new RMB (a CONFIRM RKEY flow on each side): the group must
# be SYM again at once (the device's arrival adds the link; its ADD LINK
# runs between the flows and is taken whole when it comes during one),
# every connection SMC-R (no flow's answer lost: no REGBUF decline), and
# the echo intact.
# SMC_TWOLINKS_REMOVE=1: last, the down side's rxe1 is removed (rdma link
# delete) under two 16 MiB echoes, whose rest rxe0 must carry.
# SMC_TWOLINKS_SILENT=1 (smcr_testlink_time 5 s on both sides from the
# start): with two idle connections, one on each link, the down side's
# eth1 silently drops every RoCE packet it receives (XDP, roce_drop.bpf.o): TEST LINK
# must find the link dead and move its connection, whose echo then
# arrives intact over rxe0 while rxe1 received nothing.
#
# make check runs it in every pairing. Between two upstream modules
# (SMC_TWOLINKS_ONCE=1: eth0 once, the server's) it is the bed's
# reference. An upstream server whose client's NIC went down hangs after
# the echoes (its smc_llc_delete_link_work waits for the lost link's
# sends, smc_wr_tx_wait_no_pending_sends, which rxe retries forever),
# under an upstream client as under an smc_rs one: that case is not run
# (Documentation/testing.rst).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=twolinks
port=7460
size=$(scaled 33554432 67108864)
smcr=$SMC_TOP/tools/target/release/smcr
smcss=$SMC_TOP/tools/target/release/smcss
pair_modules
if [ "${SMC_TWOLINKS_SILENT:-0}" = 1 ]; then
	# Read when a link group is made: before the first connection. Not
	# shorter: under the failovers before, a link's peer may be busy for
	# a couple of seconds, and an unanswered TEST LINK there takes the
	# last link down.
	sysctl -qw net.smc.smcr_testlink_time=5 || exit 1
fi

run_test "$mine $side: second link up (eth1 10.10.0.1$SMC_VM, rxe1)" second_link_up
pnet=$SMC_TOP/tools/target/release/smc_pnet
# pnet_both: both NICs and both RoCE ports in one PNET (SMC_PNETID, our
# smc_pnet against either module), before the first connection: the
# group's devices, the first and the other, are then chosen by PNETID.
pnet_both() {
	"$pnet" -a TWOLINKS -I eth0 && "$pnet" -a TWOLINKS -I eth1 &&
		"$pnet" -a TWOLINKS -D rxe0 -P 1 && "$pnet" -a TWOLINKS -D rxe1 -P 1 &&
		"$pnet" -s
}
if [ "${SMC_TWOLINKS_PNET:-0}" = 1 ]; then
	run_test "$mine $side: PNET ID TWOLINKS on eth0, eth1, rxe0 and rxe1 (smc_pnet)" pnet_both
fi
pair_signal up
pair_await up 120

# lgr_sym: the link group SYM within 15 s, both links active, one on
# eth0 and one on eth1.
lgr_sym() {
	local _ show lg
	for _ in $(seq 150); do
		show=$("$smcr" linkgroup link-show 2>/dev/null)
		if echo "$show" | awk '$3 == "SYM" && $5 == "LINK_ACTIVE" { print $4 }' |
			sort -u | tr '\n' ' ' | grep -qx 'eth0 eth1 '; then
			lg=$("$smcr" linkgroup)
			echo "$lg"
			echo "$show"
			# With PNET IDs, the group reports the one its links have
			# (both modules).
			[ "${SMC_TWOLINKS_PNET:-0}" != 1 ] ||
				echo "$lg" | awk 'NR > 1 && $6 != "TWOLINKS" { bad = 1 } END { exit bad }'
			return
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

# down_mid_echo DEV N CMD...: runs the echo CMD of N connections, takes
# this side's DEV (eth0 or eth1) down once a part of the echo went over its
# rxe device, waits for CMD and brings DEV back; passes when CMD did, the
# rest went over the other rxe device and TCP stayed flat (a dozen
# segments a connection for its handshake and close at most).
down_mid_echo() {
	local dev=$1 n=$2 pid rc=0 _ sent0 sent1 segs segs1 down1 gone=rxe0 left=rxe1
	shift 2
	[ "$dev" = eth1 ] && gone=rxe1 left=rxe0
	sent0=$(rxe_sent $gone) sent1=$(rxe_sent $left) segs=$(tcp_out_segs)
	"$@" &
	pid=$!
	for _ in $(seq 3000); do
		[ $(($(rxe_sent $gone) - sent0)) -ge $((size / 8192)) ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "$gone sent_pkts $sent0 -> $(rxe_sent $gone) when $dev went down (${down_by:-ip link})"
	if [ "${down_by:-}" = rdma ]; then
		rdma link delete "$gone" || rc=1
		down1=$(rxe_sent $left)
	else
		# Counted before nic_down's second's wait, not after the NIC went
		# down: by then a fast echo had mostly ended, too little was left
		# to count.
		down1=$(rxe_sent $left)
		nic_down "$dev" || rc=1
	fi
	wait "$pid" || rc=1
	# TCP's count when the echo ended: closing 500 connections whose
	# handshake NIC is the one down queues their FINs and ACKs until it
	# is back, and retries them then.
	segs1=$(tcp_out_segs)
	if [ "${down_by:-}" != rdma ]; then
		nic_up "$dev" || rc=1
		[ "$dev" = eth1 ] && { second_link_route || rc=1; }
	fi
	echo "$left sent_pkts $sent1 -> $down1 ($dev down) -> $(rxe_sent $left)"
	echo "TCP OutSegs $segs -> $segs1 (the echo's end) -> $(tcp_out_segs)"
	"$smcr" linkgroup link-show
	[ "$rc" = 0 ] && [ $(($(rxe_sent $left) - down1)) -ge $((size / 8192)) ] &&
		[ $((segs1 - segs)) -lt $((200 + 12 * n)) ]
}

# carried DEV N CMD...: runs CMD while the peer's DEV goes down; passes
# when CMD did and the other rxe device carried a part of the echo.
carried() {
	local left=rxe1 sent1 rc=0
	[ "$1" = eth1 ] && left=rxe0
	shift 2
	sent1=$(rxe_sent $left)
	"$@" || rc=1
	echo "$left sent_pkts $sent1 -> $(rxe_sent $left)"
	[ "$rc" = 0 ] && [ $(($(rxe_sent $left) - sent1)) -ge $((size / 8192)) ]
}

# SMC_TWOLINKS_DOWN: the side whose NICs go down, or two sides (FIRST,THEN):
# FIRST's eth0, then THEN's eth1 (and what follows). SMC_TWOLINKS_ONCE=1:
# only eth0, once (the reference run between two upstream modules, whose
# failover has bugs beyond that).
down_sides=${SMC_TWOLINKS_DOWN:-server}
down_side=${down_sides%%,*}
# failover DEV N [SIZE]: the echo of N connections (SIZE bytes each) with
# DEV of the down side going down in its middle, on this side.
# down_or_carried DEV: the check this side runs while the down side's DEV
# goes (down_mid_echo there, carried here), into `check`, and its words
# for the test's name, into `how` (both the caller's).
down_or_carried() {
	local what="$1 down"
	[ "${down_by:-}" = rdma ] && what="rxe${1#eth} removed (rdma link delete)"
	if [ "$side" = "$down_side" ]; then
		how="its $what mid-echo" check=down_mid_echo
	else
		how="the $down_side's $what mid-echo" check=carried
	fi
}
failover() {
	local dev=$1 n=$2 how check size=${3:-$size}
	down_or_carried "$dev"
	set -- "$check" "$dev" "$n"
	if [ "$side" = server ]; then
		run_test "$mine server, $how: $n x $((size >> 10)) KiB echoed (server side)" \
			"$@" timeout 600 smc_echo server -f smc -p "$port" -n "$n"
	else
		run_test "$mine client, $how -> $other_mod server: $n x $((size >> 10)) KiB echoed intact, the rest over the other rxe device (rxe counters, TCP flat)" \
			"$@" timeout 600 smc_echo client -f smc -a "$peer" -p "$port" -n "$n" -s "$size" -w 90
	fi
}

if [ "$side" = server ]; then
	run_test "$mine server, two links: 1 MiB echoed (server side)" \
		timeout 120 smc_echo server -f smc -p "$port" -n 1
else
	run_test "$mine client, two links -> $other_mod server: 1 MiB echoed intact" \
		timeout 120 smc_echo client -f smc -a "$peer" -p "$port" -s 1048576 -w 90
fi
run_test "$mine $side: the link group is SYM, links on eth0 and eth1 active (smcr linkgroup link-show)" lgr_sym
pair_signal sym
pair_await sym 60
# SMC_TWOLINKS_ONLY=1: none of the NIC failovers, only the phases asked
# for below.
only=${SMC_TWOLINKS_ONLY:-0}
[ "$only" = 1 ] || failover eth0 1
if [ "${SMC_TWOLINKS_ONCE:-0}" != 1 ] && [ "$only" != 1 ]; then
	# eth0 came back: the link over it returns (the server adds it on its
	# port's return, or on the client's REQ ADD LINK), and then the
	# other NIC goes down under two connections, one on each link.
	run_test "$mine $side: eth0 back, the link returns: SYM again" lgr_sym
	pair_signal back
	pair_await back 60
	down_side=${down_sides##*,}
	failover eth1 2
fi

# silent_link: the echo of two connections that connected and wait while
# the down side's eth1 drops RoCE (XDP) until TEST LINK took the link
# down; passes when the echo was intact, rxe1 received nothing meanwhile,
# rxe0 carried the echo and TCP stayed flat.
pin=/sys/fs/bpf/roce_drop
go=/tmp/twolinks-go
silent_size=8388608
silent_link() {
	local pid rc=0 sent0 segs rcvd1 t0 _ gone=
	sent0=$(rxe_sent rxe0) segs=$(tcp_out_segs)
	if [ "$side" = server ]; then
		timeout 120 smc_echo server -f smc -p "$port" -n 2 &
		pid=$!
		pair_await conns 60 || rc=1
	else
		rm -f "$go"
		timeout 120 smc_echo client -f smc -a "$peer" -p "$port" -n 2 \
			-s "$silent_size" -w 90 -W "$go" >/tmp/twolinks-silent.out &
		pid=$!
		for _ in $(seq 300); do
			[ "$(grep -c connected /tmp/twolinks-silent.out)" = 2 ] && break
			sleep 0.1
		done
		pair_signal conns
	fi
	"$smcr" linkgroup link-show
	if [ "$side" = "$down_side" ]; then
		# One connection on each link of a SYM group, or this proves
		# nothing.
		"$smcr" linkgroup link-show |
			awk '$3 == "SYM" && $5 == "LINK_ACTIVE" && $6 >= 1 { print $4 }' |
			sort -u | tr '\n' ' ' | grep -qx 'eth0 eth1 ' || rc=1
		mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
		bpftool prog load "$SMC_TOP/selftests/bpf/roce_drop.bpf.o" "$pin" type xdp &&
			bpftool net attach xdpgeneric pinned "$pin" dev eth1 || rc=1
		rcvd1=$(cat /sys/class/infiniband/rxe1/ports/1/hw_counters/rcvd_pkts)
		t0=$SECONDS
		# TEST LINK after 5 s of silence, its answer awaited 2 s.
		for _ in $(seq 300); do
			"$smcr" linkgroup link-show | grep -q "SINGLE.*eth0.*LINK_ACTIVE" && gone=1 && break
			sleep 0.1
		done
		echo "link over eth1 gone after $((SECONDS - t0)) s: ${gone:-no}"
		"$smcr" linkgroup link-show
		[ -n "$gone" ] || rc=1
		pair_signal silent
	else
		pair_await silent 60 || rc=1
	fi
	[ "$side" = client ] && touch "$go"
	wait "$pid" || rc=1
	if [ "$side" = "$down_side" ]; then
		echo "rxe1 rcvd_pkts $rcvd1 -> $(cat /sys/class/infiniband/rxe1/ports/1/hw_counters/rcvd_pkts) (blocked)"
		[ "$(cat /sys/class/infiniband/rxe1/ports/1/hw_counters/rcvd_pkts)" = "$rcvd1" ] || rc=1
		bpftool net detach xdpgeneric dev eth1
		rm -f "$pin"
	fi
	echo "rxe0 sent_pkts $sent0 -> $(rxe_sent rxe0)"
	echo "TCP OutSegs $segs -> $(tcp_out_segs)"
	[ "$rc" = 0 ] && [ $(($(rxe_sent rxe0) - sent0)) -ge $((silent_size / 8192)) ] &&
		[ $(($(tcp_out_segs) - segs)) -lt 300 ]
}

if [ "${SMC_TWOLINKS_SILENT:-0}" = 1 ]; then
	run_test "$mine $side: the link group SYM, both links active" lgr_sym
	pair_signal back3
	pair_await back3 60
	run_test "$mine $side, the $down_side's eth1 silent (XDP drops RoCE), TEST LINK moves the idle connections: 2 x 8 MiB echoed intact over rxe0 (rxe counters, TCP flat)" silent_link
fi

# many_echo: the connected clients (smc_echo -W) are let go (the client
# touches the file they wait for, once the down side took its counters);
# waits for smc_echo to end, and
# returns its status (from a file: smc_echo is no child of the caller's
# subshell). Every 15 s meanwhile each side keeps its connections'
# cursors (smcss --debug); when the client's echo failed, both print the
# last of them (a stalled connection's cursors on both sides).
many_go=/tmp/twolinks-many-go
many_rc=/tmp/twolinks-many.rc
many_ss=/tmp/twolinks-many.ss
many_echo() {
	local i=0 rc
	# The down side has its counters: the client lets them go.
	[ "$side" = "$down_side" ] && pair_signal manyarmed
	if [ "$side" = client ]; then
		[ "$side" = "$down_side" ] || pair_await manyarmed 60
		touch "$many_go"
	fi
	rm -f "$many_ss"
	while [ ! -s "$many_rc" ]; do
		sleep 0.2
		i=$((i + 1))
		[ $((i % 75)) = 0 ] && "$smcss" --debug --smcr >"$many_ss" 2>&1
	done
	rc=$(cat "$many_rc")
	if [ "$side" = client ]; then
		[ "$rc" = 0 ] || pair_signal manyfailed
		pair_signal manyended
	else
		pair_await manyended 120
	fi
	if [ -e "$SMC_OUT/$pair_tag-client-manyfailed" ] && [ -s "$many_ss" ]; then
		echo "smcss --debug --smcr, the last snapshot during the echo:"
		cat "$many_ss"
	fi
	return "$rc"
}

# many_conns N: passes when this side has N SMC-R connections in groups
# whose links on eth0 and on eth1 carry a quarter of them at least
# (smcr linkgroup link-show: the connections of each link).
# Otherwise it prints the sockets that are not SMC-R (smcss -a) and the
# link groups once more, two seconds later.
many_conns() {
	"$smcr" linkgroup link-show
	"$smcr" linkgroup link-show | awk -v n="$1" '
		$3 == "SYM" && $5 == "LINK_ACTIVE" { c[$4] += $6; all += $6 }
		END { printf "SMC-R connections: %d (eth0 %d, eth1 %d)\n", all, c["eth0"], c["eth1"]
			exit !(all >= n && c["eth0"] >= n / 4 && c["eth1"] >= n / 4) }' && return 0
	not_smcr -a
	sleep 2
	"$smcr" linkgroup link-show
	return 1
}

# all_smcr N: this side has N connections, all SMC-R (smcss), none on TCP.
all_smcr() {
	"$smcss" | awk -v n="$1" 'NR > 1 { if (/SMCR/) s++; else t++ }
		END { printf "SMC-R %d, other %d\n", s, t; exit !(s == n && t == 0) }' ||
		{ not_smcr; return 1; }
}

# not_smcr [-a]: the sockets smcss [-a] lists that are not SMC-R.
not_smcr() {
	echo "sockets not on SMC-R (smcss $*):"
	"$smcss" "$@" | awk 'NR == 1 || !/SMCR/' | head -n 20
}

# await_connected OUT N RC: waits (3 min at most) until smc_echo -W wrote
# N "connected" lines to OUT, or ended (its status in RC); says how many
# and how long.
await_connected() {
	local began=$SECONDS _
	for _ in $(seq 1800); do
		[ "$(grep -c '^connected$' "$1")" = "$2" ] && break
		[ -s "$3" ] && break
		sleep 0.1
	done
	echo "$(grep -c '^connected$' "$1") connected in $((SECONDS - began)) s"
}

# rxe1_removed: rxe1 deleted, the link group goes on with its eth0 link.
rxe1_removed() {
	local _
	rdma link delete rxe1 || return 1
	for _ in $(seq 100); do
		"$smcr" linkgroup link-show | awk '$4 == "eth0" && $5 == "LINK_ACTIVE" { e0 = 1 } $4 == "eth1" { e1 = 1 }
			END { exit !(e0 && !e1) }' && return 0
		sleep 0.1
	done
	"$smcr" linkgroup link-show
	return 1
}

if [ "${SMC_TWOLINKS_BURST:-0}" = 1 ]; then
	burst_n=120 burst_port=$((port + 2)) burst_size=65536
	burst_rc=/tmp/twolinks-burst.rc burst_out=/tmp/twolinks-burst.out
	if [ "$side" = server ]; then
		rm -f "$burst_rc"
		(timeout 300 smc_echo server -f smc -p "$burst_port" -n $((burst_n + 1)) >"$burst_out" 2>&1
			echo $? >"$burst_rc") &
		pair_signal burstlisten
		pair_await burstheld 120
		run_test "$mine server: rxe1 removed under a held connection, the link group goes on over eth0" rxe1_removed
		pair_signal burstgo
		pair_await bursting 120
		sleep 1
		run_test "$mine server: rxe1 back during the client's burst of $burst_n new connections: SYM again" \
			eval 'rdma link add rxe1 type rxe netdev eth1 && lgr_sym'
		pair_await burstconns 300
		run_test "$mine server: all $((burst_n + 1)) connections SMC-R (smcss), none declined" all_smcr $((burst_n + 1))
		pair_signal burstseen
		for _ in $(seq 1200); do [ -s "$burst_rc" ] && break; sleep 0.1; done
		run_test "$mine server: the $((burst_n + 1)) connections echoed (server side)" \
			eval '[ "$(cat "$burst_rc" 2>/dev/null)" = 0 ] || { cat "$burst_out"; false; }'
	else
		rm -f /tmp/twolinks-held-go /tmp/twolinks-burst-go "$burst_rc"
		pair_await burstlisten 120
		(timeout 300 smc_echo client -f smc -a "$peer" -p "$burst_port" -n 1 -s "$burst_size" -w 250 \
			-W /tmp/twolinks-held-go >/tmp/twolinks-held.out 2>&1; echo $? >>/tmp/twolinks-held.out) &
		for _ in $(seq 600); do grep -q '^connected$' /tmp/twolinks-held.out && break; sleep 0.1; done
		pair_signal burstheld
		pair_await burstgo 120
		(timeout 300 smc_echo client -f smc -a "$peer" -p "$burst_port" -n "$burst_n" -P 16 -s "$burst_size" \
			-w 250 -W /tmp/twolinks-burst-go >"$burst_out" 2>&1; echo $? >"$burst_rc") &
		pair_signal bursting
		await_connected "$burst_out" "$burst_n" "$burst_rc"
		pair_signal burstconns
		run_test "$mine client: all $((burst_n + 1)) connections SMC-R (smcss), none declined" all_smcr $((burst_n + 1))
		pair_await burstseen 300
		touch /tmp/twolinks-held-go /tmp/twolinks-burst-go
		wait
		run_test "$mine client: $((burst_n + 1)) x $((burst_size >> 10)) KiB echoed intact through the link's return" \
			eval '[ "$(cat "$burst_rc")" = 0 ] && [ "$(tail -n 1 /tmp/twolinks-held.out)" = 0 ] ||
				{ grep -v "^connected$" "$burst_out" /tmp/twolinks-held.out; false; }'
	fi
fi

if [ "${SMC_TWOLINKS_MANY:-0}" = 1 ]; then
	# And 500 connections (two link groups: 255 at most each), connected
	# first and spread over both links, through the down side's NIC
	# SMC_TWOLINKS_MANY_DEV (eth1, or eth0: the groups' first links) going
	# down in the middle of their echoes.
	many_dev=${SMC_TWOLINKS_MANY_DEV:-eth1}
	many_left=rxe0
	[ "$many_dev" = eth0 ] && many_left=rxe1
	run_test "$mine $side: the link group SYM, both links active" lgr_sym
	pair_signal back2
	pair_await back2 60
	n=500 many_size=131072
	if [ "$side" = server ]; then
		rm -f "$many_rc"
		(timeout 600 smc_echo server -f smc -p "$port" -n "$n"; echo $? >"$many_rc") &
		pair_await manyconns 300
	else
		rm -f "$many_go" "$many_rc"
		# 16 connects at a time: each new RMB costs a CONFIRM RKEY
		# exchange per side, one at a time in each group, and a burst
		# of 500 queued them past the 20 s a flow waits for its turn on
		# a slow host (REGBUF declines, fallbacks). Bursts of handshakes
		# are smc_rs_smcr.sh's and smc_rs_single.sh's subject.
		(timeout 600 smc_echo client -f smc -a "$peer" -p "$port" -n "$n" -P 16 \
			-s "$many_size" -w 90 -W "$many_go" >/tmp/twolinks-many.out; echo $? >"$many_rc") &
		await_connected /tmp/twolinks-many.out "$n" "$many_rc"
		pair_signal manyconns
	fi
	run_test "$mine $side: $n connections, all SMC-R, spread over both links (smcr linkgroup link-show)" \
		many_conns "$n"
	pair_signal manyseen
	pair_await manyseen 60
	down_or_carried "$many_dev"
	# The total: the NIC goes down once 1/8 of it went over its rxe.
	size=$((n * many_size)) run_test "$mine $side, $how: $n x $((many_size >> 10)) KiB echoed intact, the rest over $many_left (rxe counters, TCP flat)" \
		$check "$many_dev" "$n" many_echo
	[ "$side" = client ] && grep -v '^connected$' /tmp/twolinks-many.out
fi

if [ "${SMC_TWOLINKS_REMOVE:-0}" = 1 ]; then
	# Device removal: the down side's rxe1 goes (rdma link delete) under
	# two echoes, one connection on each link; the rest goes over rxe0.
	run_test "$mine $side: the link group SYM, both links active" lgr_sym
	pair_signal back4
	pair_await back4 60
	down_by=rdma failover eth1 2 16777216
fi

pair_signal done
pair_await done 600
[ "${SMC_TWOLINKS_PNET:-0}" = 1 ] && "$pnet" -f
run_test "$mine $side: second link taken down again" second_link_down
exit 0
