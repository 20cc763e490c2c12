#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Two-VM tests: VM 1 runs smc_rs, VM 2 upstream smc.ko (with a UEID and an
# rxe device on each side). Each VM runs this script; servers and clients
# pair up by port, clients retry until the other side listens.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
peer6=fd00::$((3 - SMC_VM))
size=8388608

# step PORT SERVER_VM SERVER_FAMILY CLIENT_FAMILY NAME [PEER]
step() {
	local port=$1 server_vm=$2 sfam=$3 cfam=$4 name=$5 addr=${6:-$peer}
	if [ "$SMC_VM" = "$server_vm" ]; then
		run_test "$name (server side)" \
			timeout 180 smc_echo server -f "$sfam" -p "$port" -n 1
	else
		run_test "$name" \
			timeout 180 smc_echo client -f "$cfam" -a "$addr" -p "$port" -s "$size" -w 90
	fi
}

step 7101 1 smc smc "smc_rs server <- upstream AF_SMC client, 8 MiB"
step 7102 2 smc smc "upstream server <- smc_rs AF_SMC client, 8 MiB"
step 7103 1 smc inet "smc_rs server <- plain TCP client, 8 MiB"
step 7104 2 inet smc "plain TCP server <- smc_rs client, 8 MiB"
step 7105 1 smc6 smc6 "smc_rs AF_SMC6 server <- upstream AF_SMC6 client" "$peer6"
step 7111 1 ipproto-smc ipproto-smc "smc_rs AF_INET/IPPROTO_SMC server <- upstream IPPROTO_SMC client"
step 7112 2 smc ipproto-smc "upstream server <- smc_rs AF_INET/IPPROTO_SMC client"
step 7113 2 ipproto-smc6 ipproto-smc6 "upstream IPPROTO_SMC server <- smc_rs AF_INET6/IPPROTO_SMC client" "$peer6"
if [ "$SMC_VM" = 2 ]; then
	run_test "upstream server <- smc_rs non-blocking connects (server side)" \
		timeout 180 smc_echo server -f smc -p 7108 -n 8
else
	run_test "upstream server <- smc_rs non-blocking connects: CLC in the work item, 8 x 1 MiB" \
		timeout 180 smc_echo client -f smc -a "$peer" -p 7108 -s 1048576 -n 8 -N -w 90
fi

# A plain TCP server whose SYN-ACKs carry the SMC option (a BPF sock_ops
# program adds it) and which echoes whatever it gets: the smc_rs client's
# connect() must notice that the peer does not speak CLC, connect again
# without the option and succeed; the next connection skips SMC at once.
# The server sees the dropped first attempt as a third connection.
echo_option_peer() {
	smc_option on smc_option_on_synack || return 1
	timeout 120 smc_echo server -f inet -p 7106 -n 3
	local rc=$?
	smc_option off smc_option_on_synack
	return $rc
}

# Hostile CLC peers: the option on the SYN-ACK, then a crafted answer to the
# proposal. Each mode gets its own address on VM 2, since smc_rs remembers
# peers that failed CLC. The smc_rs client must fall back (a valid decline)
# or reconnect without the option (anything else), with data intact and no
# kernel splat. A reconnect costs the server one extra connection.
hostile_modes="garbage truncated oversized badversion badlength decline syncdecline"

hostile_peers() {
	local i=20 mode pids=() rc=0 n
	smc_option on smc_option_on_synack || return 1
	for mode in $hostile_modes; do
		i=$((i + 1))
		n=2
		case "$mode" in decline | syncdecline) n=1 ;; esac
		ip addr add "10.10.0.$i/24" dev eth0
		timeout 120 smc_echo server -f inet -b "10.10.0.$i" -p 7107 -n "$n" -x "$mode" &
		pids+=($!)
	done
	# A decline after 1.5 s, for the client's SO_RCVTIMEO and poll probes.
	ip addr add "10.10.0.$slow/24" dev eth0
	timeout 120 smc_echo server -f inet -b "10.10.0.$slow" -p 7107 -n 2 -x slowdecline &
	pids+=($!)
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	smc_option off smc_option_on_synack
	# Later scripts in this boot see only the bed's own address.
	for i in $(seq 21 "$slow"); do ip addr del "10.10.0.$i/24" dev eth0; done
	return $rc
}
slow=28

if [ "$SMC_VM" = 2 ]; then
	run_test "TCP server echoing the SMC option without CLC (server side)" echo_option_peer
	run_test "hostile CLC peers: $hostile_modes (server side)" hostile_peers
