#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# RoCE blocked towards the client, as a firewall that passes TCP and not
# RoCE would: an XDP program on the client's link drops RoCEv2. The CLC
# handshake succeeds, the first link of the new link group cannot be
# confirmed, and both sides fall back to TCP. Each application must get
# its peer's bytes and nothing else: the side that gives up second takes
# the first one's Decline from the stream and sends none (as upstream), so
# no Decline lands in either application's data. smc_echo checks the echo
# byte for byte; the client's rxe proves the block (no RoCE packet came in)
# and both modules' statistics count the fallbacks. An smc_rs client then
# loses its RDMA device while a third handshake waits for its link: the
# removal must wait for that link group (its queue pair and memory are on
# the device) and return, and the connection falls back intact. Runs in a
# pair round with either module on either side, after a script that may
# have unloaded smc_rs.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=roceblk
pair_modules
counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
port=7420
[ "$side" = client ] && client_mod=$mine || client_mod=$other_mod
conns=2
[ "$client_mod" = smc_rs ] && conns=3
pin=/sys/fs/bpf/roce_drop

block() {
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || return 1
	bpftool prog load "$SMC_TOP/selftests/bpf/roce_drop.bpf.o" "$pin" type xdp &&
		bpftool net attach xdpgeneric pinned "$pin" dev eth0 &&
		bpftool net show dev eth0 || return 1
	# From here on rxe must receive nothing.
	rcvd=$(cat "$counters/rcvd_pkts")
}

unblock() {
	bpftool net detach xdpgeneric dev eth0
	rm -f "$pin"
	! bpftool net show dev eth0 | grep -q roce_drop
}

# fallbacks_rose BEFORE: `smcr -d stats` counts $conns more TCP fallbacks.
fallbacks_rose() {
	local now
	now=$(smc_stat "  TCP fallback")
	echo "TCP fallbacks: $1 -> $now"
	[ "$now" -eq $(($1 + conns)) ]
}

# rxe_flat BEFORE: the client's rxe received no RoCE packet meanwhile.
rxe_flat() {
	local now
	now=$(cat "$counters/rcvd_pkts")
	echo "rxe rcvd_pkts: $1 -> $now"
	[ "$now" = "$1" ]
}

fallbacks=$(smc_stat "  TCP fallback")
if [ "$side" = server ]; then
	run_test "$mine server, RoCE blocked towards its $other_mod client: $conns connections echoed over TCP (server side)" \
		timeout 150 smc_echo server -f smc -p "$port" -n "$conns"
	run_test "$mine server counts the $conns fallbacks of the unconfirmable link" \
		fallbacks_rose "$fallbacks"
	[ "$mine" = smc_rs ] && run_test "smc_rs unloads after the unconfirmable links (server side)" unload_smc_rs
	exit 0
fi

run_test "RoCEv2 towards VM $SMC_VM dropped by XDP on eth0" block
run_test "$mine client, RoCE blocked towards it -> $other_mod server: link not confirmed, 1 MiB echoed intact over TCP" \
	timeout 60 smc_echo client -f smc -a "$peer" -p "$port" -s 1048576 -w 90
run_test "$mine client (non-blocking), RoCE blocked towards it -> $other_mod server: 1 MiB echoed intact over TCP" \
	timeout 60 smc_echo client -f smc -a "$peer" -p "$port" -s 1048576 -w 90 -N
run_test "$mine client's rxe received no RoCE packet while blocked" rxe_flat "$rcvd"

# removed_in_handshake: the device goes while the handshake waits for the
# link's confirmation (RoCE still blocked); `rdma link delete` returns
# once that link group let go, the echo falls back intact.
removed_in_handshake() {
	local pid rc=0
	timeout 60 smc_echo client -f smc -a "$peer" -p "$port" -s 1048576 -w 90 &
	pid=$!
	sleep 1.5
	timeout 60 rdma link delete rxe0 || rc=1
	echo "rdma link delete: $([ $rc = 0 ] && echo done || echo failed or hung)"
	wait "$pid" || rc=1
	rdma link add rxe0 type rxe netdev eth0 || rc=1
	return $rc
}
[ "$mine" = smc_rs ] &&
	run_test "smc_rs client: its RDMA device removed during a handshake: the removal returns, 1 MiB echoed intact over TCP" \
		removed_in_handshake
run_test "RoCEv2 towards VM $SMC_VM passes again" unblock
run_test "$mine client counts the $conns fallbacks of the unconfirmable link" \
	fallbacks_rose "$fallbacks"
[ "$mine" = smc_rs ] && run_test "smc_rs unloads after the unconfirmable links (client side)" unload_smc_rs
exit 0
