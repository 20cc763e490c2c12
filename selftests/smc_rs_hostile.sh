#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Hostile input on the link between two smc_rs (VM 1 serves, VM 2
# connects). VM 2's fault injection knob (debugfs smc_rs/inject) makes it
# send one hostile message per case; VM 1 must abort the connection (bad
# cursors: its application sees ECONNABORTED, VM 2's a reset) or drop the
# message (unknown token, stale sequence number, malformed LLC: the echo
# stays byte-exact), count it, and keep the link group: a clean connection
# after each case runs on the same RC queue pair (rdma's resource list,
# not ours), and RoCE packets carry it (rxe's counters). The bed fails the
# run on any kernel splat or kmemleak report.
#
# Then link requests a link group with one link refuses (ADD LINK, REQ ADD
# LINK, DELETE LINK of another link id, CONFIRM LINK after the link's
# confirmation), sent by each side in turn: the receiver answers or
# ignores each as upstream does (a client rejects ADD LINK and answers the
# DELETE LINK with "unknown link", a server answers REQ ADD LINK), the
# sender counts the answers as out of any flow, and the link group stays.
#
# Runs after smc_rs_smcr.sh in the same VM boot, which unloads smc_rs and
# removes the client's rxe device: both come back here.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
py=/usr/bin/python3
helper=$here/smc_hostile.py
dbg=/sys/kernel/debug/smc_rs
counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
size=100000

if lsmod | grep -q '^smc '; then
	skip_test "hostile input ($side side)" "needs smc_rs on both sides"
	exit 0
fi
lsmod | grep -q '^smc_rs ' || insmod "$SMC_TOP/smc_rs.ko"
[ -e /sys/class/infiniband/rxe0 ] || rdma link add rxe0 type rxe netdev eth0
"$here/tools/smc_ueid" add SMC-RS-TESTBED

# signal NAME / await NAME: one side tells the other through $SMC_OUT.
signal() { touch "$SMC_OUT/hostile-$side-$1"; }
await() {
	local _
	for _ in $(seq 3000); do
		[ -e "$SMC_OUT/hostile-$other-$1" ] && return 0
		sleep 0.1
	done
	echo "no '$1' from the $other" >&2
	return 1
}

# Both sides are here (the client's part of smc_rs_smcr.sh may take longer).
signal start
run_test "the $other is ready for the hostile cases ($side side)" await start

knob_off_by_default() {
	[ "$(cat "$dbg/inject")" = 0 ] && ls "$dbg"
}
run_test "smc_rs debugfs knob present and off ($side side)" knob_off_by_default

counter() { cat "$dbg/rx_$1"; }
all_counters="cdc_bad_cursor cdc_unknown_token cdc_stale_seqno cdc_malformed llc_malformed
	llc_add_link_refused llc_unknown_link llc_out_of_flow"
snapshot() {
	local c
	for c in $all_counters; do
		echo "$c=$(counter "$c")"
	done
}

# moved BEFORE AFTER EXPECT: the counters moved as EXPECT says ("name=delta
# ..."), the others did not. A CDC message that arrives after its
# connection was freed (the close of an aborted peer) also counts as one
# for an unknown token: that counter may move more, in every case.
moved() {
	local before=$1 after=$2 expect=$3 c b a want
	for c in $all_counters; do
		b=$(echo "$before" | sed -n "s/^$c=//p")
		a=$(echo "$after" | sed -n "s/^$c=//p")
		want=$(echo "$expect" | tr ' ' '\n' | sed -n "s/^$c=//p")
		if [ "$c" = cdc_unknown_token ]; then
			[ $((a - b)) -ge "${want:-0}" ] || { echo "$c moved by $((a - b)), not $want"; return 1; }
		else
			[ $((a - b)) -eq "${want:-0}" ] || { echo "$c moved by $((a - b)), not ${want:-0}"; return 1; }
		fi
	done
}

# The RC queue pairs on rxe0 (local QP numbers), from rdma's resource list
# ("link rxe0/1 lqpn N type RC state ..." a line; read without a python
# start, which costs seconds in a guest).
rc_qps() {
	rdma res show qp link rxe0/1 | awk '{
		q = t = ""
		for (i = 1; i < NF; i++) {
			if ($i == "lqpn") q = $(i + 1)
			if ($i == "type") t = $(i + 1)
		}
		if (t == "RC" && q != "") print q
	}' | sort -n | xargs
}

# case: knob value, name, how the server's counters must move, what the
# server's application must see, what the client's may see, how the
# client's counters must move (nothing checked when empty).
link_requests="LLC link requests (ADD LINK, REQ ADD LINK, DELETE LINK of another link, CONFIRM LINK)"
cases=(
	"1|CDC producer cursor beyond the RMB|cdc_bad_cursor=1|ECONNABORTED|ECONNRESET ECONNABORTED EPIPE|"
	"2|CDC for an unknown token|cdc_unknown_token=1|eof|ok|"
	"3|CDC with a stale sequence number|cdc_stale_seqno=1|eof|ok|"
	"4|CDC consumer cursor beyond what was sent|cdc_bad_cursor=1|ECONNABORTED|ECONNRESET ECONNABORTED EPIPE|"
	"5|malformed LLC messages (unknown type, wrong length)|llc_malformed=2|eof|ok|"
	"6|$link_requests|llc_add_link_refused=2 llc_unknown_link=1 llc_out_of_flow=1|eof|ok|llc_out_of_flow=1"
)

