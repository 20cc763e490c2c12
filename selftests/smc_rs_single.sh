#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Single-VM tests of smc_rs: loading, the family it owns, echo over AF_SMC
# and against plain TCP on loopback, unloading with and without open sockets.
# Runs inside a VM with smc_rs.ko loaded (see scripts/vm.sh).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
ko=$SMC_TOP/smc_rs.ko

t_loaded() {
	lsmod | grep -q '^smc_rs ' &&
		grep -E '^SMC +[0-9]+ +[0-9]+ .* smc_rs' /proc/net/protocols &&
		grep -E '^INET_SMC +[0-9]+ +[0-9]+ .* smc_rs' /proc/net/protocols &&
		grep -E '^INET6_SMC +[0-9]+ +[0-9]+ .* smc_rs' /proc/net/protocols
}

t_socket_kinds() {
	# AF_SMC stream sockets exist; other types and protocols are refused
	# like upstream does (ESOCKTNOSUPPORT, EPROTONOSUPPORT).
	"$here/smc_echo" hold -f smc -p 7000 </dev/null &&
		"$here/smc_echo" hold -f smc6 -p 7000 </dev/null &&
		"$here/smc_echo" probe
}

t_upstream_conflict() {
	# With upstream smc.ko owning family 43, loading smc_rs fails cleanly
	# and says why; afterwards smc_rs loads again.
	rmmod smc_rs || return 1
	modprobe smc || return 1
	if insmod "$ko" 2>/dev/null; then
		rmmod smc_rs
		return 1
	fi
	dmesg | tail -n 20 | grep -q 'already registered' || return 1
	rmmod smc || return 1
	insmod "$ko"
}

t_rmmod_busy() {
	# A live socket pins the module: rmmod is refused, then succeeds once
	# the socket is closed.
	local dir fifo pid
	dir=$(mktemp -d)
	fifo=$dir/hold.fifo
	mkfifo "$fifo"
	"$here/smc_echo" hold -f smc -p 7010 <"$fifo" >"$dir/hold.out" &
	pid=$!
	exec 9>"$fifo"
	for _ in $(seq 50); do grep -q holding "$dir/hold.out" && break; sleep 0.1; done
	grep -q holding "$dir/hold.out" || { exec 9>&-; return 1; }
	if rmmod smc_rs 2>/dev/null; then
		exec 9>&-
		return 1
	fi
	exec 9>&-
	wait "$pid" || return 1
	rmmod smc_rs && insmod "$ko"
}

# Differential semantics: the same scenarios over TCP and over AF_SMC must
# observe the same results (TCP is the oracle).
t_semantics() {
	local tcp=$1 smc=$2 dir
	dir=$(mktemp -d)
	"$here/smc_semantics" -f "$tcp" -p 7400 >"$dir/tcp.txt" &&
		"$here/smc_semantics" -f "$smc" -p 7500 >"$dir/smc.txt" || return 1
	diff -u "$dir/tcp.txt" "$dir/smc.txt"
}

# Short connections in 20 threads (`make check-long`: 500 each).
short_rounds=$(scaled 100 500)
t_short_connections() {
	local spid rc=0
	timeout 600 "$here/smc_echo" server -f smc -b 127.0.0.1 -p 7009 -n $((20 * short_rounds)) &
	spid=$!
	timeout 600 "$here/smc_echo" client -f smc -a 127.0.0.1 -p 7009 -s 256 -n 20 -r "$short_rounds" || rc=1
	wait "$spid" || rc=1
	return $rc
}

t_listener_close_under_load() {
	# Listeners close while hundreds of connections are queued or in their
	# CLC handshake; then nothing may be left holding the module (a few
	# seconds for aborted handshake jobs to finish).
	"$here/smc_echo" churn -f smc -p 7013 -n 200 &&
		"$here/smc_echo" churn -f smc6 -p 7014 -n 100 &&
		"$here/smc_echo" churn -f ipproto-smc -p 7015 -n 100 || return 1
	for _ in $(seq 50); do
		rmmod smc_rs 2>/dev/null && break
		sleep 0.1
	done
	lsmod | grep -q '^smc_rs ' && return 1
	insmod "$ko"
}

t_fuzz_listener() {
	# 1000 clients with the SMC option on their SYNs (BPF) send a CLC
	# header of random length, flags and content (mostly proposals) to an
	# smc_rs listener; it declines, falls back or drops each, and must
	# still serve an ordinary AF_SMC client afterwards.
	local spid rc=0
	smc_option on smc_option_on_syn || return 1
	timeout 300 "$here/smc_echo" server -f smc -b 127.0.0.1 -p 7016 -n 1000000 &
	spid=$!
	timeout 240 "$here/smc_echo" client -f inet -a 127.0.0.1 -p 7016 -s 1 -n 20 -r 50 -w 10 -X fuzz || rc=1
	smc_option off smc_option_on_syn || rc=1
	timeout 60 "$here/smc_echo" client -f smc -a 127.0.0.1 -p 7016 -s 1048576 -w 10 || rc=1
	kill "$spid"
	wait "$spid" 2>/dev/null
	return $rc
}

