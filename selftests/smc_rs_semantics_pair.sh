#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Differential socket semantics across the VM pair: smc_semantics_pair runs
# the same scenarios over TCP and over AF_SMC, VM 1 serving and VM 2
# connecting; each side's observations over SMC-R must be the ones TCP gave
# (TCP is the oracle). One TAP line per scenario whose observations all
# match, one per observation that differs. The AF_SMC run must be SMC-R:
# rxe's hardware counters carry its payload, and the module's statistics
# count no TCP fallback.
#
# With smc_rs the module is loaded again afterwards, so that a script run
# after this one in the same boot (smc_rs_smcr.sh) starts from fresh
# statistics; both sides wait for each other at the end.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

smcr=$SMC_TOP/tools/target/release/smcr
counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
# At least the 1 MiB and 8 MiB streams, in RoCE packets of at most 4096 bytes.
min_pkts=$((9 * 1024 * 1024 / 4096))

# Observations where SMC deliberately differs from TCP, as upstream smc.ko
# does: "side|scenario/observation|reason", one a line.
known_divergences=""

round_module
dir=$SMC_OUT/semantics-pair
mkdir -p "$dir"

# probe FAMILY PORT: this side's probe run, observations to $dir.
probe() {
	local args=(-r "$side" -f "$1" -p "$2")
	[ "$side" = client ] && args+=(-a "$server_addr")
	timeout 600 "$here/smc_semantics_pair" "${args[@]}" >"$dir/$side-$1.txt" 2>"$dir/$side-$1.err"
	local rc=$?
	cat "$dir/$side-$1.err"
	return $rc
}

# compare: for each observation in TCP's order, "name<TAB>tcp<TAB>smc"
# ("(none)" where a run has no such line), then names only SMC-R printed.
compare() {
	awk -F': ' '
		{ name = $1; val = substr($0, length($1) + 3) }
		FNR == NR { if (!(name in tcp)) order[n++] = name; tcp[name] = val; next }
		{ smc[name] = val; if (!(name in tcp)) extra[m++] = name }
		END {
			for (i = 0; i < n; i++)
				print order[i] "\t" tcp[order[i]] "\t" (order[i] in smc ? smc[order[i]] : "(none)")
			for (i = 0; i < m; i++)
				print extra[i] "\t(none)\t" smc[extra[i]]
		}' "$dir/$side-inet.txt" "$dir/$side-smc.txt"
}

# known NAME: the reason when NAME is a listed divergence of this side.
known() {
	printf '%s\n' "$known_divergences" | awk -F'|' -v s="$side" -v n="$1" \
		'$1 == s && $2 == n { print $3; exit }'
}

report() {
	local name tcp smc scn last="" same=0 reason
	flush() {
		[ -n "$last" ] && [ "$same" -gt 0 ] &&
			echo "ok - semantics over SMC-R as over TCP, $side: $last ($same observations the same)" |
			tee -a "$TAP_FILE"
		same=0
	}
	while IFS=$'\t' read -r name tcp smc; do
		scn=${name%%/*}
		[ "$scn" = "$last" ] || { flush; last=$scn; }
		if [ "$tcp" = "$smc" ]; then
			same=$((same + 1))
			continue
		fi
		reason=$(known "$name")
		if [ -n "$reason" ]; then
			skip_test "semantics over SMC-R, $side: $name: TCP '$tcp', SMC-R '$smc'" "$reason"
		else
			echo "not ok - semantics over SMC-R as over TCP, $side: $name: TCP '$tcp', SMC-R '$smc'" |
				tee -a "$TAP_FILE"
		fi
	done < <(compare)
	flush
}

rxe_rose() {
	local after
	after=$(cat "$counters/$1")
	echo "rxe $1: $2 -> $after (at least $min_pkts expected)"
	[ $((after - $2)) -ge "$min_pkts" ]
}

no_fallback() {
	"$smcr" -d stats
	"$smcr" -d stats | grep -Eq '^  TCP fallback +0 '
}

run_test "semantics probe over TCP ran to its end ($side side)" probe inet 7600
[ "$side" = client ] && pkts=$(cat "$counters/sent_pkts") || pkts=$(cat "$counters/rcvd_pkts")
run_test "semantics probe over AF_SMC ran to its end ($mine $side side)" probe smc 7620
if [ "$side" = client ]; then
	run_test "rxe sent the AF_SMC probe's payload (client side)" rxe_rose sent_pkts "$pkts"
else
	run_test "rxe received the AF_SMC probe's payload (server side)" rxe_rose rcvd_pkts "$pkts"
fi
run_test "the AF_SMC probe's connections were SMC-R, no TCP fallback ($side side)" no_fallback
report
[ "$mine" = smc_rs ] && run_test "smc_rs unloads and loads again after the probe ($side side)" reload_smc_rs

# Both sides are done before whatever runs next in this boot.
touch "$dir/$side-done"
for _ in $(seq 1200); do
	[ -e "$dir/$other-done" ] && break
	sleep 0.1
done
exit 0
