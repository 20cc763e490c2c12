#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# SMC-R data path across the VM pair: VM 1 runs upstream smc.ko as the
# server, VM 2 runs smc_rs as the client, both with the UEID the bed uses,
# each with an rxe device. Every connection must be SMC-R, proven from
# outside smc_rs: upstream's own statistics on the server count SMC-R
# connections and no fallback, and rxe's hardware counters on the client
# rise with the payload.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
smcr=$SMC_TOP/tools/target/release/smcr
counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
sizes="1 4096 65536 1048576 8388608"
nsizes=$(echo $sizes | wc -w)

if [ "$SMC_VM" = 1 ]; then
	run_test "upstream server for the smc_rs SMC-R client (server side)" \
		timeout 300 smc_echo server -f smc -p 7301 -n "$nsizes"
	upstream_counted() {
		"$smcr" -d stats
		"$smcr" -d stats | grep -Eq "^  SMC connections +$nsizes \(client 0, server $nsizes\)" &&
			"$smcr" -d stats | grep -Eq "^    v2 +$nsizes\$" &&
			"$smcr" -d stats | grep -Eq '^  TCP fallback +0 '
	}
	run_test "upstream counts $nsizes SMC-Rv2 server connections and no fallback" upstream_counted
	exit 0
fi

"$here/tools/smc_ueid" add SMC-RS-TESTBED
echo "module smc_rs +p" >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
sent_before=$(cat "$counters/sent_pkts")
total=0
for s in $sizes; do
	run_test "smc_rs client -> upstream server over SMC-R, $s bytes echoed" \
		timeout 120 smc_echo client -f smc -a "$peer" -p 7301 -s "$s" -w 90
	total=$((total + s))
done
rxe_counted() {
	local sent_after
	sent_after=$(cat "$counters/sent_pkts")
	echo "rxe sent_pkts: $sent_before -> $sent_after for $total payload bytes"
	# At most 4096 bytes per RoCE packet: the payload alone needs this many.
	[ $((sent_after - sent_before)) -ge $((total / 4096)) ]
}
run_test "rxe hardware counters rose with the payload (client side)" rxe_counted
dmesg | grep smc_rs | tail -40
