#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# An orphaned SMC-R connection across the VM pair: VM 2 (smc_rs) fills a
# connection whose server on VM 1 (smc_rs or upstream) reads nothing, and
# closes it. The close completes in the background; as TCP gives up on an
# orphan whose peer takes nothing, smc_rs aborts the connection after 60 s
# of no progress: it stays on its link group until then and leaves it
# afterwards (the server only takes the connection and reads it late).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
port=7309
go=$SMC_OUT/orphan-go
result=$SMC_OUT/orphan-server.txt
served=$SMC_OUT/orphan-served

if lsmod | grep -q '^smc '; then
	mine=upstream
else
	mine=smc_rs
	# After smc_rs_smcr.sh, which unloads it at its end.
	lsmod | grep -q '^smc_rs ' || insmod "$SMC_TOP/smc_rs.ko"
	"$here/tools/smc_ueid" add SMC-RS-TESTBED 2>/dev/null
fi

if [ "$side" = server ]; then
	# The server is the orphan's passive peer: what its reader gets is
	# logged, not judged (upstream 6.12 ended the stream with EOF after the
	# bytes its RMB held in one run, and in another the read had not ended
	# when the client unloaded).
	timeout 150 python3 "$here/smc_orphan_peer.py" server "$port" "$go" >"$result" 2>&1
	echo "$mine server: $(cat "$result") (the client wrote $(cat "$SMC_OUT/orphan-wrote" 2>/dev/null))" >>"$LOG_FILE"
	touch "$served"
	[ "$mine" = smc_rs ] && run_test "smc_rs unloads after the orphan (server side)" rmmod smc_rs
	exit 0
fi

# held: connections on this side's SMC-R link groups (smcr linkgroup's
# #Conns). The orphan has no socket any more, so no smc_diag row; its
# connection stays on its link group until it ends. This boot's link
# groups are the orphan's only: smc_rs was loaded afresh above.
held() {
	"$SMC_TOP/tools/target/release/smcr" linkgroup 2>/dev/null |
		awk '$2 == "CLNT" { n += $5 } END { print n + 0 }'
}

orphan_aborted() {
	local t0 rc=0
	python3 "$here/smc_orphan_peer.py" client "$peer" "$port" | tee "$SMC_OUT/orphan-wrote.txt"
	awk '/^wrote / { print $2 }' "$SMC_OUT/orphan-wrote.txt" >"$SMC_OUT/orphan-wrote"
	[ -s "$SMC_OUT/orphan-wrote" ] || return 1
	t0=$(date +%s)
	sleep 2
	"$SMC_TOP/tools/target/release/smcr" linkgroup
	[ "$(held)" -ge 1 ] || { echo "the closed connection is not on a link group"; return 1; }
	while [ $(($(date +%s) - t0)) -lt 45 ]; do sleep 1; done
	echo "after 45 s: $(held) connection(s)"
	[ "$(held)" -ge 1 ] || { echo "aborted too early"; return 1; }
	while [ $(($(date +%s) - t0)) -lt 90 ]; do
		[ "$(held)" = 0 ] && break
		sleep 1
	done
	echo "after $(($(date +%s) - t0)) s: $(held) connection(s)"
	"$SMC_TOP/tools/target/release/smcr" linkgroup
	[ "$(held)" = 0 ] || rc=1
	return $rc
}
if [ "$mine" = smc_rs ]; then
	run_test "smc_rs client: an orphan whose peer reads nothing is aborted after 60 s" orphan_aborted
else
	skip_test "smc_rs client: an orphan whose peer reads nothing is aborted after 60 s" "client runs upstream"
fi
touch "$go"
# The server reads and closes its end over the link before this side
# unloads: a peer that vanishes while upstream 6.12 closes such a connection
# can leave upstream's close waiting on its last CDC send for good (its
# link group's termination then waits for that socket's lock).
for _ in $(seq 60); do
	[ -e "$served" ] && break
	sleep 1
done
# Lingering link groups do not keep the module.
[ "$mine" = smc_rs ] && run_test "smc_rs unloads after the orphan (client side)" rmmod smc_rs
exit 0