# smc_possible up|down: an RDMA device with its port up (rxe on a veth
# pair); with a UEID in the loaded module (ueid_on), an AF_SMC client has
# something to propose and puts the SMC option on its SYNs, with upstream
# smc.ko and smc_rs alike. Without them smc_rs does not offer SMC and
# records NOSMCDEV at once, where upstream asks the peer first (and records
# PEERNOSMC for a plain TCP peer): tests that compare the two on plain TCP
# peers run with them.
smc_possible() {
	case "$1" in
	up)
		smc_possible down 2>/dev/null
		ip link add smcfb0 type veth peer name smcfb1 &&
			ip link set smcfb1 up && ip link set smcfb0 up &&
			ip addr add 10.98.0.1/24 dev smcfb0 &&
			rdma link add smcfbrxe0 type rxe netdev smcfb0 || return 1
		# The port goes ACTIVE once the link is up.
		for _ in $(seq 50); do
			grep -q ACTIVE /sys/class/infiniband/smcfbrxe0/ports/1/state 2>/dev/null && return 0
			sleep 0.1
		done
		return 1
		;;
	down)
		rdma link delete smcfbrxe0
		ip link del smcfb0
		;;
	esac
}

ueid_on() {
	"$here/tools/smc_ueid" add SMC-RS-TESTBED
}

t_dynamic_debug() {
	# The protocol decisions are pr_debug messages the operator switches
	# on through dynamic debug: off by default, then an AF_SMC client of a
	# plain TCP server must log its fallback with upstream's reason code.
	local ctl=/sys/kernel/debug/dynamic_debug/control rc=0
	since() { dmesg | sed -n "/smc_rs-test: $1/,\$p"; }
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug || return 1
	grep -q '\[smc_rs\]smc_rs_pr_debug =_' "$ctl" || return 1
	echo "smc_rs-test: debug off" >/dev/kmsg
	echo_pair inet smc 127.0.0.1 127.0.0.1 7017 1024 || return 1
	since "debug off" | grep -q 'smc_rs: ' && return 1
	echo 'module smc_rs +p' >"$ctl" || return 1
	echo "smc_rs-test: debug on" >/dev/kmsg
	echo_pair inet smc 127.0.0.1 127.0.0.1 7018 1024 || rc=1
	# Nothing to propose (no RDMA device, no UEID): no SMC, NOSMCDEV.
	since "debug on" | grep -q 'smc_rs: Client: fallback to TCP, reason 0x03030000' || rc=1
	# Something to propose: the option on the SYN, the TCP peer without it.
	smc_possible up && ueid_on || rc=1
	echo "smc_rs-test: debug on, SMC possible" >/dev/kmsg
	echo_pair inet smc 127.0.0.1 127.0.0.1 7019 1024 || rc=1
	"$here/tools/smc_ueid" flush
	smc_possible down
	echo 'module smc_rs -p' >"$ctl"
	since "debug on" | grep 'smc_rs: '
	since "debug on, SMC possible" | grep -q 'smc_rs: Client: fallback to TCP, reason 0x03010000' || rc=1
	return $rc
}

t_ib_devices() {
	# smc_rs is an ib_core client: it sees RDMA devices come and go (and
	# those present when it loads), their ports and RoCEv2 GIDs, and port
	# events. Dynamic debug shows what it saw.
	local ctl=/sys/kernel/debug/dynamic_debug/control rc=0 log
	since() { dmesg | sed -n "/smc_rs-test: $1/,\$p"; }
	ip link add smcv0 type veth peer name smcv1 || return 1
	ip link set smcv1 up && ip link set smcv0 up && ip addr add 10.99.0.1/24 dev smcv0 || rc=1
	echo 'module smc_rs +p' >"$ctl" || return 1
	echo "smc_rs-test: ib hotplug" >/dev/kmsg
	rdma link add smcrxe0 type rxe netdev smcv0 || rc=1
	sleep 1
	ip link set smcv0 down && sleep 1 && ip link set smcv0 up && sleep 1
	rdma link delete smcrxe0 || rc=1
	log=$(since "ib hotplug")
	echo "$log" | grep 'smc_rs: ib:'
	echo "$log" | grep -q 'smc_rs: ib: smcrxe0 added: 1 port(s), max_qp_wr [1-9]' || rc=1
	echo "$log" | grep -q 'smc_rs: ib: smcrxe0 port 1: ACTIVE' || rc=1
	echo "$log" | grep -q 'smc_rs: ib: smcrxe0 port 1 gid\[[0-9]*\] 0:0:0:0:0:ffff:a63:1 RoCEv2 ifindex [1-9]' || rc=1
	echo "$log" | grep -q 'smc_rs: ib: smcrxe0 event PortError(1)' || rc=1
	echo "$log" | grep -q 'smc_rs: ib: smcrxe0 event PortActive(1)' || rc=1
	echo "$log" | grep -q 'smc_rs: ib: smcrxe0 removed' || rc=1
	# A device present when the module loads is added at registration, and
	# removed when the module goes.
	rdma link add smcrxe0 type rxe netdev smcv0 || rc=1
	echo "smc_rs-test: ib load" >/dev/kmsg
	rmmod smc_rs && insmod "$SMC_TOP/smc_rs.ko" dyndbg=+p || rc=1
	rmmod smc_rs && insmod "$SMC_TOP/smc_rs.ko" || rc=1
	log=$(since "ib load")
	echo "$log" | grep 'smc_rs: ib:'
	[ "$(echo "$log" | grep -c 'smc_rs: ib: smcrxe0 added')" = 1 ] || rc=1
	echo "$log" | grep -q 'smc_rs: ib: smcrxe0 removed' || rc=1
	echo 'module smc_rs -p' >"$ctl"
	rdma link delete smcrxe0
	ip link del smcv0
	return $rc
}

