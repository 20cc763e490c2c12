# SPDX-License-Identifier: GPL-2.0
# Operators' view of a held SMC-R connection, checked against what the VM
# knows: smcss -R / -a (smc_diag), smcr device, smcr linkgroup and
# link-show (SMC generic netlink), smcr -d stats. The same tools read
# smc_rs and upstream smc.ko. Sourced by smc_rs_smcr.sh (needs $peer,
# $side, $mine, lib.sh's run_test).

view_tools=$SMC_TOP/tools/target/release
view_dev=/sys/class/infiniband/rxe0/ports/1

# mapped_gid VM: the RoCE v2 GID of 10.10.0.VM, as sysfs and smc write it.
mapped_gid() {
	printf '0000:0000:0000:0000:0000:ffff:0a0a:%04x' "$1"
}
my_gid=$(mapped_gid "$SMC_VM")
peer_gid=$(mapped_gid $((3 - SMC_VM)))
[ "$side" = server ] && my_role=SERV || my_role=CLNT

# rxe0 port 1 holds $my_gid as a RoCE v2 GID.
view_gid_is_roce_v2() {
	local f i
	for f in "$view_dev"/gids/*; do
		i=${f##*/}
		if [ "$(cat "$f" 2>/dev/null)" = "$my_gid" ] &&
			[ "$(cat "$view_dev/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ]; then
			echo "GID $my_gid is rxe0 port 1 index $i, RoCE v2"
			return 0
		fi
	done
	echo "no RoCE v2 GID $my_gid on rxe0 port 1"
	return 1
}

# expect WHAT GOT WANTED
expect() {
	[ "$2" = "$3" ] && return 0
	echo "$1: got '$2', want '$3'"
	return 1
}

# smcss -R: the connection to the peer, mode SMCR, our role, rxe0 port 1,
# link 1, both GIDs; -Rd: a token; -a: mode SMCR.
view_smcss() {
	local st uid ino loc rem intf mode role ib port link gid pgid rc=0
	"$view_tools/smcss" -R && "$view_tools/smcss" -Rd && "$view_tools/smcss" -a || return 1
	read -r st uid ino loc rem intf mode role ib port link gid pgid < <(
		"$view_tools/smcss" -R | grep -F " 10.10.0.$((3 - SMC_VM)):" | head -1)
	expect state "$st" ACTIVE || rc=1
	expect mode "$mode" SMCR || rc=1
	expect role "$role" "$my_role" || rc=1
	expect ib-device "$ib" rxe0 || rc=1
	expect port "$port" 01 || rc=1
	expect link-id "$link" 01 || rc=1
	expect gid "$gid" "$my_gid" || rc=1
	expect peer-gid "$pgid" "$peer_gid" || rc=1
	# -Rd: Shutd, Token come after Mode; the token is never 0.
	"$view_tools/smcss" -Rd | grep -F " 10.10.0.$((3 - SMC_VM)):" | head -1 |
		awk '{ if ($9 == "00000000" || $7 != "SMCR") exit 1 }' || { echo "no token"; rc=1; }
	"$view_tools/smcss" -a | grep -F " 10.10.0.$((3 - SMC_VM)):" | grep -q ' SMCR' ||
		{ echo "smcss -a: no SMCR socket to the peer"; rc=1; }
	return $rc
}

# smcr device: eth0 on rxe0 port 1, ACTIVE, critical, at least one link.
view_device() {
	local nd ib p state type crit links rc=0
	"$view_tools/smcr" device && "$view_tools/smcr" -d device || return 1
	read -r nd ib p state type crit links < <("$view_tools/smcr" device | grep ' rxe0 ' | head -1)
	expect net-dev "$nd" eth0 || rc=1
	expect ib-dev "$ib" rxe0 || rc=1
	expect ib-port "$p" 1 || rc=1
	expect ib-state "$state" ACTIVE || rc=1
	expect crit "$crit" Yes || rc=1
	[ "${links:-0}" -ge 1 ] || { echo "#Links ${links:-none}"; rc=1; }
	return $rc
}

