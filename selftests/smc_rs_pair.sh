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
