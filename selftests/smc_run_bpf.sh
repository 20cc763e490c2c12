#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# smc_run --bpf across the VM pair: a BPF program on the kernel's socket()
# path (update_socket_protocol) makes the TCP sockets of one cgroup SMC
# sockets, which reaches what LD_PRELOAD cannot. VM 1 serves, VM 2
# connects.
#
# * A static binary (busybox-static's httpd on VM 1, its wget on VM 2)
#   under smc_run --bpf: the download (4 MiB, checksum compared) is SMC-R,
#   proven on VM 2 by its module's statistics (one more SMC connection, no
#   fallback), rxe's counters (the payload in RoCE packets) and smcss -R
#   (mode SMCR while a slow CGI request holds the connection). The same
#   binaries under the preload mode stay TCP (no SMC connection, rxe idle).
# * A socket() under smc_run --bpf is IPPROTO_SMC of its family with
#   SOCK_NONBLOCK kept; UDP is left alone.
# * --cgroup PATH: a task moved into PATH gets SMC, one outside does not;
#   SIGTERM ends the watch with status 0.
# * Redis: smc_run --bpf redis-server (VM 1), smc_run --bpf redis-cli and
#   redis-benchmark (VM 2) answer correctly over SMC-R.
# * Not root, or root without CAP_BPF: the clear error, exit status 1.
# * VM 1 counts as many server connections as VM 2 counts client ones, and
#   one fallback (VM 2's plain wget to the SMC listener); SIGTERM to smc_run --bpf reaches the command; no cgroup or BPF link is
#   left behind.
#
#   smc_run_bpf.sh [server|client]   (default: by $SMC_VM, 1 serves)
#
# With smc_rs the module is loaded again at the end (fresh statistics for
# a script run after this one in the same boot); both sides wait for each
# other there.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

side=${1:-$side}
# Requests of the redis-benchmark test (`make check-long`: 2000).
redis_n=$(scaled 200 2000)
tools=$SMC_TOP/tools/target/release
smc_run=$tools/smc_run
smcr=$tools/smcr
counters=/sys/class/infiniband/rxe0/ports/1/hw_counters
busybox=$(command -v busybox)
dir=$SMC_OUT/smc_run_bpf
mkdir -p "$dir"
work=/tmp/smc_run_bpf
mkdir -p "$work"
bpf_port=7410 preload_port=7411 redis_port=6381
payload_size=4194304

round_module

# smc_stat conns|fallback|server: `smcr -d stats`'s SMC connections, TCP
# fallbacks, or server-side SMC connections.
smc_stat() {
	case "$1" in
	conns) "$smcr" -d stats | awk '/^  SMC connections / { print $3; exit }' ;;
	fallback) "$smcr" -d stats | awk '/^  TCP fallback / { print $3; exit }' ;;
	server) "$smcr" -d stats | sed -n 's/^  SMC connections .*server \([0-9]*\)).*/\1/p' | head -1 ;;
	esac
}

# wait_file NAME [TENTHS]: waits for $dir/NAME (default 300 s).
wait_file() {
	for _ in $(seq "${2:-3000}"); do
		[ -e "$dir/$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# smcss_port OPTION PORT: smcss's rows (with OPTION) with an address of
# port PORT. IPPROTO_SMC sockets show no IP address (0.0.0.0), as
# upstream's smc_diag has it: the port tells them apart.
smcss_port() {
	"$tools/smcss" "$1" | grep -E ":$2( |\$)"
}

# listening smc|tcp PORT: an SMC listener (smcss -l) or a TCP one (ss,
# and no SMC one) on $server_addr:PORT, within 30 s.
listening() {
	for _ in $(seq 300); do
		case "$1" in
		smc) smcss_port -l "$2" >/dev/null && return 0 ;;
		tcp) ss -Hltn "src $server_addr:$2" | grep -q . &&
			! smcss_port -l "$2" >/dev/null && return 0 ;;
		esac
		sleep 0.1
	done
	echo "no $1 listener on $server_addr:$2"
	"$tools/smcss" -l
	ss -ltn
	return 1
}

# no_leftovers: no transient cgroup and no fmod_ret link are left.
no_leftovers() {
	local left links
	left=$(ls -d /sys/fs/cgroup/smc_run.* 2>/dev/null)
	links=$(bpftool link show) || return 1
	links=$(echo "$links" | grep -c modify_return)
	echo "cgroups left: ${left:-none}; fmod_ret links: $links"
	[ -z "$left" ] && [ "$links" = 0 ]
}

