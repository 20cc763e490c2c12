#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: build what is needed, boot two linked VMs with smc_rs.ko,
# run an AF_SMC server on one and an AF_SMC client on the other (the seed's
# server.c/client.c pattern, with a checksummed 8 MiB echo), and summarise.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"

start=$(date +%s)
kdir=$("$here/build-kernel.sh")
log "building smc_rs.ko and the test programs"
make -C "$top" --no-print-directory modules KDIR="$kdir" >/dev/null
make -C "$top/selftests" --no-print-directory >/dev/null

out=$(mktemp -d /tmp/smc_rs-demo.XXXXXX)
port=16000
server="smc_echo server -f smc -p $port -n 1 >\$SMC_OUT/server.txt 2>&1; rc=\$?;
	grep -E '^SMC ' /proc/net/protocols >\$SMC_OUT/protocols.txt; exit \$rc"
client="smc_echo client -f smc -a 10.10.0.1 -p $port -s 8388608 -w 60 >\$SMC_OUT/client.txt 2>&1"
rc=0
SMC_VM_OUT=$out "$here/vm.sh" pair smc_rs "$server" smc_rs "$client" || rc=$?

echo
echo "== smc_rs demo =="
echo "kernel:   $(basename "$kdir") (Rust for Linux, debug options)"
echo "module:   $(modinfo -F description "$top/smc_rs.ko") ($(modinfo -F alias "$top/smc_rs.ko" | paste -sd, -))"
echo "VM 1:     10.10.0.1, smc_rs.ko, AF_SMC server on port $port: $(tr '\n' ' ' <"$out/server.txt" 2>/dev/null)"
echo "          /proc/net/protocols: $(awk '{print $1, "sockets=" $3, "module=" $8}' "$out/protocols.txt" 2>/dev/null)"
echo "VM 2:     10.10.0.2, smc_rs.ko, AF_SMC client: $(cat "$out/client.txt" 2>/dev/null)"
echo "mode:     TCP fallback: both sides negotiate SMC (TCP option, CLC proposal), but the"
echo "          SMC-R data path is not built yet: the client proposes no device, the listener"
echo "          declines (0x03010000 peer has no SMC) and the client falls back (0x03030000)"
echo "splats:   $("$here/splat-check.sh" "$out"/vm*.log >/dev/null && echo none || echo 'FOUND, see logs')"
echo "logs:     $out"
echo "time:     $(( $(date +%s) - start )) s"
if [ "$rc" -eq 0 ]; then echo "result:   OK"; else echo "result:   FAILED"; fi
exit "$rc"