else
	# Only a client with something to propose offers SMC at all: a UEID
	# (one VM 2 does not have, so nothing else turns into SMC-R) with rxe0.
	run_test "UEID on VM 1: the smc_rs client offers SMC" \
		"$here/tools/smc_ueid" add SMC-RS-OPTION-TEST
	run_test "smc_rs client <- TCP server echoing the SMC option without CLC: reconnects" \
		timeout 120 smc_echo client -f smc -a "$peer" -p 7106 -s 1048576 -w 90
	# Were SMC offered again, the dropped attempt would use up the server's
	# last accept and this connection would be refused.
	run_test "smc_rs client <- same server again: SMC skipped" \
		timeout 120 smc_echo client -f smc -a "$peer" -p 7106 -s 1048576 -w 10
	i=20
	for mode in $hostile_modes; do
		i=$((i + 1))
		# Half the modes connect non-blocking: the work item must cope too.
		nb=
		case "$mode" in truncated | badversion | decline) nb=-N ;; esac
		run_test "smc_rs client${nb:+ (non-blocking)} <- hostile CLC answer '$mode': falls back, data intact" \
			timeout 60 smc_echo client -f smc -a "10.10.0.$i" -p 7107 -s 262144 -w 40 $nb
	done
	run_test "smc_rs client (non-blocking) <- decline after 1.5 s: SO_RCVTIMEO set during the CLC exchange holds after the fallback, data intact" \
		timeout 30 python3 "$here/smc_rcvtimeo_probe.py" "10.10.0.$slow" 7107
	run_test "smc_rs client: poll() from another thread returns at once while a blocking connect holds the socket in its CLC exchange (decline after 1.5 s)" \
		timeout 30 python3 "$here/smc_poll_probe.py" "10.10.0.$slow" 7107
	run_test "UEID on VM 1 removed" "$here/tools/smc_ueid" del SMC-RS-OPTION-TEST
fi

# Clients whose SYNs carry the SMC option (a BPF sock_ops program adds it to
# plain TCP sockets on VM 2) and which then send no CLC, late CLC, broken CLC
# or a decline, against the smc_rs listener on VM 1. The listener peeks
# before it reads: bytes that are not CLC stay the application's. Broken
# CLC it can resynchronise on gets a decline and TCP; the rest is dropped
# before the application sees it. A silent client must not hold up others.
# The server accepts exactly the six connections that must reach it.
# opening_client OPENING [WAIT [PORT]]
opening_client() {
	timeout 60 smc_echo client -f inet -a "$peer" -p "${3:-7110}" -s 262144 -w "${2:-30}" -X "$1"
}

silent_client_does_not_block() {
	local pid rc=0
	opening_client late &
	pid=$!
	sleep 1
	# Well within the 8 s the silent client holds its handshake.
	timeout 5 smc_echo client -f inet -a "$peer" -p 7110 -s 262144 -w 5 || rc=1
	wait "$pid" || rc=1
	return $rc
}

if [ "$SMC_VM" = 1 ]; then
	run_test "smc_rs listener <- clients with the SMC option and no, late or broken CLC (server side)" \
		timeout 180 smc_echo server -f smc -p 7110 -n 6
else
	run_test "SMC option on VM 2's SYNs (BPF sock_ops)" smc_option on smc_option_on_syn
	run_test "smc_rs listener <- SMC option, then no CLC: data intact" opening_client plain 90
	run_test "smc_rs listener <- SMC option, silent for 8 s: falls back after the CLC wait; another client meanwhile" \
		silent_client_does_not_block
	run_test "smc_rs listener <- SMC option, a decline instead of a proposal: falls back" \
		opening_client decline
	run_test "smc_rs listener <- proposal with a bad length: SYNCERR decline, falls back" \
		opening_client badlength
	for mode in truncated oversized badversion; do
		run_test "smc_rs listener <- $mode proposal: connection dropped" opening_client "$mode"
	done
	run_test "SMC option off again" smc_option off smc_option_on_syn
	run_test "smc_rs listener still serves an upstream AF_SMC client" \
		timeout 60 smc_echo client -f smc -a "$peer" -p 7110 -s 1048576 -w 30
fi

# Silent clients cost no threads: 200 connections whose SYNs carry the SMC
# option and which then send nothing. The listener waits for their
# proposals without a kernel worker each (the old handshake job slept in
# its read, one worker per client); upstream parks one each too.
if [ "$SMC_VM" = 1 ]; then
	run_test "smc_rs listener <- 200 silent clients with the SMC option: no worker per pending handshake (server side)" \
		timeout 200 python3 "$here/smc_silent_clients.py" server 7116
else
	run_test "SMC option on VM 2's SYNs (silent clients)" smc_option on smc_option_on_syn
	run_test "200 silent clients with the SMC option, held 10 s" \
		timeout 200 python3 "$here/smc_silent_clients.py" client "$peer" 7116 200
	run_test "SMC option off (silent clients)" smc_option off smc_option_on_syn
fi

# SMC_LIMIT_HS on the smc_rs listener, backlog 2: while one client's
# handshake is pending (it stays silent), the next client's SYN must be
# answered without the SMC option, so its proposal reaches the echo server
# as plain data instead of being answered in CLC.
limit_hs_clients() {
	local pid rc=0
	# Alone, a client's proposal is answered (and the option is on).
	opening_client badlength 90 7114 || return 1
	opening_client late 30 7114 &
	pid=$!
	sleep 2
	timeout 20 smc_echo client -f inet -a "$peer" -p 7114 -s 65536 -w 10 -X unanswered || rc=1
	wait "$pid" || rc=1
	return $rc
}

if [ "$SMC_VM" = 1 ]; then
	run_test "smc_rs listener with SMC_LIMIT_HS and backlog 2 (server side)" \
		timeout 180 smc_echo server -f smc -p 7114 -n 3 -B 2 -L
else
	run_test "SMC option on VM 2's SYNs again" smc_option on smc_option_on_syn
	run_test "SMC_LIMIT_HS: a SYN arriving while a handshake is pending gets no SMC option" \
		limit_hs_clients
	run_test "SMC option off" smc_option off smc_option_on_syn
fi