# ---------------------------------------------------------------- server
server_start() {
	mkdir -p "$work/www/cgi-bin"
	head -c "$payload_size" /dev/urandom >"$work/www/payload"
	md5sum <"$work/www/payload" | cut -d' ' -f1 >"$dir/payload.md5"
	printf '#!/bin/sh\nsleep 4\necho "Content-Type: text/plain"\necho\necho slow\n' \
		>"$work/www/cgi-bin/slow"
	chmod +x "$work/www/cgi-bin/slow"
	conns0=$(smc_stat server) fb0=$(smc_stat fallback)
	"$smc_run" --bpf -v "$busybox" httpd -f -p "$server_addr:$bpf_port" -h "$work/www" \
		2>"$dir/httpd-bpf.err" &
	httpd_bpf=$!
	"$smc_run" "$busybox" httpd -f -p "$server_addr:$preload_port" -h "$work/www" &
	httpd_preload=$!
	redis_sock=$work/redis.sock
	redis_pid=
	if command -v redis-server >/dev/null; then
		"$smc_run" --bpf redis-server --port "$redis_port" --bind "$server_addr" \
			--protected-mode no --save "" --appendonly no --dir "$work" \
			--unixsocket "$redis_sock" --logfile "$dir/redis-server.log" &
		redis_pid=$!
	fi
	[ -n "$redis_pid" ] && echo yes >"$dir/redis" || echo no >"$dir/redis"
	listening smc "$bpf_port" && listening tcp "$preload_port" &&
		{ [ -z "$redis_pid" ] || listening smc "$redis_port"; }
}

# stop PID: SIGTERM to PID, SIGKILL if it is still there after 30 s;
# returns its exit status.
stop() {
	kill -TERM "$1"
	for _ in $(seq 300); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$1" 2>/dev/null && { echo "pid $1 ignored SIGTERM"; kill -KILL "$1"; }
	wait "$1"
}

# stop_all: SIGTERM to each smc_run; httpd dies of it (smc_run then ends
# as killed by SIGTERM, 143), Redis exits 0 on it.
stop_all() {
	local rc rc_redis=0
	stop "$httpd_bpf"
	rc=$?
	stop "$httpd_preload"
	if [ -n "$redis_pid" ]; then
		stop "$redis_pid"
		rc_redis=$?
	fi
	cat "$dir/httpd-bpf.err"
	echo "smc_run --bpf httpd: exit status $rc; smc_run --bpf redis-server: $rc_redis"
	[ "$rc" = 143 ] && [ "$rc_redis" = 0 ] &&
		grep -q 'attached to fmod_ret/update_socket_protocol' "$dir/httpd-bpf.err" &&
		grep -q 'sockets were created as IPPROTO_SMC' "$dir/httpd-bpf.err"
}

# server_counted: this side's server SMC connections rose by the client's
# count, and exactly the client's plain TCP wget to the SMC listener fell
# back.
server_counted() {
	local conns fb want want_fb
	conns=$(smc_stat server) fb=$(smc_stat fallback)
	want=$(cat "$dir/client-conns") want_fb=$(cat "$dir/client-tcp")
	echo "server SMC connections $conns0 -> $conns (client counted +$want)," \
		"fallback $fb0 -> $fb (client's TCP connections to SMC listeners: $want_fb)"
	[ -n "$want" ] && [ "$want" -gt 0 ] && [ $((conns - conns0)) = "$want" ] &&
		[ $((fb - fb0)) = "$want_fb" ]
}

# ---------------------------------------------------------------- client

# probe_sockets: socket()s of python3 under smc_run --bpf (and without):
# SO_DOMAIN, SO_PROTOCOL, O_NONBLOCK of TCP over IPv4 (with SOCK_NONBLOCK)
# and IPv6 (IPPROTO_TCP), and SO_PROTOCOL of UDP.
probe_sockets() {
	local probe='import socket, fcntl, os
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
o = lambda k, n: k.getsockopt(socket.SOL_SOCKET, n)
nb = fcntl.fcntl(t.fileno(), fcntl.F_GETFL) & os.O_NONBLOCK != 0
print(o(t, 39), o(t, 38), nb, o(s, 39), o(s, 38), o(u, 38))'
	local under plain
	under=$("$smc_run" --bpf python3 -c "$probe") || return 1
	plain=$(python3 -c "$probe") || return 1
	echo "under smc_run --bpf: $under; without: $plain"
	[ "$under" = "2 256 True 10 256 17" ] && [ "$plain" = "2 6 True 10 6 17" ]
}