# ueid_observations: what the UEID commands of SMC_GEN_NETLINK answer, one
# line per step (run against smc_rs and against upstream smc.ko).
ueid_observations() {
	local u
	obs() { printf '%s: %s\n' "$1" "$(shift; "$@" 2>&1 | sed 's/^smc_ueid [a-z-]*: //' | tr '\n' ' ')"; }
	obs "flush" smc_ueid flush
	obs "empty" smc_ueid show
	obs "add" smc_ueid add smc-rs-testbed
	obs "dump" smc_ueid show
	obs "again" smc_ueid add smc-rs-testbed
	obs "bad first" smc_ueid add .bad
	obs "blank inside" smc_ueid add 'A B'
	obs "lower case" smc_ueid add-raw 33 lower
	obs "short attribute" smc_ueid add-raw 20 SHORT
	obs "long attribute" smc_ueid add-raw 40 LONG
	obs "all blank" smc_ueid add-raw 33 ' '
	for u in b c d e; do obs "add $u" smc_ueid add "$u"; done
	obs "full" smc_ueid show
	obs "del b" smc_ueid del b
	obs "del b again" smc_ueid del b
	obs "after del" smc_ueid show
	obs "unprivileged add" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all smc_ueid add x
	obs "unprivileged dump" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all smc_ueid show
	obs "unprivileged flush" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all smc_ueid flush
	obs "flush" smc_ueid flush
	obs "flushed" smc_ueid show
}

t_ueid_table() {
	# The UEID table over upstream's generic netlink ABI: smc_rs must
	# answer every step exactly as upstream smc.ko does.
	local dir rc=0
	dir=$(mktemp -d)
	ueid_observations >"$dir/smc_rs.txt" || return 1
	rmmod smc_rs && modprobe smc || return 1
	ueid_observations >"$dir/upstream.txt"
	rmmod smc; insmod "$SMC_TOP/smc_rs.ko" || return 1
	cat "$dir/smc_rs.txt"
	grep -q '^dump: SMC-RS-TESTBED $' "$dir/smc_rs.txt" || rc=1
	diff -u "$dir/upstream.txt" "$dir/smc_rs.txt" || rc=1
	return $rc
}

t_smc_diag() {
	# sock_diag for AF_SMC in smc_diag's ABI: sockets in known states
	# (unconnected, listening, fallback clients shut down or not, an
	# accepted fallback) must be reported exactly as upstream reports them.
	local dir rc=0
	dir=$(mktemp -d)
	smc_possible up && ueid_on || return 1
	python3 "$here/smc_diag_probe.py" 7600 >"$dir/smc_rs.txt" || return 1
	rmmod smc_rs && modprobe smc && modprobe smc_diag && ueid_on || return 1
	python3 "$here/smc_diag_probe.py" 7700 >"$dir/upstream.txt" || rc=1
	rmmod smc_diag; rmmod smc; insmod "$SMC_TOP/smc_rs.ko" || return 1
	smc_possible down
	cat "$dir/smc_rs.txt"
	[ "$(wc -l <"$dir/smc_rs.txt")" -ge 8 ] || rc=1
	diff -u "$dir/upstream.txt" "$dir/smc_rs.txt" || rc=1
	return $rc
}

t_genl_info() {
	# SMC_GEN_NETLINK system information and the namespace's handshake
	# limitation (the SMC_LIMIT_HS of new sockets): the same answers as
	# upstream smc.ko.
	local dir rc=0
	dir=$(mktemp -d)
	python3 "$here/smc_genl_probe.py" >"$dir/smc_rs.txt" || return 1
	rmmod smc_rs && modprobe smc || return 1
	python3 "$here/smc_genl_probe.py" >"$dir/upstream.txt" || rc=1
	rmmod smc; insmod "$SMC_TOP/smc_rs.ko" || return 1
	cat "$dir/smc_rs.txt"
	# Off, on after enabling (and new sockets start with it), off again.
	[ "$(grep -c '^hs limitation: cmd 16 1=0$' "$dir/smc_rs.txt")" = 2 ] || rc=1
	[ "$(grep -c '^hs limitation: cmd 16 1=1$' "$dir/smc_rs.txt")" = 1 ] || rc=1
	[ "$(grep -c '^new socket SMC_LIMIT_HS: 1$' "$dir/smc_rs.txt")" = 1 ] || rc=1
	grep -q '^sys info: cmd 1 1{1=2 2=1 3=1 6=1 4=' "$dir/smc_rs.txt" || rc=1
	diff -u "$dir/upstream.txt" "$dir/smc_rs.txt" || rc=1
	return $rc
}

