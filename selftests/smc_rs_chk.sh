#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# smc_chk and smc_dbg (tools/) across the VM pair, against whichever module
# each side runs: the server side runs `smc_chk -S`, the client side
# `smc_chk -C` to it, which must report SMC-R (read from the client's
# sock_diag: the kernel's view, upstream's own where upstream runs), and to
# a plain TCP listener of the server, which must report the fallback with
# the client's reason in words (0x03010000, the peer offered no SMC).
# Then `smc_dbg` on each side: every part, with the module's sockets and
# statistics in it; `smc_dbg -t` packs the parts into a .tgz.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=chk
port=37373
tcp_port=37399
bin=$SMC_TOP/tools/target/release
pair_modules
echo "$side: $mine, the $other: $other_mod"

if [ "$side" = server ]; then
	"$bin/smc_chk" -S -p "$port" >"$SMC_OUT/chk-server.out" 2>&1 &
	chk=$!
	python3 -c "
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('', $tcp_port)); s.listen(8)
while True:
    c, _ = s.accept(); c.recv(1); c.close()
" &
	tcp=$!
	# Both listening, the Python one included (it starts slowly).
	started() {
		local _
		for _ in $(seq 300); do
			grep -q "Server started on port $port" "$SMC_OUT/chk-server.out" &&
				ss -Hltn "sport = :$tcp_port" | grep -q . && return 0
			sleep 0.1
		done
		cat "$SMC_OUT/chk-server.out"
		return 1
	}
	run_test "$mine server: smc_chk -S serves on port $port (and a TCP listener on $tcp_port)" started
	pair_signal listen
	pair_await done 120
	kill "$chk" "$tcp" 2>/dev/null
	wait "$chk" "$tcp" 2>/dev/null
else
	pair_await listen 120
	chk_smcr() {
		local out
		out=$("$bin/smc_chk" -C "$peer" -p "$port")
		echo "$out"
		[ "$(echo "$out" | sed -n 1p)" = "Test with target IP $peer and port $port" ] &&
			echo "$out" | grep -qx "     Success, using SMC-R"
	}
	run_test "$mine client: smc_chk -C to the $other_mod server's smc_chk -S: Success, using SMC-R" chk_smcr
	chk_fallback() {
		local out
		out=$("$bin/smc_chk" -C "$peer" -p "$tcp_port")
		echo "$out"
		echo "$out" | grep -qx "     Failed  (TCP fallback), reasons:" &&
			echo "$out" | grep -qx "          Client: 0x03010000  the peer did not offer SMC in the TCP handshake"
	}
	run_test "$mine client: smc_chk -C to a TCP listener: the fallback, reason 0x03010000 in words" chk_fallback
fi

# dbg_parts: smc_dbg -t packs the twelve parts, each headed by the command
# it ran, with this side's statistics and sysctls.
dbg_parts() {
	local tgz files dir=/tmp/chk-dbg
	tgz=$("$bin/smc_dbg" -t | sed -n 's/^Debug output written to //p')
	[ -f "$tgz" ] || { echo "no .tgz"; return 1; }
	rm -rf "$dir" && mkdir -p "$dir" && tar xzf "$tgz" -C "$dir" --strip-components=1 && rm -f "$tgz"
	files=$(cd "$dir" && LC_ALL=C ls | tr '\n' ' ')
	echo "$files"
	[ "$files" = "devices.txt dmesg.txt eids.txt pnet_table.txt smcd_lgs.txt smcr_links.txt smcss_all.txt smcss_smcd.txt smcss_smcr.txt stats.txt sysctl.txt version.txt " ] || return 1
	head -n 1 "$dir/smcss_all.txt" | grep -qxF "# smcss --all --debug" || { echo "smcss_all.txt"; return 1; }
	grep -q "^SMC-R Connections Summary" "$dir/stats.txt" || { echo "no statistics"; return 1; }
	grep -q "^net.smc.wmem = " "$dir/sysctl.txt" || { echo "no sysctls"; return 1; }
	grep -qxF "# smcr -d device" "$dir/devices.txt" || { echo "devices.txt"; return 1; }
}
run_test "$mine $side: smc_dbg -t packs the twelve parts (sockets, devices, statistics, sysctls)" dbg_parts
[ "$side" = client ] && pair_signal done
exit 0