# fetch MODE PORT: busybox wget of the payload, as MODE (bpf: smc_run
# --bpf, preload: smc_run, cgroup: moved into $watched, plain); checks the
# checksum; leaves the deltas of SMC connections, fallbacks and rxe's
# received packets in d_conns, d_fb, d_rcvd.
fetch() {
	local c0 f0 r0 sum url=http://$server_addr:$2/payload out=$work/got
	c0=$(smc_stat conns) f0=$(smc_stat fallback) r0=$(cat "$counters/rcvd_pkts")
	rm -f "$out"
	case "$1" in
	bpf) "$smc_run" --bpf "$busybox" wget -q -O "$out" "$url" ;;
	preload) "$smc_run" "$busybox" wget -q -O "$out" "$url" ;;
	cgroup) sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" wget -q -O "$3" "$4"' \
		- "$watched" "$busybox" "$out" "$url" ;;
	plain) "$busybox" wget -q -O "$out" "$url" ;;
	esac || { echo "wget failed"; return 1; }
	sum=$(md5sum <"$out" | cut -d' ' -f1)
	d_conns=$(($(smc_stat conns) - c0)) d_fb=$(($(smc_stat fallback) - f0))
	d_rcvd=$(($(cat "$counters/rcvd_pkts") - r0))
	echo "$1 wget: md5 $sum (server's $(cat "$dir/payload.md5")), SMC connections +$d_conns," \
		"fallback +$d_fb, rxe rcvd_pkts +$d_rcvd"
	[ "$sum" = "$(cat "$dir/payload.md5")" ]
}

static_bpf() {
	fetch bpf "$bpf_port" || return 1
	[ "$d_conns" = 1 ] && [ "$d_fb" = 0 ] && [ "$d_rcvd" -ge $((payload_size / 4096)) ]
}

static_preload() {
	fetch preload "$preload_port" || return 1
	[ "$d_conns" = 0 ] && [ "$d_fb" = 0 ] && [ "$d_rcvd" -lt 256 ]
}

# held_smcr: a slow CGI request through smc_run --bpf busybox wget; while
# it is open, smcss -R lists it (peer port $bpf_port) in mode SMCR.
held_smcr() {
	local pid row= rc
	"$smc_run" --bpf "$busybox" wget -q -O "$work/slow" "http://$server_addr:$bpf_port/cgi-bin/slow" &
	pid=$!
	for _ in $(seq 300); do
		row=$(smcss_port -R "$bpf_port")
		[ -n "$row" ] && break
		sleep 0.05
	done
	"$tools/smcss" -a
	"$tools/smcss" -R
	echo "smcss -R row: ${row:-nothing}"
	wait "$pid"
	rc=$?
	echo "wget exit status $rc, answer: $(cat "$work/slow" 2>/dev/null)"
	[ "$rc" = 0 ] && [ "$(cat "$work/slow")" = slow ] &&
		[ "$(echo "$row" | awk '{ print $7 }')" = SMCR ]
}

# watched_cgroup: smc_run --bpf --cgroup on a cgroup of our own: a wget
# moved into it is SMC, one outside is TCP; SIGTERM ends the watch (0).
watched_cgroup() {
	local pid rc ok=1
	watched=/sys/fs/cgroup/smc_run_bpf_test
	mkdir -p "$watched" || return 1
	"$smc_run" --bpf -v --cgroup "$watched" 2>"$dir/watch.err" &
	pid=$!
	for _ in $(seq 300); do
		grep -q attached "$dir/watch.err" && break
		sleep 0.1
	done
	fetch cgroup "$bpf_port" && [ "$d_conns" = 1 ] && [ "$d_fb" = 0 ] || ok=0
	fetch plain "$bpf_port" && [ "$d_conns" = 0 ] && [ "$d_fb" = 0 ] || ok=0
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	cat "$dir/watch.err"
	echo "smc_run --bpf --cgroup: exit status $rc"
	rmdir "$watched"
	[ "$ok" = 1 ] && [ "$rc" = 0 ] && grep -q 'detached' "$dir/watch.err"
}

redis_bpf() {
	local value got out rc
	value="smc_run-bpf-$$-$RANDOM"
	"$smc_run" --bpf redis-cli -h "$server_addr" -p "$redis_port" SET smc_run_bpf_key "$value" ||
		return 1
	got=$("$smc_run" --bpf redis-cli -h "$server_addr" -p "$redis_port" GET smc_run_bpf_key) ||
		return 1
	echo "GET smc_run_bpf_key: $got"
	[ "$got" = "$value" ] || return 1
	# -q still prints its progress, each line ended by a carriage return.
	"$smc_run" --bpf redis-benchmark -h "$server_addr" -p "$redis_port" -n "$redis_n" \
		-t set,get -c 1 -q >"$work/bench.out"
	rc=$?
	out=$(tr '\r' '\n' <"$work/bench.out" | grep 'requests per second')
	echo "$out"
	echo "redis-benchmark: exit status $rc"
	[ "$rc" = 0 ] && echo "$out" | grep -Eq '^ *SET: [0-9.]+ requests per second' &&
		echo "$out" | grep -Eq '^ *GET: [0-9.]+ requests per second'
}