# The net.smc sysctls, as upstream 6.12 has them (net/smc/smc_sysctl.c),
# plus smcr_max_send_wr/smcr_max_recv_wr of later upstream.
sysctl_defaults() {
	cat <<-EOF
	net.smc.autocorking_size = 65536
	net.smc.limit_smc_hs = 0
	net.smc.rmem = 65536
	net.smc.smcd_loopback = 1
	net.smc.smcr_buf_type = 0
	net.smc.smcr_max_conns_per_lgr = 255
	net.smc.smcr_max_links_per_lgr = 2
	net.smc.smcr_max_recv_wr = 48
	net.smc.smcr_max_send_wr = 16
	net.smc.smcr_testlink_time = 30
	net.smc.wmem = 65536
	EOF
}

# sysctl_list [NETNS]: the namespace's net.smc sysctls, sorted.
sysctl_list() {
	if [ -n "${1:-}" ]; then
		ip netns exec "$1" sysctl net.smc | sort
	else
		sysctl net.smc | sort
	fi
}

# sysctl_refused NAME VALUE: writing VALUE fails with EINVAL and leaves the
# old value.
sysctl_refused() {
	local f=/proc/sys/net/smc/$1 before err
	before=$(cat "$f")
	if err=$( (echo "$2" >"$f") 2>&1); then
		echo "$1=$2 accepted"
		return 1
	fi
	case $err in *"Invalid argument"*) ;; *) echo "$1=$2: $err"; return 1 ;; esac
	[ "$(cat "$f")" = "$before" ] || { echo "$1 changed to $(cat "$f")"; return 1; }
}

