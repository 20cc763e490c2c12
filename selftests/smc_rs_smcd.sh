#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# SMC-D through smc_rs's loopback ISM device, in one VM: two AF_SMC sockets
# of this host exchange their bytes through memory once net.smc.smcd_loopback
# is on. Proven from outside smc_rs: TCP's own segment counters stay flat
# while megabytes move (only the handshakes and closes use TCP). Runs inside
# a VM with smc_rs.ko loaded (see scripts/vm.sh).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
ko=$SMC_TOP/smc_rs.ko

# tcp_segs: TCP segments sent by this host so far (all namespaces share
# nothing here: the test runs in the root namespace only).
tcp_segs() {
	awk '/^Tcp:/ { if (h) { print $12; exit } h = 1 }' /proc/net/snmp
}

loopback_on() { sysctl -q -w net.smc.smcd_loopback=1; }
tools=$SMC_TOP/tools/target/release

# no_groups_left: within 5 s of the last close, every connection is
# finished and its link group gone (smcd linkgroup lists none).
no_groups_left() {
	local _
	for _ in $(seq 50); do
		[ "$("$tools/smcd" linkgroup | grep -c -E '^[0-9a-f]{8} ')" = 0 ] && return 0
		sleep 0.1
	done
	echo "link groups left:"
	"$tools/smcd" linkgroup
	"$tools/smcss" -D
	return 1
}
loopback_off() { sysctl -q -w net.smc.smcd_loopback=0; }

# segs_within MAX CMD...: runs CMD; fails when it fails or TCP sent more
# than MAX segments meanwhile.
segs_within() {
	local max=$1 before after
	shift
	before=$(tcp_segs)
	"$@" || return 1
	after=$(tcp_segs)
	echo "TCP segments sent: $((after - before)) (at most $max)"
	[ $((after - before)) -le "$max" ]
}

t_smcd_echo_sizes() {
	# Each connection: SYN, CLC (proposal, accept, confirm), FIN and their
	# ACKs, about 12 segments; the payload would be thousands.
	local size rc=0
	loopback_on || return 1
	for size in 1 1000 65535 65536 1048576 67108864; do
		echo "== $size bytes"
		segs_within 40 echo_pair smc smc 127.0.0.1 127.0.0.1 7100 "$size" || rc=1
	done
	# The same 64 MiB over TCP take thousands of segments: the bound above
	# can tell SMC-D from TCP.
	loopback_off || return 1
	local before after
	before=$(tcp_segs)
	echo_pair smc smc 127.0.0.1 127.0.0.1 7102 67108864 || rc=1
	after=$(tcp_segs)
	echo "the same 64 MiB with net.smc.smcd_loopback=0: $((after - before)) TCP segments"
	[ $((after - before)) -gt 400 ] || rc=1
	no_groups_left || rc=1
	return $rc
}

t_smcd_concurrent() {
	# 1000 connections at once: four link groups a side (255 each).
	loopback_on || return 1
	segs_within 30000 echo_pair smc smc 127.0.0.1 127.0.0.1 7110 65536 1000 && no_groups_left
}

short_rounds=$(scaled 100 500)
t_smcd_short() {
	local spid rc=0
	loopback_on || return 1
	timeout 900 "$here/smc_echo" server -f smc -b 127.0.0.1 -p 7111 -n $((20 * short_rounds)) &
	spid=$!
	timeout 900 "$here/smc_echo" client -f smc -a 127.0.0.1 -p 7111 -s 256 -n 20 -r "$short_rounds" || rc=1
	wait "$spid" || rc=1
	no_groups_left || rc=1
	return $rc
}

t_smcd_semantics() {
	# The differential probe: every observation over SMC-D as over TCP.
	local dir
	loopback_on || return 1
	dir=$(mktemp -d)
	"$here/smc_semantics" -f inet -p 7400 >"$dir/tcp.txt" &&
		"$here/smc_semantics" -f smc -p 7500 >"$dir/smc.txt" || return 1
	diff -u "$dir/tcp.txt" "$dir/smc.txt" && no_groups_left
}

t_smcd_ipv6() {
	# SMC-D is not bound to IPv4 as SMC-Rv2 is.
	loopback_on || return 1
	segs_within 40 echo_pair smc6 smc6 ::1 ::1 7120 1048576 && no_groups_left
}

t_smcd_operators() {
	# While two connections are idle: smcss -D lists four SMC-D sockets
	# with their DMB tokens, smcd linkgroup a client and a server group
	# of two connections each, smc_diag's mode is SMCD, and smcd stats
	# counts the connections and the bytes once they are done.
	local dir spid cpid rc=0
	loopback_on || return 1
	dir=$(mktemp -d)
	"$tools/smcd" stats reset >/dev/null
	timeout 120 "$here/smc_echo" server -f smc -b 127.0.0.1 -p 7130 -n 2 &
	spid=$!
	timeout 120 "$here/smc_echo" client -f smc -a 127.0.0.1 -p 7130 -s 100000 -n 2 \
		-W "$dir/go" >"$dir/client.out" &
	cpid=$!
	for _ in $(seq 100); do
		[ "$(grep -c connected "$dir/client.out")" = 2 ] && break
		sleep 0.1
	done
	"$tools/smcss" -D | tee "$dir/smcss.txt"
	"$tools/smcd" linkgroup | tee "$dir/lgr.txt"
	"$tools/smcd" linkgroup show all | tee "$dir/lgr-all.txt"
	[ "$(grep -c ' SMCD ' "$dir/smcss.txt")" = 4 ] || { echo "not 4 SMCD sockets"; rc=1; }
	# A client and a server group (one id: the client's names the
	# server's), two connections each.
	[ "$(grep -c -E '^[0-9a-f]{8} +0 +2 ' "$dir/lgr.txt")" = 2 ] || { echo "not 2 link groups of 2"; rc=1; }
	touch "$dir/go"
	wait "$cpid" || rc=1
	wait "$spid" || rc=1
	"$tools/smcd" stats | tee "$dir/stats.txt"
	grep -qE '^  SMC connections +4$' "$dir/stats.txt" || rc=1
	grep -qE '^  Data transmitted \(Bytes\) +400016 ' "$dir/stats.txt" || rc=1
	no_groups_left || rc=1
	return $rc
}

t_smcd_rmmod() {
	# Everything made for SMC-D goes with the last socket: the module
	# unloads, and loads again.
	loopback_off
	sleep 1
	rmmod smc_rs && insmod "$ko"
}

run_test "SMC-D loopback: echoes of 1 B to 64 MiB intact, TCP segments flat (64 MiB over TCP: hundreds)" t_smcd_echo_sizes
run_test "SMC-D loopback: 1000 concurrent connections x 64 KiB" t_smcd_concurrent
run_test "SMC-D loopback: $((20 * short_rounds)) short connections (20 threads x $short_rounds)" t_smcd_short
run_test "SMC-D loopback: same socket semantics as TCP (AF_SMC vs AF_INET)" t_smcd_semantics
run_test "SMC-D loopback over IPv6: 1 MiB intact, TCP segments flat" t_smcd_ipv6
run_test "SMC-D loopback: smcss -D, smcd linkgroup and smcd stats show the connections" t_smcd_operators
run_test "SMC-D loopback: rmmod after, insmod again" t_smcd_rmmod
