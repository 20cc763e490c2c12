#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the two VMs of scripts/walkthrough.sh (VM 1 the server, VM 2
# the client; the same SMC module on both): the seed's server.c/client.c
# pattern, then connections held open while the monitoring walk-through's
# commands run on both sides.
#
# VM 1: an AF_SMC server bound to its RDMA interface's address, port 16000
# (the seed's server.c), and a plain TCP server on port 16001.
# VM 2: one checksummed 1 MiB echo to port 16000 (the seed's client.c),
# then, held open: three AF_SMC connections to port 16000 (SMC-R), a plain
# TCP client of the AF_SMC server (the server falls back: its peer did not
# offer SMC) and an AF_SMC client of the TCP server (the client falls back:
# the server did not answer with SMC).
#
# Each side writes $SMC_OUT/view-vmN.txt: per command a line
# "### COMMAND", its output (stdout and stderr) and, when not 0, "[exit N]".
set -u

tools=$SMC_TOP/tools/target/release
export PATH=$tools:$PATH
port=16000
tcp_port=16001

# The commands of the walk-through, in its order, then the UEID and SMC-D.
commands=("smcr device" "smcr linkgroup" "smcr stats" "smcss" "smcss -l" "smcss -R" "smcss -a"
	"smcr ueid show" "smcd device" "smcd linkgroup" "smcd seid show")

# wait_for FILE [PID]: until FILE exists (300 s at most, or until process
# PID ends).
wait_for() {
	local i
	for i in $(seq 1500); do
		[ -e "$1" ] && return 0
		[ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null || break
		sleep 0.2
	done
	echo "walkthrough: no $1" >&2
	return 1
}

view() {
	local c rc
	for c in "${commands[@]}"; do
		echo "### $c"
		# shellcheck disable=SC2086
		$c 2>&1
		rc=$?
		[ "$rc" -eq 0 ] || echo "[exit $rc]"
	done
}

# Both sides need the UEID in common that SMC-Rv2 asks for (upstream's VMs
# have it from the bed already).
smcr ueid show | grep -q '^SMC-RS-TESTBED' || smcr ueid add SMC-RS-TESTBED || exit 1

rc=0
if [ "$SMC_VM" = 1 ]; then
	smc_echo server -f smc -b 10.10.0.1 -p $port -n 5 >"$SMC_OUT/vm1-server.txt" 2>&1 &
	smc=$!
	smc_echo server -f inet -b 10.10.0.1 -p $tcp_port -n 1 >"$SMC_OUT/vm1-tcp-server.txt" 2>&1 &
	tcp=$!
	wait_for "$SMC_OUT/held" || rc=1
	view >"$SMC_OUT/view-vm1.txt"
	touch "$SMC_OUT/server-viewed"
	wait "$smc" || rc=1
	wait "$tcp" || rc=1
else
	smc_echo client -f smc -a 10.10.0.1 -p $port -s 1048576 -w 90 >"$SMC_OUT/vm2-client.txt" 2>&1 || rc=1
	go=("$SMC_OUT/server-viewed" "$SMC_OUT/client-viewed")
	holders=()
	# One at a time: the first builds the link group, the others join it.
	for what in smc1 smc2 smc3 "tcp --tcp" "fallback"; do
		name=${what%% *}
		opt=
		[ "$name" = "$what" ] || opt=${what#* }
		target=$port
		[ "$name" = fallback ] && target=$tcp_port
		# shellcheck disable=SC2086
		python3 "$SMC_TOP/selftests/smcr_hold.py" $opt 10.10.0.1 $target "$SMC_OUT/held-$name" "${go[@]}" \
			>"$SMC_OUT/vm2-hold-$name.txt" 2>&1 &
		holders+=($!)
		wait_for "$SMC_OUT/held-$name" $! || rc=1
	done
	touch "$SMC_OUT/held"
	view >"$SMC_OUT/view-vm2.txt"
	touch "$SMC_OUT/client-viewed"
	for h in "${holders[@]}"; do wait "$h" || rc=1; done
fi
exit $rc