t_sysctl_table() {
	# Exactly upstream's names, defaults, modes (0644) and bounds; the
	# same table as upstream smc.ko's, but for the two later knobs and our smcd_loopback.
	local dir rc=0 f
	dir=$(mktemp -d)
	sysctl_list >"$dir/smc_rs.txt"
	cat "$dir/smc_rs.txt"
	diff -u <(sysctl_defaults) "$dir/smc_rs.txt" || rc=1
	for f in /proc/sys/net/smc/*; do
		[ "$(stat -c %a "$f")" = 644 ] || { echo "mode of $f"; rc=1; }
	done
	sysctl_refused autocorking_size -1 || rc=1
	sysctl_refused smcr_buf_type 3 || rc=1
	sysctl_refused wmem 16383 || rc=1
	sysctl_refused wmem 1073741824 || rc=1
	sysctl_refused rmem 0 || rc=1
	sysctl_refused rmem 1073741824 || rc=1
	sysctl_refused smcr_max_links_per_lgr 0 || rc=1
	sysctl_refused smcr_max_links_per_lgr 3 || rc=1
	sysctl_refused smcr_max_conns_per_lgr 15 || rc=1
	sysctl_refused smcr_max_conns_per_lgr 256 || rc=1
	sysctl_refused limit_smc_hs 2 || rc=1
	sysctl_refused limit_smc_hs -1 || rc=1
	sysctl_refused smcr_max_send_wr 1 || rc=1
	sysctl_refused smcr_max_send_wr 2049 || rc=1
	sysctl_refused smcr_max_recv_wr 1 || rc=1
	sysctl_refused smcr_max_recv_wr 2049 || rc=1
	sysctl_refused smcd_loopback 2 || rc=1
	# The bounds themselves are taken; the jiffies knob reads back seconds.
	sysctl -w net.smc.wmem=1073741823 net.smc.rmem=16384 \
		net.smc.smcr_buf_type=2 net.smc.smcr_testlink_time=7 \
		net.smc.autocorking_size=4294967295 net.smc.smcr_max_send_wr=2048 \
		net.smc.smcr_max_recv_wr=2 net.smc.smcr_max_conns_per_lgr=16 \
		net.smc.smcr_max_links_per_lgr=1 || rc=1
	[ "$(sysctl -n net.smc.smcr_testlink_time)" = 7 ] || rc=1
	[ "$(sysctl -n net.smc.autocorking_size)" = 4294967295 ] || rc=1
	[ "$(sysctl -n net.smc.wmem)" = 1073741823 ] || rc=1
	# AF_SMC still works with the extremes set.
	echo_pair smc smc 127.0.0.1 127.0.0.1 7020 65536 || rc=1
	# Back to the defaults for the tests that follow.
	sysctl_defaults | sed 's/ //g' | xargs sysctl -q -w || rc=1
	diff -u <(sysctl_defaults) <(sysctl_list) || rc=1
	# Upstream smc.ko's own table: the same lines, but for the later two and smcd_loopback.
	rmmod smc_rs && modprobe smc || return 1
	sysctl_list >"$dir/upstream.txt"
	rmmod smc; insmod "$SMC_TOP/smc_rs.ko" || return 1
	cat "$dir/upstream.txt"
	diff -u <(grep -v -e '_wr = ' -e 'smcd_loopback = ' "$dir/smc_rs.txt") "$dir/upstream.txt" || rc=1
	return $rc
}

t_sysctl_netns() {
	# Each network namespace has its own table with the defaults; a write
	# in one does not show in another; namespaces made before the module
	# was loaded get theirs too, and namespaces go away cleanly.
	local rc=0
	ip netns add smcsys1 || return 1
	sysctl -w net.smc.rmem=32768 net.smc.limit_smc_hs=1 || rc=1
	diff -u <(sysctl_defaults) <(sysctl_list smcsys1) || rc=1
	ip netns exec smcsys1 sysctl -w net.smc.wmem=20000 net.smc.smcr_testlink_time=0 || rc=1
	[ "$(sysctl -n net.smc.wmem)" = 65536 ] || rc=1
	[ "$(sysctl -n net.smc.rmem)" = 32768 ] || rc=1
	[ "$(ip netns exec smcsys1 sysctl -n net.smc.rmem)" = 65536 ] || rc=1
	[ "$(ip netns exec smcsys1 sysctl -n net.smc.wmem)" = 20000 ] || rc=1
	[ "$(ip netns exec smcsys1 sysctl -n net.smc.limit_smc_hs)" = 0 ] || rc=1
	# AF_SMC in the namespace with its own values.
	ip -n smcsys1 link set lo up || rc=1
	ip netns exec smcsys1 "$here/smc_echo" hold -f smc -p 7021 </dev/null || rc=1
	# Reloading the module: the existing namespace gets a fresh table.
	rmmod smc_rs && insmod "$SMC_TOP/smc_rs.ko" || rc=1
	diff -u <(sysctl_defaults) <(sysctl_list smcsys1) || rc=1
	diff -u <(sysctl_defaults) <(sysctl_list) || rc=1
	ip netns add smcsys2 || rc=1
	diff -u <(sysctl_defaults) <(sysctl_list smcsys2) || rc=1
	ip netns del smcsys1
	ip netns del smcsys2
	sleep 1
	rmmod smc_rs && insmod "$SMC_TOP/smc_rs.ko" || rc=1
	return $rc
}

t_sysctl_limit_hs() {
	# limit_smc_hs and SMC_NETLINK's handshake limitation are one value.
	local rc=0 out
	sysctl -w net.smc.limit_smc_hs=1 || rc=1
	out=$(python3 "$here/smc_genl_probe.py" hs)
	echo "$out"
	[ "$out" = "hs limitation: cmd 16 1=1" ] || rc=1
	python3 "$here/smc_genl_probe.py" hs disable || rc=1
	[ "$(sysctl -n net.smc.limit_smc_hs)" = 0 ] || rc=1
	python3 "$here/smc_genl_probe.py" hs enable || rc=1
	[ "$(sysctl -n net.smc.limit_smc_hs)" = 1 ] || rc=1
	sysctl -w net.smc.limit_smc_hs=0 || rc=1
	out=$(python3 "$here/smc_genl_probe.py" hs)
	[ "$out" = "hs limitation: cmd 16 1=0" ] || rc=1
	return $rc
}

t_smcss() {
	# Our smcss (tools/) against smc_rs and against upstream smc.ko +
	# smc_diag.ko, for the same sockets: the same table (inodes and the
	# base port aside), fallback reasons in the Mode column.
	local smcss=$SMC_TOP/tools/target/release/smcss dir rc=0 opt
	dir=$(mktemp -d)
	norm() { sed -E 's/^([A-Z0-9]+ +[0-9-]+ )[0-9]+/\1INODE/; s/:7[67]([0-9][0-9])\b/:7X\1/g'; }
	smc_possible up && ueid_on || return 1
	for opt in 20:-a 40:-l 60:; do
		python3 "$here/smc_diag_probe.py" "76${opt%%:*}" "$smcss" ${opt#*:} | norm >>"$dir/smc_rs.txt" || return 1
	done
	rmmod smc_rs && modprobe smc && modprobe smc_diag && ueid_on || return 1
	for opt in 20:-a 40:-l 60:; do
		python3 "$here/smc_diag_probe.py" "77${opt%%:*}" "$smcss" ${opt#*:} | norm >>"$dir/upstream.txt" || rc=1
	done
	rmmod smc_diag; rmmod smc; insmod "$SMC_TOP/smc_rs.ko" || return 1
	smc_possible down
	cat "$dir/smc_rs.txt"
	grep -q 'TCP 0x03010000' "$dir/smc_rs.txt" || rc=1
	diff -u "$dir/upstream.txt" "$dir/smc_rs.txt" || rc=1
	# Without the module: a clear error, exit status 1.
	rmmod smc_rs || return 1
	"$smcss" >"$dir/none.txt" 2>&1 && rc=1
	cat "$dir/none.txt"
	grep -q 'not loaded' "$dir/none.txt" || rc=1
	insmod "$SMC_TOP/smc_rs.ko" || return 1
	return $rc
}

# smcr_observations: what our smcr (tools/) prints and returns for UEIDs
# and system information, one block per command.
smcr_observations() {
	local smcr=$SMC_TOP/tools/target/release/smcr c
	for c in "ueid flush" "ueid add SMC-RS-TESTBED" "ueid add smc-rs-lower" \
		"ueid add SMC-RS-TESTBED" "ueid add A..B" "ueid" "ueid del NOTTHERE" \
		"u s" "info" "ueid del SMC-RS-TESTBED" "ueid show"; do
		echo "# smcr $c"
		# shellcheck disable=SC2086
		$smcr $c 2>&1
		echo "exit $?"
	done
}

t_smcr() {
	# Our smcr against smc_rs and against upstream smc.ko: the same output
	# and exit codes for the UEID table and the system information.
	local dir rc=0
	dir=$(mktemp -d)
	smcr_observations >"$dir/smc_rs.txt"
	rmmod smc_rs && modprobe smc || return 1
	smcr_observations >"$dir/upstream.txt"
	rmmod smc; insmod "$SMC_TOP/smc_rs.ko" || return 1
	cat "$dir/smc_rs.txt"
	grep -q '^SMC Version: *2.1' "$dir/smc_rs.txt" || rc=1
	grep -q '^SMC-RS-TESTBED' "$dir/smc_rs.txt" || rc=1
	diff -u "$dir/upstream.txt" "$dir/smc_rs.txt" || rc=1
	return $rc
}

# smcd_observations: the SMC-D side of the family where no ISM device
# exists (the raw answers, as root and unprivileged) and what our smcd and
# smcr print and return for it, one block per command.
smcd_observations() {
	local tools=$SMC_TOP/tools/target/release c
	local nobody="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
	python3 "$here/smc_genl_probe.py" smcd 2>&1
	echo "# unprivileged"
	$nobody python3 "$here/smc_genl_probe.py" smcd 2>&1
	for c in "smcd seid" "smcd seid show" "smcd se s" "smcd seid enable" "smcd seid disable" \
		"smcd seid bogus" "smcd seid enable disable" "smcd device" "smcd d s a" "smcd -d device" \
		"smcd device netdev lo" "smcd linkgroup" "smcd linkgroup all" "smcd linkgroup 100" \
		"smcd l link-show" "smcd linkgroup all ibdev" "smcr seid" "smcr device" "smcr linkgroup" \
		"smcr -dd linkgroup link-show"; do
		echo "# $c"
		# shellcheck disable=SC2086
		$tools/$c 2>&1
		echo "exit $?"
	done
	echo "# unprivileged smcd seid; smcd seid enable"
	$nobody "$tools/smcd" seid 2>&1; echo "exit $?"
	$nobody "$tools/smcd" seid enable 2>&1; echo "exit $?"
}

t_smcd() {
	# The loopback ISM device only (upstream's with CONFIG_SMC_LO): the
	# SMC-D dumps are empty (upstream lists no loopback device, and there
	# is no SMC-D connection), the system EID is there, all zero and
	# disabled (off s390), enabling or disabling it is refused; smcd
	# device and linkgroup print nothing, smcd seid " [disabled]": all as
	# upstream's.
	local dir rc=0
	dir=$(mktemp -d)
	[ -z "$(rdma link show 2>/dev/null)" ] || return 1
	smcd_observations >"$dir/smc_rs.txt"
	rmmod smc_rs && modprobe smc || return 1
	smcd_observations >"$dir/upstream.txt"
	rmmod smc; insmod "$SMC_TOP/smc_rs.ko" || return 1
	cat "$dir/smc_rs.txt"
	grep -qx 'seid: cmd 13 1=0 2=0' "$dir/smc_rs.txt" || rc=1
	grep -qx 'enable seid: Operation not supported' "$dir/smc_rs.txt" || rc=1
	grep -qx 'enable seid: Operation not permitted' "$dir/smc_rs.txt" || rc=1
	grep -qx ' \[disabled\]' "$dir/smc_rs.txt" || rc=1
	grep -qx 'Error: operation not supported by kernel' "$dir/smc_rs.txt" || rc=1
	diff -u "$dir/upstream.txt" "$dir/smc_rs.txt" || rc=1
	return $rc
}

# pnet_observations: what our smc_pnet (tools/) prints and returns for the
# PNET table, one block per command (run against smc_rs and upstream smc.ko).
pnet_observations() {
	local pnet=$SMC_TOP/tools/target/release/smc_pnet c
	local nobody="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
	for c in "-f" "" "-a net1 -I lo" "-a NET2 -I nosuch0" "-a net3 -I lo" \
		"-a a-b -I smcfb0" "-a ABCDEFGHIJKLMNOPQ -I smcfb0" "-a rdma1 -D smcfbrxe0 -P 1" \
		"-a rdma2 -D smcfbrxe0 -P 2" "-a rdma3 -D nosuchdev -P 2" "-a x -D d -P 3" \
		"-a both -I smcfb0 -D nosuchdev" "-s" "-s NET1" "-s nothere" "NET1" \
		"-d NET1" "-d NET1" "-d" "-s -I lo" "-a"; do
		echo "# smc_pnet $c"
		# shellcheck disable=SC2086
		$pnet $c 2>&1
		echo "exit $?"
	done
	echo "# unprivileged"
	$nobody "$pnet" -a priv -I lo 2>&1; echo "exit $?"
	$nobody "$pnet" -f 2>&1; echo "exit $?"
	$nobody "$pnet" -s 2>&1; echo "exit $?"
	echo "# namespace"
	ip netns add smcpn1
	ip netns exec smcpn1 "$pnet" -s 2>&1; echo "exit $?"
	ip netns exec smcpn1 "$pnet" -a inns -I lo 2>&1; echo "exit $?"
	ip netns exec smcpn1 "$pnet" -a innsib -D smcfbrxe0 2>&1; echo "exit $?"
	ip netns exec smcpn1 "$pnet" -s 2>&1; echo "exit $?"
	"$pnet" -s INNS 2>&1; echo "exit $?"
	ip netns exec smcpn1 "$pnet" -f 2>&1; echo "exit $?"
	ip netns del smcpn1
	echo "# hostile"
	python3 "$here/smc_pnet_hostile.py" 2>&1
	echo "# flush"
	$pnet -f 2>&1; echo "exit $?"
	$pnet 2>&1; echo "exit $?"
}

t_pnet_table() {
	# The PNET table (SMC_PNETID) through our smc_pnet: smc_rs must answer
	# every step (errors, privileges, namespaces, malformed requests)
	# exactly as upstream smc.ko, without a splat.
	local dir rc=0 logged
	dir=$(mktemp -d)
	smc_possible up || return 1
	logged=$(dmesg | wc -l)
	pnet_observations >"$dir/smc_rs.txt"
	dmesg | tail -n +$((logged + 1)) | grep -E 'BUG|Oops|WARNING:|Call Trace|UBSAN|KASAN' && rc=1
	rmmod smc_rs && modprobe smc || return 1
	pnet_observations >"$dir/upstream.txt"
	rmmod smc; insmod "$SMC_TOP/smc_rs.ko" || return 1
	smc_possible down
	cat "$dir/smc_rs.txt"
	grep -q '^NET1 lo n/a 255$' "$dir/smc_rs.txt" || rc=1
	grep -q '^RDMA1 n/a smcfbrxe0 1$' "$dir/smc_rs.txt" || rc=1
	diff -u "$dir/upstream.txt" "$dir/smc_rs.txt" || rc=1
	return $rc
}

t_genl_stats() {
	# Statistics over SMC_GEN_NETLINK after known connections (from a
	# freshly loaded module): three AF_SMC clients of a TCP server and a TCP
	# client of an AF_SMC listener (smc_diag_probe.py) fall back with
	# PEERNOSMC; the statistics and fallback statistics must be upstream's,
	# byte for byte, and our smcr stats must print the same for both.
	local dir rc=0 smcr=$SMC_TOP/tools/target/release/smcr cmd
	dir=$(mktemp -d)
	cmd="python3 $here/smc_genl_probe.py stats; $smcr -a stats; $smcr -ad stats"
	smc_possible up || return 1
	rmmod smc_rs && insmod "$SMC_TOP/smc_rs.ko" && ueid_on || return 1
	python3 "$here/smc_diag_probe.py" 7800 sh -c "$cmd" >"$dir/smc_rs.txt" || return 1
	rmmod smc_rs && modprobe smc && ueid_on || return 1
	python3 "$here/smc_diag_probe.py" 7900 sh -c "$cmd" >"$dir/upstream.txt" || rc=1
	rmmod smc; insmod "$SMC_TOP/smc_rs.ko" || return 1
	smc_possible down
	cat "$dir/smc_rs.txt"
	grep -q '^fallbacks: cmd 8 8{1=1 ' "$dir/smc_rs.txt" || rc=1
	grep -Eq '^  TCP fallback +4 \(client 3, server 1\)' "$dir/smc_rs.txt" || rc=1
	diff -u "$dir/upstream.txt" "$dir/smc_rs.txt" || rc=1
	return $rc
}

t_no_smc_option_without_device() {
	# Nothing to propose (no RDMA device, no UEID): an AF_SMC client's SYN
	# goes without the SMC option (tshark's decoding of a capture of lo), the
	# client falls back with NOSMCDEV (0x03030000, what upstream's client
	# records when it finds no device) and its AF_SMC server sees a plain
	# TCP client (PEERNOSMC). With an RDMA device and a UEID the same
	# client's SYN carries the option: the capture and the check see it.
	local dir=$SMC_OUT/no-device rc=0 n
	mkdir -p "$dir"
	[ -z "$(rdma link show 2>/dev/null)" ] || return 1
	# Fresh statistics.
	rmmod smc_rs && insmod "$SMC_TOP/smc_rs.ko" || return 1
	capture_start lo "$dir/lo.pcap" || return 1
	echo_pair smc smc 127.0.0.1 127.0.0.1 7021 1024 || rc=1
	echo_pair smc6 smc6 ::1 ::1 7023 1024 || rc=1
	n=$(fallback_count Client NOSMCDEV)
	echo "client NOSMCDEV: $n"
	[ "$n" = 2 ] || rc=1
	n=$(fallback_count Server PEER_NO_SMC)
	echo "server PEER_NO_SMC: $n"
	[ "$n" = 2 ] || rc=1
	smc_possible up && ueid_on || rc=1
	echo_pair smc smc 127.0.0.1 127.0.0.1 7022 1024 || rc=1
	"$here/tools/smc_ueid" flush
	smc_possible down
	capture_stop || rc=1
	smc_option_absent "$dir/lo.pcap" 7021 || rc=1
	smc_option_absent "$dir/lo.pcap" 7023 || rc=1
	smc_option_in "$dir/lo.pcap" 7022 || rc=1
	return $rc
}

t_reload() {
	for _ in 1 2 3; do
		rmmod smc_rs && insmod "$ko" || return 1
	done
}

run_test "smc_rs.ko is loaded and owns protocol family 43 and IPPROTO_SMC of AF_INET/AF_INET6" t_loaded
run_test "AF_SMC sockets for SMCPROTO_SMC and SMCPROTO_SMC6" t_socket_kinds
run_test "echo 16 MiB AF_SMC <-> AF_SMC over 127.0.0.1" \
	echo_pair smc smc 127.0.0.1 127.0.0.1 7001 16777216
run_test "echo 16 MiB AF_SMC6 <-> AF_SMC6 over ::1" \
	echo_pair smc6 smc6 ::1 ::1 7002 16777216
run_test "echo 4 MiB AF_SMC client -> AF_INET server" \
	echo_pair inet smc 127.0.0.1 127.0.0.1 7003 4194304
run_test "echo 4 MiB AF_INET client -> AF_SMC server" \
	echo_pair smc inet 127.0.0.1 127.0.0.1 7004 4194304
run_test "echo AF_INET6 client -> AF_SMC6 server" \
	echo_pair smc6 inet6 ::1 ::1 7005 1048576
run_test "echo 4 MiB AF_INET/IPPROTO_SMC <-> AF_INET/IPPROTO_SMC" \
	echo_pair ipproto-smc ipproto-smc 127.0.0.1 127.0.0.1 7011 4194304 4
run_test "echo AF_SMC6 client -> AF_INET6/IPPROTO_SMC server" \
	echo_pair ipproto-smc6 smc6 ::1 ::1 7012 1048576
run_test "50 concurrent AF_SMC connections x 256 KiB" \
	echo_pair smc smc 127.0.0.1 127.0.0.1 7006 262144 50
run_test "500 concurrent AF_SMC connections x 64 KiB through one listener" \
	echo_pair smc smc 127.0.0.1 127.0.0.1 7008 65536 500
run_test "$((20 * short_rounds)) short AF_SMC connections (20 threads x $short_rounds)" t_short_connections
run_test "same socket semantics as TCP: AF_SMC vs AF_INET" t_semantics inet smc
run_test "same socket semantics as TCP: AF_SMC6 vs AF_INET6" t_semantics inet6 smc6
run_test "same socket semantics as TCP: AF_INET/IPPROTO_SMC vs AF_INET" t_semantics inet ipproto-smc
run_test "same socket semantics as TCP: AF_INET6/IPPROTO_SMC vs AF_INET6" t_semantics inet6 ipproto-smc6
run_test "pr_debug at protocol decisions, switched on by dynamic debug" t_dynamic_debug
run_test "ib_core client: RDMA devices added and removed, ports, RoCEv2 GIDs, port events" t_ib_devices
run_test "UEID table over SMC_GEN_NETLINK answers exactly as upstream's" t_ueid_table
run_test "smc_diag (sock_diag for AF_SMC) reports what upstream's reports" t_smc_diag
run_test "SMC_GEN_NETLINK system info and handshake limitation answer as upstream's" t_genl_info
run_test "net.smc sysctls: upstream's names, defaults, modes and bounds" t_sysctl_table
run_test "net.smc sysctls per network namespace" t_sysctl_netns
run_test "net.smc sysctl limit_smc_hs is SMC_NETLINK's handshake limitation" t_sysctl_limit_hs
run_test "smcss (tools/) prints for smc_rs what it prints for upstream smc_diag" t_smcss
run_test "smcr ueid/info (tools/) print for smc_rs what they print for upstream" t_smcr
run_test "SMC-D and the system EID with the loopback device only: SMC_GEN_NETLINK and smcd (tools/) answer as upstream's" t_smcd
run_test "PNET table (SMC_PNETID, smc_pnet) answers exactly as upstream's" t_pnet_table
run_test "SMC_GEN_NETLINK statistics, fallback statistics and smcr stats as upstream's" t_genl_stats
run_test "no RDMA device, no UEID: no SMC option on the SYN (tshark), NOSMCDEV at once, as upstream's code" \
	t_no_smc_option_without_device
run_test "smc_rs listener <- 1000 random CLC headers and messages: survives, still serves" t_fuzz_listener
run_test "listeners closed under load of handshakes, then rmmod" t_listener_close_under_load
run_test "rmmod refused while an AF_SMC socket is open, fine after" t_rmmod_busy
run_test "rmmod/insmod cycles" t_reload
run_test "insmod fails cleanly while upstream smc.ko owns family 43" t_upstream_conflict
