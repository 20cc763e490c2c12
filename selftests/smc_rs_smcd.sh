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

# SMC-D needs a UEID both sides share off s390 (the system EID is
# disabled there), as upstream's loopback device does.
loopback_on() {
	"$here/tools/smc_ueid" add SMC-RS-TESTBED 2>/dev/null
	sysctl -q -w net.smc.smcd_loopback=1
}
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

# segs_run CMD...: runs CMD; its TCP segments (sent by the host meanwhile)
# in $segs.
segs_run() {
	local before rc=0
	before=$(tcp_segs)
	"$@" || rc=1
	segs=$(($(tcp_segs) - before))
	echo "TCP segments sent: $segs"
	return $rc
}

# segs_within MAX CMD...: CMD succeeds and TCP sent at most MAX segments
# meanwhile (the bytes did not go over TCP).
segs_within() {
	local max=$1
	shift
	segs_run "$@" && [ "$segs" -le "$max" ]
}

# segs_over MIN CMD...: CMD succeeds and TCP sent more than MIN segments
# meanwhile (the bytes went over TCP).
segs_over() {
	local min=$1
	shift
	segs_run "$@" && [ "$segs" -gt "$min" ]
}

# hold_two PORT DIR: two echo connections of 100000 bytes each, connected
# and idle until release_two DIR (the pids in hold_pids).
hold_two() {
	local port=$1 dir=$2
	rm -f "$dir/go"
	timeout 120 "$here/smc_echo" server -f smc -b 127.0.0.1 -p "$port" -n 2 >/dev/null &
	hold_pids=$!
	timeout 120 "$here/smc_echo" client -f smc -a 127.0.0.1 -p "$port" -s 100000 -n 2 \
		-W "$dir/go" >"$dir/client.out" &
	hold_pids="$hold_pids $!"
	for _ in $(seq 100); do
		[ "$(grep -c connected "$dir/client.out")" = 2 ] && return 0
		sleep 0.1
	done
	return 1
}

# release_two DIR: the held echoes go on; fails when one of them failed.
release_two() {
	local p rc=0
	touch "$1/go"
	for p in $hold_pids; do wait "$p" || rc=1; done
	return $rc
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
	echo "== 64 MiB with net.smc.smcd_loopback=0"
	segs_over 400 echo_pair smc smc 127.0.0.1 127.0.0.1 7102 67108864 || rc=1
	no_groups_left || rc=1
	return $rc
}

t_smcd_concurrent() {
	# 1000 connections at once: 2000 ends, in one link group.
	loopback_on || return 1
	segs_within 30000 echo_pair smc smc 127.0.0.1 127.0.0.1 7110 65536 1000 && no_groups_left
}

