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
step 7201 1 "no rxe: smc_rs server <- upstream AF_SMC client, 4 MiB"
step 7202 2 "no rxe: upstream server <- smc_rs AF_SMC client, 4 MiB"
