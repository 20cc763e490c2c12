# SPDX-License-Identifier: GPL-2.0
# Helpers for the tests that run inside the VMs. Sourced, not run.
#
# Each test script writes TAP result lines ("ok - NAME" / "not ok - NAME")
# to $SMC_OUT/tap-<script>-vm<N>.txt; the host runner numbers and counts them,
# and prints the seconds each test took from $SMC_OUT/time-<script>-vm<N>.txt.

: "${SMC_OUT:?run inside the VM bed (make check)}"
: "${SMC_VM:=1}"
# The VM that serves in the pair scripts: 1, unless a round of a VM run
# swaps the roles (selftests/round.sh --server-vm 2); its address and this
# VM's side (and the other VM's).
: "${SMC_SERVER_VM:=1}"
server_addr=10.10.0.$SMC_SERVER_VM
[ "$SMC_VM" = "$SMC_SERVER_VM" ] && side=server || side=client
[ "$side" = server ] && other=client || other=server
TAP_FILE=$SMC_OUT/tap-$(basename "$0" .sh)-vm$SMC_VM.txt
: >"$TAP_FILE"
LOG_FILE=$SMC_OUT/log-$(basename "$0" .sh)-vm$SMC_VM.txt
: >"$LOG_FILE"
TIME_FILE=$SMC_OUT/time-$(basename "$0" .sh)-vm$SMC_VM.txt
: >"$TIME_FILE"

# scaled CHECK LONG: a loop's count for this run. `make check` runs each
# assertion at the smallest scale that still proves it (CHECK), `make
# check-long` (SMC_CHECK_LONG=1) the same assertions at soak scale (LONG).
scaled() {
	if [ "${SMC_CHECK_LONG:-0}" = 1 ]; then echo "$2"; else echo "$1"; fi
}

# run_test NAME FUNCTION [ARGS...]: runs FUNCTION, records ok/not ok.
run_test() {
	local name=$1
	shift
	# SMC_ONLY=WORD runs only the tests whose name holds WORD.
	case $name in *"${SMC_ONLY:-}"*) ;; *) return 0 ;; esac
	echo "### $name" >>"$LOG_FILE"
	local t0=$SECONDS
	if "$@" >>"$LOG_FILE" 2>&1; then
		echo "ok - $name" | tee -a "$TAP_FILE"
	else
		echo "not ok - $name" | tee -a "$TAP_FILE"
	fi
	# Where the time goes: one line per test, the host runner prints them.
	echo "$((SECONDS - t0)) $name" >>"$TIME_FILE"
}

# skip_test NAME REASON
skip_test() {
	echo "ok - $1 # SKIP $2" | tee -a "$TAP_FILE"
}

# echo_pair SERVER_FAMILY CLIENT_FAMILY BIND CONNECT PORT SIZE [CONNS]:
# a local server and client, both must succeed.
echo_pair() {
	local sfam=$1 cfam=$2 bind=$3 addr=$4 port=$5 size=$6 conns=${7:-1} spid rc=0
	timeout 300 smc_echo server -f "$sfam" -b "$bind" -p "$port" -n "$conns" &
	spid=$!
	timeout 300 smc_echo client -f "$cfam" -a "$addr" -p "$port" -s "$size" -n "$conns" || rc=1
	wait "$spid" || rc=1
	return $rc
}

# smc_option on|off PROG: a BPF sock_ops program of bpf/smc_option.bpf.o
# (smc_option_on_synack or smc_option_on_syn) attached to the VM's root
# cgroup: plain TCP sockets put the SMC option on their SYN-ACKs or SYNs.
smc_option() {
	local dir=/sys/fs/bpf/smc_option
	# Mounting again would hide the pinned programs.
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || return 1
	case "$1" in
	on)
		[ -d "$dir" ] || bpftool prog loadall "$SMC_TOP/selftests/bpf/smc_option.bpf.o" "$dir" type sockops ||
			return 1
		bpftool cgroup attach /sys/fs/cgroup sock_ops pinned "$dir/$2"
		;;
	off)
		bpftool cgroup detach /sys/fs/cgroup sock_ops pinned "$dir/$2"
		;;
	esac
}

# capture_start IFACE FILE: dumpcap on IFACE into FILE in the background
# (its pid in capture_pid); returns once it captures.
capture_start() {
	dumpcap -q -i "$1" -P -w "$2" 2>"$2.log" &
	capture_pid=$!
	for _ in $(seq 300); do
		grep -q "Capturing on" "$2.log" && return 0
		kill -0 "$capture_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$2.log"
	return 1
}