# smcr linkgroup: a link group of our role, SINGLE, with connections;
# link-show -dd: its link on eth0, active, rxe0 port 1, both GIDs.
view_linkgroup() {
	local id role type vlan conns lid lrole ltype nd state lconns uid puid ib p gid pgid rc=0
	"$view_tools/smcr" linkgroup && "$view_tools/smcr" -dd linkgroup link-show || return 1
	read -r id role type vlan conns < <("$view_tools/smcr" linkgroup | grep " $my_role " | head -1)
	expect lg-role "$role" "$my_role" || rc=1
	expect lg-type "$type" SINGLE || rc=1
	[ "${conns:-0}" -ge 1 ] || { echo "#Conns ${conns:-none}"; rc=1; }
	read -r lid lrole ltype nd state lconns uid puid ib p gid pgid < <(
		"$view_tools/smcr" -dd linkgroup link-show | grep "^$id " | head -1)
	expect link-lg-id "$lid" "$id" || rc=1
	expect link-net-dev "$nd" eth0 || rc=1
	expect link-state "$state" LINK_ACTIVE || rc=1
	[ "${lconns:-0}" -ge 1 ] || { echo "link #Conns ${lconns:-none}"; rc=1; }
	expect link-ib-dev "$ib" rxe0 || rc=1
	expect link-ib-port "$p" 1 || rc=1
	expect link-gid "$gid" "$my_gid" || rc=1
	expect link-peer-gid "$pgid" "$peer_gid" || rc=1
	# The link group id given back selects it.
	"$view_tools/smcr" linkgroup "$id" | grep -q "^$id $my_role " || { echo "LG-ID filter"; rc=1; }
	return $rc
}

# smcr -d stats: answers, and counts SMC-R connections.
view_stats() {
	"$view_tools/smcr" -d stats | tee /dev/stderr | grep -Eq '^  SMC connections +[1-9]'
}

# view_held: every check, on this side, while the connection is held.
view_held() {
	run_test "$mine $side: rxe0 port 1 has the VM's RoCE v2 GID" view_gid_is_roce_v2
	run_test "$mine $side: smcss -R/-Rd/-a show the held connection as SMC-R" view_smcss
	run_test "$mine $side: smcr device shows rxe0 port 1 with its link" view_device
	run_test "$mine $side: smcr linkgroup and link-show show the link group" view_linkgroup
	run_test "$mine $side: smcr -d stats counts SMC-R connections" view_stats
	run_test "$mine $side: smc_diag sends CONNINFO/LGRINFO only when asked; odd requests answered" \
		python3 "$SMC_TOP/selftests/smc_diag_ext.py" "10.10.0.$((3 - SMC_VM))"
}

# view_server_side: waits (up to 300 s) for the client to hold its
# connection, checks, then lets the client go on.
view_server_side() {
	local i
	for i in $(seq 1500); do
		[ -e "$SMC_OUT/held" ] && break
		sleep 0.2
	done
	if [ -e "$SMC_OUT/held" ]; then
		view_held
	else
		run_test "$mine server: the client held an SMC-R connection" false
	fi
	touch "$SMC_OUT/server-viewed"
}

# view_client_side: holds a connection to the server, checks, lets go
# once the server has checked too; the connection's echo must succeed.
view_client_side() {
	local holder i
	python3 "$SMC_TOP/selftests/smcr_hold.py" "$peer" 7301 "$SMC_OUT/held" \
		"$SMC_OUT/server-viewed" "$SMC_OUT/client-viewed" >>"$LOG_FILE" 2>&1 &
	holder=$!
	for i in $(seq 600); do
		[ -e "$SMC_OUT/held" ] && break
		kill -0 "$holder" 2>/dev/null || break
		sleep 0.2
	done
	view_held
	touch "$SMC_OUT/client-viewed"
	run_test "$mine client: the held SMC-R connection echoes after the views" wait "$holder"
}
