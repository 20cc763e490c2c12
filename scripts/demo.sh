#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: build what is needed, boot two linked VMs with smc_rs.ko,
# run an AF_SMC server on one and an AF_SMC client on the other (the seed's
# server.c/client.c pattern, with a checksummed 8 MiB echo), and summarise.
# DEMO=failover (make demo DEMO=failover): the two-link test instead, each
# VM with a second NIC and rxe device: the link group SYM, a NIC going down
# in the middle of echoes, the link's return (selftests/smc_rs_twolinks.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"

start=$(date +%s)
kdir=$("$here/build-kernel.sh")
log "building smc_rs.ko and the test programs"
make -C "$top" --no-print-directory modules KDIR="$kdir" >/dev/null
make -C "$top/selftests" --no-print-directory >/dev/null

make -C "$top" --no-print-directory tools >/dev/null

if [ "${DEMO:-}" = failover ]; then
	out=$(mktemp -d /tmp/smc_rs-demo.XXXXXX)
	cmd="bash $top/selftests/round.sh failover --mods smc_rs,smc_rs $top/selftests/smc_rs_twolinks.sh"
	rc=0
	SMC_VM_OUT=$out SMC_VM_RXE=1 "$here/vm.sh" pair smc_rs "$cmd" smc_rs "$cmd" || rc=$?
	echo
	echo "== smc_rs failover demo (two links per link group) =="
	for vm in 1 2; do
		echo "-- VM $vm"
		cat "$out"/failover/tap-smc_rs_twolinks-vm$vm.txt 2>/dev/null | sed 's/^/   /'
		grep -E '^rxe|^TCP' "$out"/failover/log-smc_rs_twolinks-vm$vm.txt 2>/dev/null | sed 's/^/     /'
	done
	echo "logs:     $out (took $(($(date +%s) - start)) s)"
	exit $rc
fi

out=$(mktemp -d /tmp/smc_rs-demo.XXXXXX)
port=16000
# Both sides: the UEID in common that SMC-Rv2 needs, rxe's packet counters
# before and after (the proof from outside smc_rs), smc_rs's statistics.
prologue="smc_ueid add SMC-RS-TESTBED >/dev/null;
	c=/sys/class/infiniband/rxe0/ports/1/hw_counters;
	echo \$(cat \$c/sent_pkts) \$(cat \$c/rcvd_pkts) >\$SMC_OUT/vm\$SMC_VM-rxe-before.txt"
epilogue="echo \$(cat \$c/sent_pkts) \$(cat \$c/rcvd_pkts) >\$SMC_OUT/vm\$SMC_VM-rxe-after.txt;
	$top/tools/target/release/smcr -d stats >\$SMC_OUT/vm\$SMC_VM-stats.txt 2>&1"
server="$prologue; smc_echo server -f smc -p $port -n 1 >\$SMC_OUT/vm1-server.txt 2>&1; rc=\$?;
	grep -E '^SMC ' /proc/net/protocols >\$SMC_OUT/vm1-protocols.txt; $epilogue; exit \$rc"
# The client looks at its connection with smcss while the echo runs.
client="$prologue; smc_echo client -f smc -a 10.10.0.1 -p $port -s 8388608 -w 60 >\$SMC_OUT/vm2-client.txt 2>&1 &
	pid=\$!; for i in \$(seq 300); do
		$top/tools/target/release/smcss -a >\$SMC_OUT/vm2-smcss.txt 2>&1; grep -q SMCR \$SMC_OUT/vm2-smcss.txt && break; sleep 0.1;
	done; wait \$pid; rc=\$?; $epilogue; exit \$rc"
rc=0
SMC_VM_OUT=$out "$here/vm.sh" pair smc_rs "$server" smc_rs "$client" || rc=$?

# rxe_delta VM: packets the VM's RDMA device sent and received.
rxe_delta() {
	local b a
	b=($(cat "$out/$1-rxe-before.txt" 2>/dev/null || echo 0 0))
	a=($(cat "$out/$1-rxe-after.txt" 2>/dev/null || echo 0 0))
	echo "sent $((a[0] - b[0])), received $((a[1] - b[1])) RoCE packets"
}
stat_line() {
	grep -E "^  (SMC connections|TCP fallback)" "$out/$1-stats.txt" 2>/dev/null | sed 's/^ *//; s/   */ /g' | paste -sd';'
}
mode=$(grep -E 'SMCR|SMCD|TCP' "$out/vm2-smcss.txt" 2>/dev/null | head -n 1)

echo
echo "== smc_rs demo =="
echo "kernel:   $(basename "$kdir") (Rust for Linux, debug options)"
echo "module:   $(modinfo -F description "$top/smc_rs.ko") ($(modinfo -F alias "$top/smc_rs.ko" | paste -sd, -))"
echo "VM 1:     10.10.0.1, smc_rs.ko, AF_SMC server on port $port: $(tr '\n' ' ' <"$out/vm1-server.txt" 2>/dev/null)"
echo "          /proc/net/protocols: $(awk '{print $1, "sockets=" $3, "module=" $8}' "$out/vm1-protocols.txt" 2>/dev/null)"
echo "VM 2:     10.10.0.2, smc_rs.ko, AF_SMC client: $(cat "$out/vm2-client.txt" 2>/dev/null)"
echo "smcss:    (VM 2, during the echo) ${mode:-no connection seen}"
echo "proof:    VM 1 rxe0 $(rxe_delta vm1); VM 2 rxe0 $(rxe_delta vm2)"
echo "          (the 8 MiB crossed twice by RDMA WRITE, not by TCP)"
echo "stats:    VM 1 $(stat_line vm1)"
echo "          VM 2 $(stat_line vm2)"
echo "splats:   $("$here/splat-check.sh" "$out"/vm*.log >/dev/null && echo none || echo 'FOUND, see logs')"
echo "logs:     $out"
echo "time:     $(( $(date +%s) - start )) s"
case "$mode" in *SMCR*) ;; *) rc=1 ;; esac
if [ "$rc" -eq 0 ]; then echo "result:   OK (SMC-R)"; else echo "result:   FAILED"; fi
exit "$rc"