# capture_stop: ends the capture of capture_start (after a second for the
# last frames).
capture_stop() {
	sleep 1
	kill -INT "$capture_pid" && wait "$capture_pid"
}

# tshark ARGS...: Wireshark's tshark, run by the host (scripts/decoder.sh)
# on a capture in the shared folder when the bed has the host's decoder
# ($SMC_DECODE): in a TCG guest tshark takes a minute and more to start,
# natively a second, and the binary is the same. Its output and exit status
# come back as if it had run here; without the decoder, the guest's own.
tshark() {
	local req _ a prev= rc
	[ -n "${SMC_DECODE:-}" ] && [ -d "$SMC_DECODE" ] || { command tshark "$@"; return; }
	# A capture outside the shared folder is the guest's to read.
	for a in "$@"; do
		[ "$prev" = -r ] && case "$a" in "${SMC_DECODE%/*}"/*) ;; *) command tshark "$@"; return ;; esac
		prev=$a
	done
	req=$SMC_DECODE/vm$SMC_VM-$$-$RANDOM$RANDOM
	printf '%s\0' "$@" >"$req.tmp" && mv "$req.tmp" "$req.args" || return 1
	for _ in $(seq 3000); do
		[ -e "$req.rc" ] && break
		sleep 0.1
	done
	[ -e "$req.rc" ] || { echo "the host's decoder did not answer in 300 s" >&2; return 1; }
	cat "$req.out"
	cat "$req.err" >&2
	rc=$(cat "$req.rc")
	rm -f "$req.out" "$req.err" "$req.rc"
	return "$rc"
}

# syn_options FILE PORT: for each SYN (without ACK) to PORT in the capture,
# one line: its TCP option kinds, then the experiment identifiers of its
# experimental options, as tshark decodes them. The SMC option is kind 254
# with identifier 0xe2d4 (magic E2 D4 C3 D9).
syn_options() {
	tshark -n -r "$1" -Y "tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.dstport == $2" \
		-T fields -e tcp.option_kind -e tcp.options.experimental.exid
}

# smc_option_in FILE PORT: every SYN to PORT carries the SMC option (and
# there is at least one); smc_option_absent FILE PORT: none does (and there
# is at least one SYN).
smc_option_in() {
	local out
	out=$(syn_options "$1" "$2") || return 1
	echo "SYNs to port $2: $out"
	[ -n "$out" ] && ! echo "$out" | grep -qv '0xe2d4'
}

smc_option_absent() {
	local out
	out=$(syn_options "$1" "$2") || return 1
	echo "SYNs to port $2: $out"
	[ -n "$out" ] && ! echo "$out" | grep -q '254\|0xe2d4'
}

# fallback_count SIDE REASON: the fallbacks of SIDE (Client or Server) with
# REASON (smcr's name, e.g. NOSMCDEV, PEER_NO_SMC) in `smcr -d stats`, for
# smc_rs and upstream alike; 0 when not listed.
fallback_count() {
	"$SMC_TOP/tools/target/release/smcr" -d stats | awk -v side="$1" -v reason="$2" '
		$1 == "Server" || $1 == "Client" { cur = $1; next }
		cur == side && $1 == reason { n = $2 }
		END { print n + 0 }'
}

# A pair run's sides talk through $SMC_OUT: pair_signal NAME leaves a mark
# for the other side, pair_await NAME [SECONDS] waits (up to SECONDS, 300
# by default) for the other side's. Both need $side (server or client)
# and $other set, and a prefix of the script's own in $pair_tag.
pair_signal() { touch "$SMC_OUT/$pair_tag-$side-$1"; }
pair_await() {
	local _
	for _ in $(seq $((${2:-300} * 10))); do
		[ -e "$SMC_OUT/$pair_tag-$other-$1" ] && return 0
		sleep 0.1
	done
	echo "no '$1' from the $other" >&2
	return 1
}

# round_module: this round's module (SMC_MOD) loaded, as a script before
# may have unloaded it (an AF_SMC socket would then load upstream's smc.ko
# by its alias), with rxe0 and the bed's UEID; sets $mine (smc_rs or
# upstream).
round_module() {
	local ueid=SMC-RS-TESTBED
	[ -e /sys/class/infiniband/rxe0 ] || rdma link add rxe0 type rxe netdev eth0
	if lsmod | grep -q '^smc '; then
		mine=upstream
	elif [ "${SMC_MOD:-smc_rs}" = upstream ]; then
		mine=upstream
		modprobe smc && modprobe smc_diag && "$SMC_TOP/selftests/tools/smc_ueid" add "$ueid"
	else
		mine=smc_rs
		lsmod | grep -q '^smc_rs ' || insmod "$SMC_TOP/smc_rs.ko"
		"$SMC_TOP/selftests/tools/smc_ueid" add "$ueid"
		echo "module smc_rs +p" >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
	fi
	rxe_debug_errors
	return 0
}

# rxe_debug_errors: Soft-RoCE's debug messages on, but for those it prints
# for every packet, state step or timer. A responder that finds an RDMA
# WRITE outside the keys or bounds it knows moves its queue pair to the
# error state with no completion to show for it (the NAK goes to the
# peer): only these messages say why a link went down then.
rxe_debug_errors() {
	local ctl=/sys/kernel/debug/dynamic_debug/control q
	[ -w "$ctl" ] || return 0
	echo "module rdma_rxe +p" >"$ctl" 2>/dev/null || return 0
	for q in "state = " "timer fired" "Packet dropped" "rnr nak timer"; do
		echo "module rdma_rxe format \"$q\" -p" >"$ctl" 2>/dev/null
	done
	return 0
}

# pair_modules: round_module, and $other_mod (what the other side runs).
pair_modules() {
	round_module
	echo "$mine" >"$SMC_OUT/$pair_tag-$side-module"
	# The other side may still be busy with the script before.
	pair_await module 900 >/dev/null 2>&1 || true
	for _ in $(seq 50); do
		[ -s "$SMC_OUT/$pair_tag-$other-module" ] && break
		sleep 0.1
	done
	other_mod=$(cat "$SMC_OUT/$pair_tag-$other-module" 2>/dev/null)
}

# smc_stat LABEL: the number on the first line of `smcr -d stats` that
# starts with LABEL ("  SMC connections", "    v2", "  TCP fallback"),
# for smc_rs and upstream alike.
smc_stat() {
	"$SMC_TOP/tools/target/release/smcr" -d stats |
		awk -v l="$1" 'index($0, l " ") == 1 { sub(/^ +/, "", $0); n = split(l, w, " "); print $(n + 1); exit }'
}

# SMC-R evidence from outside the module: before_smcr notes the statistics
# (as `smcr -d stats` reads them from either module) and rxe's packet
# counters; smcr_stats_moved N then checks N more SMC-Rv2 connections, no
# handshake error and no fallback, rxe_moved BYTES that rxe carried at
# least BYTES each way in RoCE packets of at most 4 KiB.
rxe_counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
before_smcr() {
	stat_conns=$(smc_stat "  SMC connections") stat_v2=$(smc_stat "    v2")
	stat_hs_err=$(smc_stat "  Handshake errors") stat_fback=$(smc_stat "  TCP fallback")
	sent_before=$(cat "$rxe_counters/sent_pkts") rcvd_before=$(cat "$rxe_counters/rcvd_pkts")
}

smcr_stats_moved() {
	local c v h f
	"$SMC_TOP/tools/target/release/smcr" -d stats
	c=$(smc_stat "  SMC connections") v=$(smc_stat "    v2")
	h=$(smc_stat "  Handshake errors") f=$(smc_stat "  TCP fallback")
	echo "SMC connections $stat_conns -> $c, v2 $stat_v2 -> $v, handshake errors $stat_hs_err -> $h, fallback $stat_fback -> $f (want +$1)"
	[ $((c - stat_conns)) -eq "$1" ] && [ $((v - stat_v2)) -eq "$1" ] &&
		[ "$h" = "$stat_hs_err" ] && [ "$f" = "$stat_fback" ]
}

rxe_moved() {
	local s r
	s=$(cat "$rxe_counters/sent_pkts") r=$(cat "$rxe_counters/rcvd_pkts")
	echo "rxe sent $sent_before -> $s, received $rcvd_before -> $r, for $1 payload bytes each way"
	[ $((s - sent_before)) -ge $(($1 / 4096)) ] && [ $((r - rcvd_before)) -ge $(($1 / 4096)) ]
}

# rxe_one_way BYTES: the payload went from the client to the server: the
# client's rxe sent it, the server's received it (since before_smcr).
rxe_one_way() {
	local s r
	s=$(cat "$rxe_counters/sent_pkts") r=$(cat "$rxe_counters/rcvd_pkts")
	echo "rxe sent $sent_before -> $s, received $rcvd_before -> $r, for $1 payload bytes"
	if [ "$side" = client ]; then
		[ $((s - sent_before)) -ge $(($1 / 4096)) ]
	else
		[ $((r - rcvd_before)) -ge $(($1 / 4096)) ]
	fi
}

# smc_lgr_ids: the ids of the SMC-R link groups `smcr linkgroup` lists.
smc_lgr_ids() {
	"$SMC_TOP/tools/target/release/smcr" linkgroup | awk '$2 == "SERV" || $2 == "CLNT" { print $1 }'
}

# unload_smc_rs: smc_rs out, retried for 30 s while its sockets and link
# groups go; fails, saying so, when it stays loaded.
unload_smc_rs() {
	for _ in $(seq 300); do
		lsmod | grep -q '^smc_rs ' || return 0
		rmmod smc_rs 2>/dev/null && return 0
		sleep 0.1
	done
	echo "smc_rs still loaded"
	return 1
}

# reload_smc_rs: smc_rs out (as unload_smc_rs) and in again.
reload_smc_rs() {
	unload_smc_rs && insmod "$SMC_TOP/smc_rs.ko"
}

# fresh_smc_rs: smc_rs loaded again with the bed's UEID and its debug
# messages on: no link group left for a first contact to join.
fresh_smc_rs() {
	reload_smc_rs && "$SMC_TOP/selftests/tools/smc_ueid" add SMC-RS-TESTBED &&
		{ echo "module smc_rs +p" >/sys/kernel/debug/dynamic_debug/control; } 2>/dev/null
}

# The pair's second link (vm.sh): second_link_up gives eth1 the address
# 10.10.0.1N/24 without a prefix route (with one, traffic for the first
# addresses could leave through eth1), a host route to the peer's second
# address through it, ARP answered only on the NIC that has the address
# asked for, and an rxe device rxe1: both NICs are then ports an SMC-R link
# group can run a link on each. second_link_down takes all of it away
# again; rounds after it find the bed as booted.
second_link_up() {
	local mine_ip=10.10.0.1$SMC_VM
	ip link show eth1 >/dev/null 2>&1 || { echo "no eth1 (vm.sh pair has one)"; return 1; }
	sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 &&
		ip link set eth1 up &&
		ip addr add "$mine_ip/24" dev eth1 noprefixroute &&
		second_link_route &&
		rdma link add rxe1 type rxe netdev eth1
}
# second_link_route: the host route to the peer's second address through
# eth1 (the kernel drops it whenever eth1 goes down, as a network manager
# would put it back).
second_link_route() {
	local mine_ip=10.10.0.1$SMC_VM peer_ip=10.10.0.1$((3 - SMC_VM))
	ip route replace "$peer_ip/32" dev eth1 src "$mine_ip" &&
		ip route get "$peer_ip" | grep -q "dev eth1"
}
second_link_down() {
	rdma link delete rxe1 2>/dev/null
	ip addr flush dev eth1 2>/dev/null
	ip link set eth1 down 2>/dev/null
	qemu_link eth1 on
	nic_up eth0
	sysctl -qw net.ipv4.conf.all.arp_ignore=0 net.ipv4.conf.all.arp_announce=0
	[ ! -e /sys/class/infiniband/rxe1 ]
}

# nic_down DEV, nic_up DEV: a pair's NIC (eth0, eth1) down or up as a pulled
# cable would take it: its carrier at QEMU's end through vm.sh's link-ctl.py
# (the emulator then drops what arrives for it instead of holding it), and
# the NIC itself (ip link). qemu_link finds link-ctl.py by the marker
# linkctl.on in the VM run's output folder: $SMC_RUN_OUT inside a round
# (round.sh gives its scripts a folder of their own as $SMC_OUT), else
# $SMC_OUT. Without it (a single VM) only the NIC goes down.
qemu_link() {
	local dev=$1 state=$2 req _ run=${SMC_RUN_OUT:-$SMC_OUT}
	[ -f "$run/linkctl.on" ] || return 0
	req=$run/linkctl-vm$SMC_VM-$$-$RANDOM
	echo "l${dev#eth} $state" >"$req.tmp" && mv "$req.tmp" "$req.req" || return 1
	for _ in $(seq 100); do
		if [ -f "$req.done" ]; then
			! grep -qi error "$req.done"
			local rc=$?
			rm -f "$req.done"
			return $rc
		fi
		sleep 0.1
	done
	echo "no answer from link-ctl.py for $dev $state" >&2
	return 1
}
# The NIC stays up a second after its carrier went: the guest takes what
# its receive ring holds and posts it again, which lets QEMU drop a frame it
# was holding for a full ring (until then its stream netdev reads nothing
# more; the frame relay queues and drops for it meanwhile).
nic_down() {
	qemu_link "$1" off && sleep 1 && ip link set "$1" down
}
nic_up() {
	ip link set "$1" up && qemu_link "$1" on
}

# rxe_sent DEV: the RoCE packets rxe device DEV sent so far.
rxe_sent() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/sent_pkts"
}
