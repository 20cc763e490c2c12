#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# SMC-Rv2 for IPv6 sockets that connect to an IPv4-mapped address
# (::ffff: and the server's IPv4 address): the TCP connection is IPv4 on the wire, and smc_rs's
# client takes the IPv4 route and the IPv4-mapped RoCE GID for it, as for an
# IPv4 socket. One VM serves (smc_rs or upstream smc.ko, an IPv4 AF_SMC
# listener; with smc_rs also an IPv6 one, which takes the IPv4 connection
# as IPv4-mapped), the other connects with smc_rs (upstream 6.12's client falls
# back to TCP for such sockets: both sides skip then):
#
# - AF_SMC/SMCPROTO_SMC6, one connection held open while smcss -R on each
#   side shows it as SMC-R, then echoed;
# - AF_SMC/SMCPROTO_SMC6, 8 MiB echoed byte for byte;
# - AF_INET6/IPPROTO_SMC, 1 MiB echoed;
# - with an smc_rs server, AF_SMC/SMCPROTO_SMC6 to its IPv6 listener.
#
# SMC-R is proven from outside the client: the server's statistics
# (upstream's own, or ours read by the same tool) count SMC-Rv2 connections
# and no fallback, rxe's counters carry the payload both ways.
#
# Runs after other scripts in the same VM boot, which may unload smc_rs
# and remove rxe0: both come back here.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

smcss=$SMC_TOP/tools/target/release/smcss
counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
pair_tag=v4mapped
port=7601
port6=7602
mapped=::ffff:$server_addr
client_addr=10.10.0.$((3 - SMC_SERVER_VM))
pair_modules
[ "$side" = server ] && server_mod=$mine client_mod=$other_mod || server_mod=$other_mod client_mod=$mine
echo "$side: $mine, the $other: $other_mod"

if [ "$client_mod" != smc_rs ]; then
	skip_test "IPv4-mapped IPv6 client over SMC-Rv2 ($side side)" "the client is upstream 6.12's"
	exit 0
fi

# The held connection and the echoes on port; one more on port6 (smc_rs
# server only).
conns=3
conns6=0
[ "$server_mod" = smc_rs ] && conns6=1
total=$((4096 + 8388608 + 1048576 + 3 * 8 + conns6 * (1048576 + 8)))

before_smcr

# smcss_row PATTERN: smcss -R lists an ACTIVE SMC-R connection whose
# remote address matches PATTERN (an extended regex, port included).
smcss_row() {
	local row
	"$smcss" -R
	row=$("$smcss" -R | awk -v p="^($1)\$" '$1 == "ACTIVE" && $5 ~ p' | head -1)
	echo "row: $row"
	[ -n "$row" ] && echo "$row" | awk '{ exit !($7 == "SMCR") }'
}

if [ "$side" = server ]; then
	timeout 600 smc_echo server -f smc -p "$port" -n "$conns" >>"$LOG_FILE" 2>&1 &
	spid=$!
	if [ "$conns6" = 1 ]; then
		timeout 600 smc_echo server -f smc6 -p "$port6" -n "$conns6" >>"$LOG_FILE" 2>&1 &
		spid6=$!
	fi
	sleep 1
	pair_signal listen
	if pair_await held; then
		run_test "$mine server: smcss -R shows the IPv6 client's held connection as SMC-R" \
			smcss_row "(::ffff:)?${client_addr//./\\.}:[0-9]+"
	else
		run_test "$mine server: the client held a connection" false
	fi
	pair_signal viewed
	run_test "$mine server: $conns IPv4-mapped clients echoed (IPv4 listener)" wait "$spid"
	[ "$conns6" = 1 ] &&
		run_test "$mine server: an IPv4-mapped client echoed on the IPv6 listener" wait "$spid6"
else
	pair_await listen
	held() {
		local holder rc=0
		python3 "$SMC_TOP/selftests/smcr_hold.py" "$mapped" "$port" "$SMC_OUT/v4mapped-ready" \
			"$SMC_OUT/v4mapped-go" &
		holder=$!
		for _ in $(seq 1500); do
			[ -e "$SMC_OUT/v4mapped-ready" ] && break
			kill -0 "$holder" 2>/dev/null || break
			sleep 0.2
		done
		smcss_row "(::ffff:)?${server_addr//./\\.}:$port" || rc=1
		pair_signal held
		pair_await viewed || rc=1
		touch "$SMC_OUT/v4mapped-go"
		wait "$holder" || rc=1
		return $rc
	}
	run_test "smc_rs client: AF_SMC/SMCPROTO_SMC6 to $mapped held as SMC-R (smcss -R), then echoed" held
	run_test "smc_rs client: AF_SMC/SMCPROTO_SMC6 to $mapped -> $server_mod server, 8 MiB echoed" \
		timeout 300 smc_echo client -f smc6 -a "$mapped" -p "$port" -s 8388608 -w 90
	run_test "smc_rs client: AF_INET6/IPPROTO_SMC to $mapped -> $server_mod server, 1 MiB echoed" \
		timeout 300 smc_echo client -f ipproto-smc6 -a "$mapped" -p "$port" -s 1048576 -w 90
	[ "$conns6" = 1 ] &&
		run_test "smc_rs client: AF_SMC/SMCPROTO_SMC6 to $mapped -> smc_rs IPv6 listener, 1 MiB echoed" \
			timeout 300 smc_echo client -f smc6 -a "$mapped" -p "$port6" -s 1048576 -w 90
fi

# The statistics count every connection as SMC-Rv2 and none fell back.
run_test "$mine $side: statistics count the $((conns + conns6)) IPv4-mapped connections as SMC-Rv2, no fallback" \
	smcr_stats_moved $((conns + conns6))
run_test "$mine $side: rxe carried the IPv4-mapped connections' payload both ways" rxe_moved "$total"

pair_signal done
pair_await done >/dev/null 2>&1
[ "$mine" = smc_rs ] && run_test "smc_rs unloads after the IPv4-mapped runs ($side side)" rmmod smc_rs
exit 0