short_rounds=$(scaled 500 2500)
t_smcd_short() {
	# Connections that follow ended ones get their DMBs' memory back from
	# the pool (smcd -d stats: RX buffer reuses), zeroed, and every echo
	# stays intact.
	local spid reused rc=0
	loopback_on || return 1
	"$tools/smcd" stats reset >/dev/null
	timeout 900 "$here/smc_echo" server -f smc -b 127.0.0.1 -p 7111 -n $((20 * short_rounds)) &
	spid=$!
	timeout 900 "$here/smc_echo" client -f smc -a 127.0.0.1 -p 7111 -s 256 -n 20 -r "$short_rounds" || rc=1
	wait "$spid" || rc=1
	no_groups_left || rc=1
	reused=$("$tools/smcd" -d stats | awk '/Buffer reuses/ { print $3; exit }')
	echo "RX buffer reuses: ${reused:-none}"
	[ "${reused:-0}" -gt 0 ] || rc=1
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

t_smcd_listener_close() {
	# Listeners close while hundreds of SMC-D handshakes are in flight or
	# finished and queued: each connection's ends go (a handshake that
	# finishes after the close is aborted too, not left in its group).
	local r
	loopback_on || return 1
	for r in 1 2 3 4 5; do
		"$here/smc_echo" churn -f smc -p $((7160 + r)) -n 200 || return 1
	done
	no_groups_left
}

# smcd_conns: SMC-D connections smc_rs counted (both sides), from smcd stats.
smcd_conns() {
	"$tools/smcd" stats | awk '/^  SMC connections / { print $3; exit }'
}

t_smcd_smc_run() {
	# Unmodified programs under smc_run talk SMC-D on this host: Redis
	# (preload library) with redis-benchmark, and the static busybox httpd
	# (it serves files with sendfile) and wget (--bpf: the preload cannot
	# reach a static binary) moving 16 MiB, checksum compared. Proven from
	# outside smc_rs: TCP sends a handful of segments per connection
	# meanwhile (over TCP the benchmark alone takes thousands, the download
	# hundreds).
	local smc_run=$SMC_TOP/tools/target/release/smc_run busybox www pid sum c0 rc=0
	loopback_on || return 1
	busybox=$(command -v busybox) || { echo "no busybox"; return 1; }
	www=$(mktemp -d)
	head -c 16777216 /dev/urandom >"$www/blob"
	c0=$(smcd_conns)
	if command -v redis-server >/dev/null; then
		"$smc_run" redis-server --port 7170 --bind 127.0.0.1 --save "" --appendonly no \
			--dir "$www" --logfile "$www/redis.log" &
		pid=$!
		for _ in $(seq 100); do
			[ "$(redis-cli -p 7170 ping 2>/dev/null)" = PONG ] && break
			sleep 0.1
		done
		segs_within 400 "$smc_run" redis-benchmark -p 7170 -t set,get -n 2000 -c 10 -q \
			>"$www/bench.txt" || rc=1
		tr '\r' '\n' <"$www/bench.txt" | grep -v 'rps='
		# The benchmark's SETs stored its 3-byte value.
		[ "$("$smc_run" redis-cli -p 7170 strlen key:__rand_int__)" = 3 ] || rc=1
		kill "$pid"
		wait "$pid"
	else
		echo "no redis-server: Redis left out"
	fi
	"$smc_run" --bpf "$busybox" httpd -f -p 127.0.0.1:7171 -h "$www" &
	pid=$!
	sleep 1
	segs_within 40 "$smc_run" --bpf "$busybox" wget -q -O "$www/got" http://127.0.0.1:7171/blob || rc=1
	sum=$(md5sum <"$www/got" | cut -d' ' -f1)
	echo "wget: md5 $sum, httpd's $(md5sum <"$www/blob" | cut -d' ' -f1)"
	[ "$sum" = "$(md5sum <"$www/blob" | cut -d' ' -f1)" ] || rc=1
	kill "$pid"
	wait "$pid"
	echo "SMC-D connections counted: +$(($(smcd_conns) - c0))"
	[ $(($(smcd_conns) - c0)) -ge 12 ] || rc=1
	rm -rf "$www"
	no_groups_left || rc=1
	return $rc
}

t_smcd_ipv6() {
	# SMC-D is not bound to IPv4 as SMC-Rv2 is.
	loopback_on || return 1
	segs_within 40 echo_pair smc6 smc6 ::1 ::1 7120 1048576 && no_groups_left
}

t_smcd_operators() {
	# While two connections are idle: smcss -D lists four SMC-D sockets
	# with their DMB tokens, smcd linkgroup one group of four connection
	# ends, smc_diag's mode is SMCD, and smcd stats counts the connections
	# and the bytes once they are done.
	local dir rc=0
	loopback_on || return 1
	dir=$(mktemp -d)
	"$tools/smcd" stats reset >/dev/null
	hold_two 7130 "$dir" || rc=1
	"$tools/smcss" -D | tee "$dir/smcss.txt"
	"$tools/smcd" linkgroup | tee "$dir/lgr.txt"
	"$tools/smcd" linkgroup show all | tee "$dir/lgr-all.txt"
	[ "$(grep -c ' SMCD ' "$dir/smcss.txt")" = 4 ] || { echo "not 4 SMCD sockets"; rc=1; }
	# One group holds both ends of both connections (as upstream's: the
	# peer's GID is our own).
	[ "$(grep -c -E '^[0-9a-f]{8} +0 +4 ' "$dir/lgr.txt")" = 1 ] || { echo "not 1 link group of 4"; rc=1; }
	release_two "$dir" || rc=1
	"$tools/smcd" stats | tee "$dir/stats.txt"
	grep -qE '^  SMC connections +4$' "$dir/stats.txt" || rc=1
	grep -qE '^  Data transmitted \(Bytes\) +400016 ' "$dir/stats.txt" || rc=1
	no_groups_left || rc=1
	return $rc
}

t_smcd_needs_ueid() {
	# Without a UEID nothing matches (no system EID off s390): the client
	# offers nothing, and the connection falls back at once with NOSMCDEV.
	local rc=0
	loopback_on || return 1
	"$here/tools/smc_ueid" flush
	segs_over 40 echo_pair smc smc 127.0.0.1 127.0.0.1 7141 1048576 || rc=1
	"$here/tools/smc_ueid" add SMC-RS-TESTBED
	return $rc
}

# smcd_view MODULE DIR: with MODULE loaded and SMC-D possible, what
# smcss -D, smcd linkgroup and smcd stats print while two connections are
# idle and after they ended, with tokens, GIDs, ids, inodes and ports
# replaced by placeholders; then smcd info, and smc_chk's live test
# (which names the mode it got) and static analysis.
smcd_view() {
	local mod=$1 dir=$2 rc=0
	"$here/tools/smc_ueid" add SMC-RS-TESTBED 2>/dev/null
	[ "$mod" = upstream ] || sysctl -q -w net.smc.smcd_loopback=1
	"$tools/smcd" stats reset >/dev/null
	hold_two 7150 "$dir" || rc=1
	{
		"$tools/smcss" -D | smcd_norm | sort
		"$tools/smcss" -a | sed 's/ *$//' | smcd_norm | sort
		"$tools/smcd" linkgroup
		"$tools/smcd" -d linkgroup
		"$tools/smcd" device
	} | smcd_norm |
		# Upstream's groups without connections linger ten minutes.
		grep -vE '^L +0 +0 *$'
	release_two "$dir" || rc=1
	# What depends on how reads and writes interleaved (requests, a
	# buffer found full, the shares of requests, an echo's write larger
	# than the buffer when its read found more) differs from run to run
	# on either module.
	"$tools/smcd" stats | grep -vE 'Buffer full|Buffer too small|Total requests|Reqs|Avg requests' |
		sed -E 's/ \([0-9.]+%\)$//'
	"$tools/smcd" info
	# smc_chk's live test against its own server, and its static look.
	timeout 60 "$tools/smc_chk" -S -p 7152 >/dev/null 2>&1 &
	local chk=$!
	sleep 2
	timeout 60 "$tools/smc_chk" -C 127.0.0.1 -p 7152 || rc=1
	timeout 60 "$tools/smc_chk" -s || rc=1
	kill "$chk" 2>/dev/null
	wait "$chk" 2>/dev/null
	return $rc
}

# smcd_norm: tokens, GIDs, link group ids, inodes and ports as placeholders.
smcd_norm() {
	sed -E 's/[0-9a-f]{16}/G/g; s/^([A-Z]+ +[0-9]+ +)[0-9]+/\1I/; s/:[0-9]{4,5}/:P/g; s/^[0-9a-f]{8} /L /; s/ [0-9a-f]{8} *$/ L/'
}

t_smcd_as_upstream() {
	# The same two connections over upstream smc.ko's loopback-ism: the
	# same TCP segment bound, and our tools print the same for both.
	local dir rc=0
	dir=$(mktemp -d)
	smcd_view smc_rs "$dir" >"$dir/smc_rs.txt" || rc=1
	rmmod smc_rs && modprobe smc || return 1
	"$here/tools/smc_ueid" add SMC-RS-TESTBED
	segs_within 40 echo_pair smc smc 127.0.0.1 127.0.0.1 7151 1048576 || rc=1
	smcd_view upstream "$dir" >"$dir/upstream.txt" || rc=1
	"$here/tools/smc_ueid" flush
	modprobe -r smc_diag
	rmmod smc; insmod "$ko" || return 1
	cat "$dir/smc_rs.txt"
	grep -q 'Success, using SMC-D' "$dir/smc_rs.txt" || rc=1
	diff -u "$dir/upstream.txt" "$dir/smc_rs.txt" || rc=1
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
run_test "SMC-D loopback: listeners closed under 5 x 200 handshakes, no connection left" t_smcd_listener_close
run_test "SMC-D loopback under smc_run: Redis (preload) and static busybox httpd (sendfile) to wget (--bpf, 16 MiB intact), TCP segments flat" t_smcd_smc_run
run_test "SMC-D loopback over IPv6: 1 MiB intact, TCP segments flat" t_smcd_ipv6
run_test "SMC-D loopback: smcss -D, smcd linkgroup and smcd stats show the connections" t_smcd_operators
run_test "SMC-D loopback needs a UEID (no system EID off s390): none, no SMC-D" t_smcd_needs_ueid
run_test "SMC-D loopback: upstream's loopback-ism as flat; smcss -D, smcd linkgroup/stats/info and smc_chk print the same for both" t_smcd_as_upstream
run_test "SMC-D loopback: rmmod after, insmod again" t_smcd_rmmod
