#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# SMC-R with a receive side that posts one scatter/gather entry per receive
# request, as smc_rs does on RNICs whose max_recv_sge is 1 (erdma): each
# receive slot gets an 8 KiB buffer of its own instead of 48 bytes plus a
# tail shared by all slots. rxe has more entries; smc_rs's test knob
# /sys/kernel/debug/smc_rs/max_recv_sge=1 makes the link groups made after
# it behave as on such a device.
#
# VM 1 serves, VM 2 connects. With upstream smc.ko on one side, the smc_rs
# side sets the knob, and upstream's SMC-Rv2 LLC messages (CONFIRM LINK,
# CONFIRM RKEY and DELETE RKEY for every further connection's RMB) reach
# it in the one-entry layout. Between two smc_rs, the server sets it and
# the client keeps two entries; each side sends the other one long SMC-Rv2
# LLC message (fault injection knob 7: a 128-byte DELETE RKEY), which each
# must receive whole in its layout. Every echo is checked byte for byte;
# SMC-R is proven from outside smc_rs: the statistics (upstream's own, read
# by the same tool as ours) count SMC-Rv2 connections, no handshake error
# and no fallback, and rxe's counters carry the payload. At the end one
# smc_rs unloads (orderly DELETE LINK) and the peer's link group must end
# within 10 s (a lost peer would take 32 s: TEST LINK after 30 s idle);
# between two smc_rs the client unloads first, so the one-entry server
# receives the DELETE LINK.
#
# Runs after smc_rs_smcr.sh (and smc_rs_hostile.sh) in the same VM boot,
# which unload smc_rs and may remove rxe0: both come back here.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
dbg=/sys/kernel/debug/smc_rs
counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
pair_tag=rxsge
port=7501
sizes="1 1048576 8388608"
many=8
many_size=65536
pair_modules
conns=$(($(echo $sizes | wc -w) + many))
total=$((many * (many_size + 8)))
for s in $sizes; do total=$((total + s + 8)); done
echo "$side: $mine, the $other: $other_mod"

# Who uses one entry: the smc_rs side against upstream, the server between
# two smc_rs. Between two smc_rs both inject the long message.
one_sge=0
[ "$mine" = smc_rs ] && { [ "$other_mod" = upstream ] || [ "$side" = server ]; } && one_sge=1
long=0
[ "$mine" = smc_rs ] && [ "$other_mod" = smc_rs ] && long=1
counter() { cat "$dbg/$1"; }
# How this side receives, for the test names.
if [ "$mine" = upstream ]; then
	layout="upstream's receive layout"
elif [ "$one_sge" = 1 ]; then
	layout="one receive entry"
else
	layout="two receive entries"
fi

knob_set() {
	[ "$(counter max_recv_sge)" = 0 ] || { echo "max_recv_sge is $(counter max_recv_sge) after loading"; return 1; }
	echo "$one_sge" >"$dbg/max_recv_sge" && [ "$(counter max_recv_sge)" = "$one_sge" ]
}
if [ "$mine" = smc_rs ]; then
	run_test "smc_rs $side: max_recv_sge knob 0 after loading, set to $one_sge" knob_set
	for c in lgr_one_sge rx_llc_long rx_llc_malformed rx_cdc_malformed; do
		eval "before_$c=\$(counter $c)"
	done
fi
before_smcr
lgrs_before=$(smc_lgr_ids | sort | tr '\n' ' ')
[ "$long" = 1 ] && echo 7 >"$dbg/inject"

if [ "$side" = server ]; then
	pair_signal listen
	run_test "$mine server ($layout): $conns SMC-R clients echoed" \
		timeout 600 smc_echo server -f smc -p "$port" -n "$conns"
else
	pair_await listen
	for s in $sizes; do
		run_test "$mine client ($layout) -> $other_mod server, $s bytes echoed" \
			timeout 300 smc_echo client -f smc -a "$peer" -p "$port" -s "$s" -w 90
	done
	run_test "$mine client -> $other_mod server: $many concurrent connections x $many_size bytes echoed (new RMBs on the link group)" \
		timeout 300 smc_echo client -f smc -a "$peer" -p "$port" -s "$many_size" -n "$many" -w 90
fi

# The statistics count $conns more SMC-Rv2 connections of this side, no
# handshake error and no fallback.
run_test "$mine $side: statistics count $conns more SMC-Rv2 connections, no handshake error, no fallback" \
	smcr_stats_moved "$conns"
run_test "$mine $side: rxe carried the payload in RoCE packets both ways" rxe_moved "$total"

# moved NAME WANT: debugfs counter NAME moved by WANT since the start.
moved() {
	local b a
	b=$(eval echo "\$before_$1") a=$(counter "$1")
	echo "$1: $b -> $a (want +$2)"
	[ $((a - b)) -eq "$2" ]
}
none_malformed() { moved rx_llc_malformed 0 && moved rx_cdc_malformed 0; }
if [ "$mine" = smc_rs ]; then
	run_test "smc_rs $side: $one_sge link group(s) made with one receive entry per request" moved lgr_one_sge "$one_sge"
	run_test "smc_rs $side: every LLC and CDC message from $other_mod parsed (none malformed)" none_malformed
fi
if [ "$long" = 1 ]; then
	run_test "smc_rs $side: injected the long LLC message (knob back to 0)" test "$(counter inject)" = 0
	run_test "smc_rs $side: the peer's 128-byte DELETE RKEY received whole ($layout)" \
		moved rx_llc_long 1
fi

# The end: the smc_rs side unloads (between two smc_rs, the client first);
# the other side's link group made here ends within 10 s.
lgrs_after=$(smc_lgr_ids | sort | tr '\n' ' ')
new_lgrs=
for id in $lgrs_after; do
	case " $lgrs_before " in *" $id "*) ;; *) new_lgrs="$new_lgrs $id" ;; esac
done
echo "link groups before: $lgrs_before; after: $lgrs_after; made here:$new_lgrs" >>"$LOG_FILE"

# lgr_ended: none of the link groups made here is listed any more, within
# 10 s.
lgr_ended() {
	local left still end=$((SECONDS + 10))
	[ -n "$new_lgrs" ] || { echo "no link group was made here"; return 1; }
	while :; do
		left=$(smc_lgr_ids | sort | tr '\n' ' ')
		still=
		for id in $new_lgrs; do
			case " $left " in *" $id "*) still="$still $id" ;; esac
		done
		[ -z "$still" ] && { echo "link groups$new_lgrs ended"; break; }
		[ "$SECONDS" -lt "$end" ] || { echo "still listed after 10 s:$still"; return 1; }
		sleep 0.2
	done
	# smc_rs says why (its debug messages are on).
	[ "$mine" = smc_rs ] || return 0
	dmesg | grep 'llc: the peer ends the link' || { echo "no DELETE LINK seen"; return 1; }
}
unloader=$side
[ "$mine" = smc_rs ] && [ "$other_mod" = smc_rs ] && unloader=client
[ "$mine" = upstream ] && unloader=$other
pair_signal done
pair_await done
if [ "$unloader" = "$side" ]; then
	run_test "smc_rs $side: unloads, telling the $other_mod $other (DELETE LINK)" rmmod smc_rs
	pair_signal unloaded
else
	pair_await unloaded
	run_test "$mine $side: the link group ends at the peer's DELETE LINK (within 10 s)" lgr_ended
	[ "$mine" = smc_rs ] && run_test "smc_rs $side: unloads after the peer" rmmod smc_rs
fi
dmesg | grep -E 'smc_rs|SMC-R peer' | tail -20
exit 0