# server_case PORT EXPECT WANT [KNOB]: one hostile and one clean
# connection; the hostile one ends as WANT, the clean one is echoed, the
# counters moved as EXPECT says, the link group's queue pairs are the same
# as before. With KNOB, this side sends the hostile messages: the knob is
# armed before the first connection, and is back at 0 after it.
server_case() {
	local port=$1 expect=$2 want=$3 knob=${4:-} before after out first qps_before qps_after
	before=$(snapshot)
	# The client counts from before the knob is armed.
	[ -z "$knob" ] || { await "counted-$port" && echo "$knob" >"$dbg/inject"; } || return 1
	qps_before=$(rc_qps)
	signal "listen-$port"
	out=$(timeout 300 "$py" "$helper" server "$port" 2)
	echo "$out"
	after=$(snapshot)
	qps_after=$(rc_qps)
	echo "counters before: $before"
	echo "counters after:  $after"
	echo "RC QPs before: $qps_before; after: $qps_after"
	first=$(echo "$out" | sed -n 1p)
	if [ "$want" = eof ]; then
		[ "$first" = "result=eof bytes=$size" ]
	else
		[ "${first%% *}" = "result=$want" ]
	fi || { echo "hostile connection: want $want"; return 1; }
	[ "$(echo "$out" | sed -n 2p)" = "result=eof bytes=$size" ] || { echo "clean connection not echoed"; return 1; }
	[ "$(cat "$dbg/inject")" = 0 ] || { echo "knob still armed"; return 1; }
	moved "$before" "$after" "$expect" || return 1
	[ -n "$qps_before" ] && [ "$qps_before" = "$qps_after" ] || { echo "the link group changed"; return 1; }
}

# client_case PORT KNOB ALLOWED [EXPECT]: the hostile connection ends as
# one of ALLOWED, the knob is back at 0, then a clean connection is echoed
# byte for byte over RoCE; with EXPECT, the counters moved as it says and
# the link group's queue pairs are the same as before. KNOB 0: the server
# sends the hostile messages.
client_case() {
	local port=$1 knob=$2 allowed=$3 expect=${4:-} out r sent_before rcvd_before before qps_before
	before=$(snapshot)
	qps_before=$(rc_qps)
	signal "counted-$port"
	await "listen-$port" || return 1
	out=$(timeout 120 "$py" "$helper" client "$peer" "$port" "$size" "$knob")
	echo "hostile: $out"
	r=${out#result=}
	r=${r%% *}
	case " $allowed " in *" $r "*) ;; *) echo "want one of: $allowed"; return 1 ;; esac
	[ "$(cat "$dbg/inject")" = 0 ] || { echo "knob still armed"; return 1; }
	sent_before=$(cat "$counters/sent_pkts")
	rcvd_before=$(cat "$counters/rcvd_pkts")
	out=$(timeout 120 "$py" "$helper" client "$peer" "$port" "$size")
	echo "clean: $out"
	echo "rxe packets sent $sent_before -> $(cat "$counters/sent_pkts"), received $rcvd_before -> $(cat "$counters/rcvd_pkts")"
	[ "$out" = "result=ok bytes=$size" ] &&
		[ $(($(cat "$counters/sent_pkts") - sent_before)) -ge $((size / 4096)) ] &&
		[ $(($(cat "$counters/rcvd_pkts") - rcvd_before)) -ge $((size / 4096)) ] || return 1
	[ -n "$expect" ] || return 0
	echo "counters before: $before"
	echo "counters after:  $(snapshot)"
	moved "$before" "$(snapshot)" "$expect" &&
		[ -n "$qps_before" ] && [ "$qps_before" = "$(rc_qps)" ] || { echo "counters or link group"; return 1; }
}

# A clean connection first: the link group the cases run on.
port=7400
if [ "$side" = server ]; then
	signal "listen-$port"
	run_test "smc_rs server: SMC-R link group up for the hostile cases" \
		bash -c "timeout 300 $py $helper server $port 1 | tee /dev/stderr | grep -qx 'result=eof bytes=$size'"
else
	await "listen-$port" && sleep 1
	run_test "smc_rs client: SMC-R link group up for the hostile cases" \
		bash -c "timeout 120 $py $helper client $peer $port $size | grep -qx 'result=ok bytes=$size'"
fi
for c in "${cases[@]}"; do
	IFS='|' read -r knob name expect want allowed client_expect <<<"$c"
	port=$((7400 + knob))
	if [ "$side" = server ]; then
		run_test "smc_rs server: $name from the peer: $([ "$want" = eof ] && echo "dropped or answered, echo intact" || echo "connection aborted"), counted, link group kept" \
			server_case "$port" "$expect" "$want"
	else
		sleep 1
		run_test "smc_rs client: sent $name (knob $knob): app sees ${allowed%% *}$([ "$want" = eof ] || echo " or another reset"), clean echo after it" \
			client_case "$port" "$knob" "$allowed" "$client_expect"
	fi
done

# The same link requests from the server: the client rejects the ADD LINK
# and answers the DELETE LINK, which the server counts as out of any flow.
port=7416
if [ "$side" = server ]; then
	run_test "smc_rs server: sent $link_requests (knob 6): the client's ADD LINK reject and DELETE LINK answer counted, echo intact, link group kept" \
		server_case "$port" "llc_out_of_flow=2" eof 6
else
	sleep 1
	run_test "smc_rs client: $link_requests from the server: ADD LINK rejected, DELETE LINK answered, counted, echo intact, link group kept" \
		client_case "$port" 0 ok "llc_add_link_refused=2 llc_unknown_link=1 llc_out_of_flow=1"
fi

no_splat() {
	! dmesg | grep -E 'WARNING: CPU:|BUG:|kernel BUG at|Oops|general protection fault|refcount_t:|KASAN:|UBSAN:'
}
run_test "no kernel splat after the hostile cases ($side side)" no_splat
dmesg | grep -E 'smc_rs|SMC-R peer' | tail -20
run_test "smc_rs unloads after the hostile cases ($side side)" rmmod smc_rs
exit 0