# As smc_run_redis.sh's: at least 3 RoCE packets for each request.
redis_evidence() {
	echo "SMC connections +$1 (at least 4), fallback +$2, rxe sent_pkts +$3"
	[ "$1" -ge 4 ] && [ "$2" = 0 ] && [ "$3" -ge $((redis_n * 6)) ]
}

# refused CMD...: CMD (a smc_run --bpf without the privileges) ends with
# status 1 and the clear message on stderr, nothing on stdout.
refused() {
	local out err rc
	out=$("$@" 2>"$work/refused.err")
	rc=$?
	err=$(cat "$work/refused.err")
	echo "exit status $rc, stdout '$out', stderr '$err'"
	[ "$rc" = 1 ] && [ -z "$out" ] && [ "$err" = "smc_run: --bpf needs CAP_BPF and CAP_SYS_ADMIN" ]
}

# ---------------------------------------------------------------- main
if [ ! -r /sys/kernel/btf/vmlinux ] || ! grep -qw update_socket_protocol /proc/kallsyms; then
	skip_test "smc_run --bpf ($side side)" "kernel without BTF or update_socket_protocol"
elif [ -z "$busybox" ] || ! file -L "$busybox" | grep -q 'statically linked'; then
	skip_test "smc_run --bpf ($side side)" "no static busybox"
elif [ "$side" = server ]; then
	run_test "$mine server: SMC listeners of smc_run --bpf busybox httpd and redis-server, TCP of smc_run busybox httpd" \
		server_start
	echo ready >"$dir/server-ready"
	wait_file client-done 9000
	run_test "$mine server: SIGTERM reaches the commands of smc_run --bpf (httpd 143, redis-server 0)" stop_all
	run_test "$mine server: as many SMC-R server connections as the client counted, one TCP fallback (its plain wget)" \
		server_counted
	run_test "$mine server: no cgroup or BPF link left behind" no_leftovers
else
	wait_file server-ready
	conns_all=$(smc_stat conns)
	run_test "$mine client: socket() under smc_run --bpf is IPPROTO_SMC, SOCK_NONBLOCK kept, UDP untouched" \
		probe_sockets
	run_test "$mine client: static busybox wget under smc_run --bpf: 4 MiB over SMC-R (smcr stats +1, rxe)" \
		static_bpf
	run_test "$mine client: static busybox wget under smc_run (LD_PRELOAD): TCP (no SMC connection, rxe idle)" \
		static_preload
	run_test "$mine client: smcss -R shows the static wget's held connection as SMCR" held_smcr
	run_test "$mine client: smc_run --bpf --cgroup: SMC inside the cgroup, TCP outside, SIGTERM ends it" \
		watched_cgroup
	if [ "$(cat "$dir/redis")" = yes ] && command -v redis-benchmark >/dev/null; then
		c0=$(smc_stat conns) f0=$(smc_stat fallback) s0=$(cat "$counters/sent_pkts")
		run_test "$mine client: smc_run --bpf redis-cli SET/GET and redis-benchmark -n $redis_n -t set,get -c 1" \
			redis_bpf
		run_test "$mine client: the Redis connections were SMC-R (smcr -d stats, rxe counters)" \
			redis_evidence $(($(smc_stat conns) - c0)) $(($(smc_stat fallback) - f0)) \
			$(($(cat "$counters/sent_pkts") - s0))
	else
		skip_test "$mine client: Redis under smc_run --bpf" "no redis-tools"
	fi
	run_test "smc_run --bpf as nobody: the clear error" \
		refused setpriv --reuid=65534 --regid=65534 --clear-groups "$smc_run" --bpf true
	run_test "smc_run --bpf as root without CAP_BPF: the clear error" \
		refused capsh --drop=cap_bpf -- -c "exec $smc_run --bpf true"
	run_test "$mine client: no cgroup or BPF link left behind" no_leftovers
	echo $(($(smc_stat conns) - conns_all)) >"$dir/client-conns"
	# watched_cgroup's plain wget reached the SMC listener over TCP.
	echo 1 >"$dir/client-tcp"
	touch "$dir/client-done"
fi

# Both sides are done before the module goes; then a fresh module for
# whatever runs next in this boot.
touch "$dir/$side-finished"
wait_file "$other-finished" 1200
if [ "$mine" = smc_rs ]; then
	run_test "smc_rs unloads and loads again after smc_run --bpf ($side side)" reload_smc_rs
fi
exit 0
