#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The connection limit of a link group, and more link groups than a fixed
# table of 64 could hold: between two smc_rs with
# net.smc.smcr_max_conns_per_lgr=16 (upstream's minimum) on both sides.
# First a client holds 80 connections, opened 16 at a time at once (their
# server handshakes choose a link group together): both sides must list at
# least 5 link groups and none with more than 16 connections (`smcr
# linkgroup`), and when the holder is killed every connection ends at the
# server within 15 s. Then 1040 concurrent connections echo 1 KiB each
# byte for byte (smc_echo) over link groups of 16, counted as SMC-Rv2 with
# no fallback, their payload carried by rxe both ways.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
pair_tag=lgrs
port=7460
conns=1040
held_conns=80
pair_modules
if [ "$mine" != smc_rs ] || [ "$other_mod" != smc_rs ]; then
	skip_test "link groups of 16 connections ($side side)" "needs smc_rs on both sides"
	exit 0
fi
run_test "smc_rs $side: loaded afresh with net.smc.smcr_max_conns_per_lgr=16" \
	eval 'fresh_smc_rs && sysctl -w net.smc.smcr_max_conns_per_lgr=16'
pair_signal ready
pair_await ready 120

# Link groups of at most 16 connections, at least $1 of them.
lgrs_of_16() {
	"$SMC_TOP/tools/target/release/smcr" linkgroup | awk -v want="$1" '
		$2 == "SERV" || $2 == "CLNT" { n++; if ($5 > 16) big++; print }
		END { printf "link groups: %d, with more than 16 connections: %d\n", n, big
		      exit !(n >= want && big == 0) }'
}

killed=$SMC_OUT/$pair_tag-killed held=$SMC_OUT/$pair_tag-held
if [ "$side" = server ]; then
	hold_and_check() {
		python3 "$here/smc_kill9_peer.py" server 7461 "$held_conns" "$killed" 15 &
		local pid=$!
		for _ in $(seq 1200); do
			[ -e "$held" ] && break
			sleep 0.1
		done
		lgrs_of_16 5 || { kill "$pid"; wait "$pid"; return 1; }
		touch "$SMC_OUT/$pair_tag-counted"
		wait "$pid"
	}
	run_test "smc_rs server: $held_conns held connections on at least 5 link groups of at most 16, all end within 15 s of the holder's SIGKILL" \
		hold_and_check
else
	hold_and_kill() {
		local pid r=0
		python3 "$here/smc_kill9_peer.py" client "$peer" 7461 "$held_conns" "$held" 16 &
		pid=$!
		for _ in $(seq 1200); do
			[ -e "$held" ] && break
			kill -0 "$pid" 2>/dev/null || return 1
			sleep 0.1
		done
		[ -e "$held" ] || return 1
		lgrs_of_16 5 || r=1
		for _ in $(seq 300); do
			[ -e "$SMC_OUT/$pair_tag-counted" ] && break
			sleep 0.1
		done
		kill -9 "$pid"
		touch "$killed"
		wait "$pid"
		return $r
	}
	run_test "smc_rs client: $held_conns held connections, opened 16 at once, on at least 5 link groups of at most 16" \
		hold_and_kill
fi
pair_signal held
pair_await held 300

before_smcr
if [ "$side" = server ]; then
	run_test "smc_rs server: $conns concurrent connections on link groups of 16 echoed (server side)" \
		timeout 600 smc_echo server -f smc -p "$port" -n "$conns"
else
	run_test "smc_rs client: $conns concurrent connections x 1 KiB echoed intact over link groups of 16" \
		timeout 600 smc_echo client -f smc -a "$peer" -p "$port" -s 1024 -n "$conns" -w 90
fi
run_test "smc_rs $side: statistics count the $conns connections as SMC-Rv2, no fallback" \
	smcr_stats_moved "$conns"
run_test "smc_rs $side: rxe carried the echoes in RoCE packets both ways" \
	rxe_moved $((conns * (1024 + 8)))
pair_signal done
pair_await done 300
run_test "smc_rs unloads after the link groups of 16 ($side side)" unload_smc_rs
exit 0
