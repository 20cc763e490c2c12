#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Two VMs without RDMA devices: VM 1 runs smc_rs, VM 2 upstream smc.ko.
# Neither side can do SMC-R; both must agree on TCP in both directions.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))

no_rdma_device() {
	[ -z "$(rdma link show 2>/dev/null)" ]
}

# step PORT SERVER_VM NAME
step() {
	if [ "$SMC_VM" = "$2" ]; then
		run_test "$3 (server side)" timeout 180 smc_echo server -f smc -p "$1" -n 1
	else
		run_test "$3" timeout 180 smc_echo client -f smc -a "$peer" -p "$1" -s 4194304 -w 90
	fi
}

run_test "no RDMA device in VM $SMC_VM" no_rdma_device
# VM 2 captures its link around both connections, for tshark to judge the
# SYNs: upstream's client offers SMC (the option on its SYN; its
# loopback-ism, CONFIG_SMC_LO, with the bed's UEID gives it SMC-Dv2 to
# propose, which a server on another host declines), smc_rs's client has
# nothing to propose (net.smc.smcd_loopback is 0) and does not.
pcap=$SMC_OUT/norxe-vm$SMC_VM.pcap
[ "$SMC_VM" = 2 ] && run_test "dumpcap captures eth0 (VM 2)" capture_start eth0 "$pcap"
step 7201 1 "no rxe: smc_rs server <- upstream AF_SMC client, 4 MiB"
step 7202 2 "no rxe: upstream server <- smc_rs AF_SMC client, 4 MiB"

# count_is SIDE REASON N: `smcr -d stats` counts N fallbacks of SIDE for REASON.
count_is() {
	local n
	n=$(fallback_count "$1" "$2")
	echo "$1 $2: $n"
	[ "$n" = "$3" ]
}

if [ "$SMC_VM" = 2 ]; then
	run_test "capture stopped (VM 2)" capture_stop
	run_test "upstream client's SYN carries the SMC option (tshark sees it)" \
		smc_option_in "$pcap" 7201
	run_test "smc_rs client without RDMA device: its SYN carries no SMC option (tshark)" \
		smc_option_absent "$pcap" 7202
	run_test "upstream server counts the smc_rs client as PEERNOSMC (no option seen)" \
		count_is Server PEER_NO_SMC 1
	run_test "upstream client without RDMA device offers SMC-D (loopback-ism) and records the peer's decline" \
		count_is Client PEERDECL 1
else
	run_test "smc_rs client without RDMA device records NOSMCDEV, as upstream's" \
		count_is Client NOSMCDEV 1
fi
