#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The operators' monitoring walk-through (smcr device, smcr linkgroup, smcr
# stats, smcss, smcss -l, smcss -R, smcss -a; then smcr ueid show, smcd
# device, smcd linkgroup, smcd seid show), run on the server and the client
# of two linked VMs, once with smc_rs on both and once with upstream smc.ko
# on both, over the same connections (scripts/walkthrough-vm.sh): SMC-R
# ones and two that fall back to TCP. Writes one text file with, per
# command and side, the output of smc_rs and of smc.ko one after the other,
# and a diff of the two once inodes, ephemeral ports and link group ids
# are masked.
#
#   WALK_OUT=DIR        results (default: walkthrough-results/<date>)
#   WALK_MODS="A B"     which pair runs (default: "smc_rs upstream"); a run
#                       whose views are already in DIR is not repeated
#   WALK_LOCK=FILE      flock(1) FILE around each VM run (shared machines)
#   KDIR=DIR            the kernel tree (default: the cached one)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"

start=$(date +%s)
stamp=$(date +%Y%m%d-%H%M%S)
out=${WALK_OUT:-$top/walkthrough-results/$stamp}
mods=${WALK_MODS:-smc_rs upstream}
kdir=${KDIR:-$("$here/build-kernel.sh")}
mkdir -p "$out"
# walkthrough-results/ ignores itself (the repository's .gitignore stays
# as it is).
if [ -z "${WALK_OUT:-}" ]; then
	[ -f "$top/walkthrough-results/.gitignore" ] || echo '*' >"$top/walkthrough-results/.gitignore"
	ln -sfn "$stamp" "$top/walkthrough-results/latest"
fi

log "building smc_rs.ko, the test programs and the tools"
make -C "$top" --no-print-directory modules KDIR="$kdir" >/dev/null
make -C "$top/selftests" --no-print-directory >/dev/null
make -C "$top" --no-print-directory tools >/dev/null

guest="bash $here/walkthrough-vm.sh"
for mod in $mods; do
	[ -s "$out/$mod/view-vm1.txt" ] && [ -s "$out/$mod/view-vm2.txt" ] && continue
	rm -rf "${out:?}/$mod"
	mkdir -p "$out/$mod"
	log "walk-through with $mod on both VMs"
	lock=()
	[ -z "${WALK_LOCK:-}" ] || lock=(flock "$WALK_LOCK")
	# The guests write to a directory outside the repository (which they
	# see read-only); its files are kept with the results.
	vmdir=$(mktemp -d /tmp/smc_rs-walk.XXXXXX)
	SMC_VM_OUT=$vmdir "${lock[@]}" "$here/vm.sh" pair "$mod" "$guest" "$mod" "$guest" ||
		log "the $mod run failed; see $out/$mod"
	rm -f "$vmdir/link.sock"
	cp -a "$vmdir/." "$out/$mod/" && rm -rf "$vmdir"
done

# section FILE COMMAND: the output of COMMAND in a view file.
section() {
	awk -v c="### $2" '$0 == c { on = 1; next } /^### / { on = 0 } on' "$1" 2>/dev/null
}

# masked: inodes, the client's ephemeral ports, link group ids and link
# user ids are a run's own; everything else must match.
masked() {
	sed -E 's/^([A-Z0-9]+ +[0-9]+ )[0-9]+ /\1INODE /
		s/(10\.10\.0\.2):[0-9]{5}/\1:PORT/g
		s/^[0-9a-f]{8} (SERV|CLNT)/LGID     \1/'
}

result=$out/walkthrough.txt
{
	echo "SMC monitoring walk-through: smc_rs and upstream smc.ko"
	echo "========================================================"
	echo
	echo "kernel:  $(basename "$kdir") (Linux 6.12 with Rust, debug options, QEMU TCG)"
	echo "module:  smc_rs.ko ($(modinfo -F description "$top/smc_rs.ko")) or the kernel's smc.ko + smc_diag.ko"
	echo "tools:   $top/tools/target/release (smcss, smcr, smcd), the same binaries for both"
	echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "VM 1 (server, 10.10.0.1) and VM 2 (client, 10.10.0.2), linked by a virtual"
	echo "Ethernet, each with Soft-RoCE (rxe0 on eth0) and the UEID SMC-RS-TESTBED."
	echo "VM 1: AF_SMC server bound to 10.10.0.1:16000 (the seed's server.c) and a"
	echo "      plain TCP server on 10.10.0.1:16001."
	echo "VM 2: one checksummed 1 MiB echo to port 16000 (the seed's client.c), then"
	echo "      held open while the commands run on both sides:"
	echo "      - three AF_SMC connections to port 16000 (SMC-R);"
	echo "      - a plain TCP client of port 16000: the server falls back, reason"
	echo "        0x03010000 (SMC_CLC_DECL_PEERNOSMC, the peer did not offer SMC);"
	echo "      - an AF_SMC client of the TCP server on port 16001: the client falls"
	echo "        back, reason 0x03010000 (no SMC in the server's answer)."
	echo
	echo "Per command and side: smc_rs's output, then upstream's; then their diff"
	echo "with inodes, the client's ephemeral ports and link group ids masked"
	echo "(values that differ from run to run)."
	for side in "1 server (VM 1, 10.10.0.1)" "2 client (VM 2, 10.10.0.2)"; do
		n=${side%% *}
		echo
		echo "################################################################"
		echo "# ${side#* }"
		echo "################################################################"
		while IFS= read -r cmd; do
			echo
			echo "=== # $cmd   [${side#* }]"
			for mod in smc_rs upstream; do
				echo "--- $mod"
				section "$out/$mod/view-vm$n.txt" "$cmd"
			done
			d=$(diff <(section "$out/smc_rs/view-vm$n.txt" "$cmd" | masked) \
				<(section "$out/upstream/view-vm$n.txt" "$cmd" | masked) | sed 's/^/    /' || true)
			if [ -z "$d" ]; then
				echo "--- same once masked"
			else
				echo "--- differences once masked (< smc_rs, > upstream)"
				echo "$d"
			fi
		done < <(grep '^### ' "$out/smc_rs/view-vm$n.txt" 2>/dev/null | sed 's/^### //')
	done
} >"$result"

echo
echo "== walk-through =="
for mod in smc_rs upstream; do
	echo "$mod: $(cat "$out/$mod/vm1.rc" 2>/dev/null || echo none) / $(cat "$out/$mod/vm2.rc" 2>/dev/null || echo none)" \
		"(exit status of VM 1 / VM 2), splats: $("$here/splat-check.sh" "$out/$mod"/vm*.log >/dev/null 2>&1 && echo none || echo 'FOUND, see logs')"
done
echo "result:   $result"
echo "time:     $(($(date +%s) - start)) s"
