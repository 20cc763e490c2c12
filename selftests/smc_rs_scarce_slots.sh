#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Send slots scarce and readers interrupted: each smc_rs side runs a fresh
# link group with two send slots (net.smc.smcr_max_send_wr=2, the
# minimum), and the client's threads get SIGALRM every 2 ms while 8
# connections echo 1 MiB each (4 MiB in make check-long; each wraps the
# 64 KiB RMBs 16 times and more; smc_echo -S, every EINTR retried). A
# read whose consumer update finds no free slot, or is interrupted while
# waiting for one, must still return the bytes it took: smc_echo checks
# every echo byte for byte, and nothing may hang. SMC-R is proven from
# outside: rxe's counters carry the payload and the statistics count the
# connections as SMC-Rv2 without fallback. Runs in a pair round with either
# module on either side (upstream 6.12 has no smcr_max_send_wr: its side
# keeps its own slots). Then a client process that holds 48 connections is
# killed with SIGKILL: every one of them must end at the server within
# 15 s, and the module unloads.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=slots
port=7430
conns=8
size=$(scaled 1048576 4194304)
held_conns=48
pair_modules
if [ "$mine" = smc_rs ]; then
	# A fresh module: no link group with more slots to join.
	run_test "smc_rs $side: loaded afresh with net.smc.smcr_max_send_wr=2" \
		eval 'fresh_smc_rs && sysctl -w net.smc.smcr_max_send_wr=2'
fi
pair_signal ready
pair_await ready 120

before_smcr
total=$((conns * (size + 8)))

if [ "$side" = server ]; then
	run_test "$mine server, 2 send slots on smc_rs sides: $conns connections echoed (server side)" \
		timeout 300 smc_echo server -f smc -p "$port" -n "$conns"
else
	run_test "$mine client, 2 send slots on smc_rs sides, SIGALRM every 2 ms: $conns x $((size >> 20)) MiB echoed intact -> $other_mod server" \
		timeout 300 smc_echo client -f smc -a "$peer" -p "$port" -s "$size" -n "$conns" -w 90 -S 2000
fi

run_test "$mine $side: statistics count the $conns connections as SMC-Rv2, no fallback" \
	smcr_stats_moved "$conns"
run_test "$mine $side: rxe carried the payload in RoCE packets both ways" rxe_moved "$total"

# kill -9 of a process that holds many connections: its kernel closes them
# all at once, in a task with a fatal signal pending, over the two slots;
# every peer must see its stream end within seconds (close flags that find
# no free slot go with the next one).
killed=$SMC_OUT/$pair_tag-killed held=$SMC_OUT/$pair_tag-held
if [ "$side" = server ]; then
	run_test "$mine server: the $held_conns connections of a client killed with SIGKILL all end within 15 s" \
		timeout 400 python3 "$here/smc_kill9_peer.py" server 7431 "$held_conns" "$killed" 15
else
	kill9() {
		local pid
		python3 "$here/smc_kill9_peer.py" client "$peer" 7431 "$held_conns" "$held" &
		pid=$!
		for _ in $(seq 1200); do
			[ -e "$held" ] && break
			kill -0 "$pid" 2>/dev/null || return 1
			sleep 0.1
		done
		[ -e "$held" ] || return 1
		kill -9 "$pid"
		touch "$killed"
		wait "$pid"
		[ $? = 137 ]
	}
	run_test "$mine client: a process holding $held_conns SMC-R connections (2 send slots) killed with SIGKILL" kill9
fi

pair_signal done
pair_await done 300
if [ "$mine" = smc_rs ]; then
	sysctl -w net.smc.smcr_max_send_wr=16 >/dev/null
	run_test "smc_rs unloads after the scarce-slot echoes ($side side)" unload_smc_rs
fi
exit 0
