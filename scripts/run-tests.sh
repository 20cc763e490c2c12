#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole test suite: host-side unit tests of the wire crate, the module
# build, then the kselftests in one VM and in a pair of linked VMs (debug
# kernel; any kernel splat fails the run). Prints TAP and ends with the line
# "N passed, N failed, N skipped". Exit status 0 only when nothing failed.
#
# SMC_TEST_SET=faults (make check-kasan, with SMC_KERNEL_FLAVOUR=kasan) runs
# only the host's wire tests, the module build and the fault scripts of
# the pair (rounds 2 and 5 below, see there).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"

out=${SMC_TEST_OUT:-$(mktemp -d /tmp/smc_rs-test.XXXXXX)}
mkdir -p "$out"
n=0 passed=0 failed=0 skipped=0

# record LINE: one TAP result ("ok - name", "not ok - name", "... # SKIP why").
record() {
	local line=$1
	n=$((n + 1))
	case "$line" in
	"ok - "*"# SKIP"*) skipped=$((skipped + 1)); echo "ok $n - ${line#ok - }" ;;
	"ok - "*) passed=$((passed + 1)); echo "ok $n - ${line#ok - }" ;;
	*) failed=$((failed + 1)); echo "not ok $n - ${line#not ok - }" ;;
	esac
}

# check NAME COMMAND...: runs a host step, records its result, output to a log.
check() {
	local name=$1 logf
	shift
	logf=$out/$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_').log
	if "$@" >"$logf" 2>&1; then
		record "ok - $name"
	else
		record "not ok - $name"
		sed 's/^/# /' "$logf" | tail -n 30
		return 1
	fi
}

collect() {
	local f
	for f in "$1"/tap-*.txt "$1"/*/tap-*.txt; do
		[ -f "$f" ] || continue
		while IFS= read -r line; do
			case "$line" in "ok - "* | "not ok - "*) record "$line" ;; esac
		done <"$f"
	done
}

# Where the time goes: a "#" line when each phase starts and one with the
# seconds it took; finish() repeats them as a table.
phase_name= phase_t0=0 phase_table=
phase() {
	phase_end
	phase_name=$1 phase_t0=$SECONDS
	echo "# phase $phase_name: started $(date +%T)"
}
phase_end() {
	[ -n "$phase_name" ] || return 0
	local took=$((SECONDS - phase_t0))
	echo "# phase $phase_name: took $took s"
	phase_table+="# $(printf '%6d s  %s' "$took" "$phase_name")"$'\n'
	phase_name=
}

finish() {
	phase_end
	printf '# time per phase (total %d s):\n%s' "$SECONDS" "$phase_table"
	echo "1..$n"
	echo "# logs: $out"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}

echo "TAP version 13"
# The TAP stream itself, for the kernel build's progress lines.
exec 3>&1

# 1. Host-side unit tests of the wire formats.
phase "host: wire cargo test"
if (cd "$top/wire" && cargo test --color never >"$out/cargo-test.log" 2>&1); then :; else
	grep -q '^test .* \.\.\. ' "$out/cargo-test.log" || record "not ok - host: cargo test builds"
fi
while read -r _ name _ status; do
	case "$status" in
	ok) record "ok - host: $name" ;;
	ignored) record "ok - host: $name # SKIP ignored" ;;
	*) record "not ok - host: $name" ;;
	esac
done < <(grep -E '^test .* \.\.\. (ok|FAILED|ignored)' "$out/cargo-test.log")

# 1a. The floors: every file under rust/ imports only files on lower floors
# of Documentation/design.rst's table, no import circle (also in tools/),
# no file over the line limit.
check "host: floors (imports only from lower floors, no circles, files within 620 lines)" \
	eval 'python3 "$top/scripts/floors.py" --self-test && python3 "$top/scripts/floors.py"'

# 2. Kernel (cached), module and test programs. A cold build's progress
# goes to the TAP stream as comments.
phase "kernel (cached or built)"
kdir=$("$here/build-kernel.sh" 2> >(tee "$out/kernel-build.log" | sed -u 's/^/# /' >&3)) || {
	record "not ok - kernel builds"
	tail -n 30 "$out/kernel-build.log" | sed 's/^/# /'
	finish
}
phase "module: clippy, build; selftest programs"
test_set=${SMC_TEST_SET:-all}
[ "$test_set" = faults ] ||
	check "clippy: smc_rs lints clean (CLIPPY=1, undocumented unsafe denied)" \
		make -C "$top" --no-print-directory clippy KDIR="$kdir"
check "smc_rs.ko builds against $(basename "$kdir")" make -C "$top" --no-print-directory modules KDIR="$kdir" || finish
check "selftest programs build" make -C "$top/selftests" --no-print-directory || finish
check "selftests/Makefile lists every test script and helper (TEST_PROGS, TEST_FILES), no compiled Python" \
	make -C "$top/selftests" --no-print-directory check-lists

# 2b. The operator tools: the build the VM tests use (smc_run finds its
# preload library next to it there, which its tests need).
phase "tools: build"
check "tools build (smcss, smc_run, libsmc-preload)" make -C "$top" --no-print-directory tools || finish
check "man pages build (rst2man --strict) and render without warnings (man -l)" \
	eval 'make -C "$top" --no-print-directory man && for m in "$top"/tools/target/man/*.[78]; do
		[ -z "$(MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)" ] || { echo "$m"; exit 1; }; done'
check "bash completion offers every option and subcommand of the tools" bash "$top/tools/completion/test.sh"
check "make install (DESTDIR, PREFIX=/usr) installs the expected files, make uninstall removes them; Debian packages (make deb); dkms build of the DKMS package against the bed's kernel tree" \
	"$top/scripts/install-check.sh"

# vm_start NAME MODE ARGS...: starts one VM run (vm.sh MODE ARGS...,
# results in $out/NAME) in the background; vm_end NAME waits for it and
# records it with its times; vm_run NAME MODE ARGS... does both. One pair
# run at a time: a second run beside it slows both (and once made an
# upstream client's RDMA WRITE meet an invalid rkey on smc_rs's server,
# not yet explained). A single VM's vCPUs share one TCG thread, one host
# core: two single runs side by side take the two cores a pair takes.
declare -A vm_pid_of=() vm_began_of=()
vm_start() {
	local name=$1 dir=$out/$1
	shift
	mkdir -p "$dir"
	vm_began_of[$name]=$(date +%s)
	SMC_VM_OUT=$dir SMC_VM_RXE=${rxe:-1} SMC_VM_TIMEOUT=${vm_timeout:-900} \
		"$here/vm.sh" "$@" >"$dir/vm.out" 2>&1 &
	vm_pid_of[$name]=$!
}
vm_run() {
	phase "VM run $1"
	vm_start "$@"
	vm_end "$1"
}
vm_end() {
	local name=$1 dir=$out/$1 rc=0 f
	wait "${vm_pid_of[$name]}" || rc=$?
	if [ "$rc" = 0 ]; then
		record "ok - $name VM run: commands finished, no kernel splat"
	else
		record "not ok - $name VM run: commands finished, no kernel splat"
		sed 's/^/# /' "$dir/vm.out" | tail -n 20
		for f in "$dir"/vm*.log; do
			"$here/splat-check.sh" "$f" | head -n 20 | sed 's/^/# splat: /'
		done
	fi
	local failed_before=$failed
	collect "$dir"
	vm_times "$dir" "${vm_began_of[$name]}"
	# Tests failed in this run: how the guests' SMC-R links fared (the
	# first lines say what took a link down), for a reader of CI's tail.
	if [ "$failed" -gt "$failed_before" ]; then
		for f in "$dir"/vm*.dmesg; do
			[ -f "$f" ] || continue
			grep -E 'smc_rs: (link: |ib: rxe|smcr: device)|rxe0: .*(error|full)' "$f" |
				awk '!/completion error Flushed/ || !flushed++' | head -n 8 |
				sed "s|^|# ${f##*/}: |"
		done
	fi
}

# vm_times DIR BEGAN: how long each VM took to reach its command, and the
# tests of the run that took longest.
vm_times() {
	local f
	for f in "$1"/vm*.ready; do
		[ -f "$f" ] || continue
		echo "# ${f##*/}: command started $(($(stat -c %Y "$f") - $2)) s after the boot began"
	done
	cat "$1"/rounds-vm*.txt 2>/dev/null | sed 's/^/#   /'
	cat "$1"/time-*.txt "$1"/*/time-*.txt 2>/dev/null | sort -rn | head -n 12 | sed 's/^/#   test time: /; s/^\(#   test time: [0-9]*\)/\1 s/'
}

# The VM runs' commands: $scale first (check-long's soak counts, see below).
scale="export SMC_CHECK_LONG=${SMC_CHECK_LONG:-0};"
round="bash $top/selftests/round.sh"
t=$top/selftests

# 3. The host's own tests: a short coverage-guided fuzzing pass over every
# wire parser, up to 2 s a target (`make check-long`: 20 s, as `make
# fuzz`; the long runs are recorded in wire/fuzz/RESULTS.md), and the
# operator tools' unit tests. (Beside a VM run they took as long again and
# slowed the guest as much: on these machines two busy processes share
# less than two cores' worth.)
if [ "$test_set" != faults ]; then
phase "host: fuzz and the tools' cargo test"
FUZZ_SHORT_SECS=${FUZZ_SHORT_SECS:-2} "$here/fuzz.sh" short >"$out/fuzz.log" 2>&1
fuzz_rc=$?
while IFS= read -r line; do
	case "$line" in
	*": ok, "*) record "ok - fuzz: ${line%%: *} (${line#*: ok, })" ;;
	*": CRASH"*) record "not ok - fuzz: ${line%%: *} crashed"; sed 's/^/# /' "$out/fuzz.log" | tail -n 20 ;;
	esac
done <"$out/fuzz.log"
if [ "$fuzz_rc" -ne 0 ] && ! grep -q ': CRASH' "$out/fuzz.log"; then
	record "not ok - fuzz: targets build and run"
	tail -n 20 "$out/fuzz.log" | sed 's/^/# /'
fi
# The operator tools' unit tests.
if (cd "$top/tools" && cargo test --release --locked --color never >"$out/tools-test.log" 2>&1); then :; else
	grep -q '^test .* \.\.\. ' "$out/tools-test.log" || record "not ok - tools: cargo test builds"
fi
while read -r _ name _ status; do
	case "$status" in
	ok) record "ok - tools: $name" ;;
	*) record "not ok - tools: $name" ;;
	esac
done < <(grep -E '^test .* \.\.\. (ok|FAILED)' "$out/tools-test.log")
# The benchmark's CPU split (make bench) on perf samples of every kind.
python3 "$top/selftests/bench/cpu_split_test.py" -v >"$out/cpu-split-test.log" 2>&1
while read -r name _ _ status; do
	case "$status" in
	ok) record "ok - bench: cpu_split $name" ;;
	*) record "not ok - bench: cpu_split $name" ;;
	esac
done < <(grep -E '^test_.* \.\.\. ' "$out/cpu-split-test.log")
grep -q '^OK$' "$out/cpu-split-test.log" || record "not ok - bench: cpu_split_test.py runs"
fi

# 4. Single VMs, two side by side: load/unload, family ownership,
# loopback echo, unload safety, upstream's interfaces answered as upstream
# answers them in one; SMC-D through the loopback device in the other.
if [ "$test_set" != faults ]; then
	phase "VM runs single, smcd (side by side)"
	vm_timeout=1800 vm_start single single smc_rs "$scale $t/smc_rs_single.sh"
	vm_timeout=1800 vm_start smcd single smc_rs "$scale $t/smc_rs_smcd.sh"
	vm_end single
	vm_end smcd
fi

# 5. Two VMs in one boot, VM 1 with smc_rs, VM 2 with upstream smc.ko,
# then smc_rs too: rounds (selftests/round.sh: each round starts from
# freshly loaded modules, in a folder of its own):
#  1. CLC negotiation both ways, peers that echo the SMC option, hostile
#     CLC, silent clients, the handshake limitation;
#  2. the SMC-R data path with smc_rs serving upstream's client, RoCE
#     blocked towards the client (fallback, data intact), urgent data
#     behind a full send path (smc_rs reading), two send slots
#     with the client's readers interrupted by signals, abortive-close
#     churn (every word the server reads is its connection's), 1-byte
#     writes to a 1-byte reader (smc_rs reading: few consumer cursor
#     updates, no silly window), then smc_rs
#     receiving with one scatter/gather entry per request (as on RNICs with
#     max_recv_sge 1), IPv6 clients to IPv4-mapped addresses, and
#     260 connections of two RMB sizes on one link group (DELETE RKEY),
#     smc_chk (SMC-R, and a fallback's reason in words) and smc_dbg (round
#     2 only: both modules run the tools there);
#  3. the same with the roles swapped (upstream serves on VM 2), ending with
#     the smc_rs client's orphaned connection (60 s);
#  4. the rxe devices gone: negotiation only, both sides agree on TCP;
#  5. smc_rs on both: the differential semantics probe over SMC-R (TCP is
#     the oracle), smc_run --bpf (a static binary and Redis over SMC-R
#     without LD_PRELOAD), the echoes with more concurrent connections than
#     link groups take and many short ones, hostile input on the link (one
#     side's fault injection knob), RoCE blocked towards the client, urgent
#     data, 1-byte writes to a 1-byte reader, scarce send slots, abortive-close churn, a CLC qp_mtu of 0 each
#     way and a slow client's first Confirm that delays nobody, link
#     groups of 16 connections, the two of round 2 above;
#  6. smc_rs on both, captured on the wire and decoded by Wireshark's
#     dissectors, with the idle link's TEST LINK exchange;
#  7. the second link (eth1, rxe1) up: (`make check-long`: upstream on
#     both sides, the bed's reference for link groups with two links: SYM,
#     a failover that loses nothing); smc_rs with two links in every pairing, 64 MiB
#     echoes: SYM, one side's eth0 down mid-echo, the link's return, then
#     the other side's eth1 down under one connection on each link
#     (SMC_TWOLINKS_DOWN=FIRST,THEN): between two smc_rs the server's eth0
#     and the client's eth1, then the client's rxe1 removed mid-echo (7a);
#     an smc_rs client under an upstream server whose NICs go (7c); an
#     smc_rs server under an upstream client that loses its eth0, then its
#     own eth1 (7d). In rounds of their own, without NIC failovers, between
#     two smc_rs: the client's eth1 silently dropping RoCE until TEST LINK
#     (5 s) finds the link dead, then 500 connections spread over both
#     links through the client's eth0 going down (7e); 500 connections
#     through the server's eth1 going down (7f); the server's rxe1
#     removed, then added back during a burst of 120 new connections
#     (7g: SYM again, all SMC-R). The rounds with upstream (7c, 7d) run with PNET IDs on every
#     NIC and RDMA device.
# The bed's reference between two upstream modules (round 7): in `make
# check-long` only (not a test of smc_rs; 46 s).
reference=
[ "${SMC_CHECK_LONG:-0}" = 1 ] &&
	reference="SMC_TWOLINKS_ONCE=1 $round 7-twolinks --mods upstream,upstream $t/smc_rs_twolinks.sh;"
more="$t/smc_rs_rxsge.sh $t/smc_rs_v4mapped.sh"
smcr="$t/smc_rs_smcr.sh $t/smc_rs_roce_blocked.sh $t/smc_rs_urgent.sh $t/smc_rs_scarce_slots.sh $t/smc_rs_abort_churn.sh $more $t/smc_rs_rkeys.sh"
both="--mods smc_rs,smc_rs"
pair="$scale $round 1-pair $t/smc_rs_pair.sh;
$round 2-smcr-server $smcr $t/smc_rs_small_writes.sh $t/smc_rs_chk.sh;
$round 3-smcr-client --server-vm 2 $smcr $t/smc_rs_orphan.sh;
$round 4-norxe --no-rxe $t/smc_rs_pair_norxe.sh;
$round 5-smcr-both $both $t/smc_rs_semantics_pair.sh $t/smc_run_bpf.sh $t/smc_rs_smcr.sh $t/smc_rs_hostile.sh $t/smc_rs_roce_blocked.sh $t/smc_rs_urgent.sh $t/smc_rs_small_writes.sh $t/smc_rs_scarce_slots.sh $t/smc_rs_abort_churn.sh $t/smc_rs_clc_faults.sh $t/smc_rs_many_lgrs.sh $more;
$round 6-capture $both $t/smc_rs_capture.sh;
$reference
SMC_TWOLINKS_DOWN=server,client SMC_TWOLINKS_REMOVE=1 $round 7a-twolinks $both $t/smc_rs_twolinks.sh;
SMC_TWOLINKS_PNET=1 $round 7c-twolinks-upstream-server --mods upstream,smc_rs $t/smc_rs_twolinks.sh;
SMC_TWOLINKS_PNET=1 SMC_TWOLINKS_DOWN=client,server $round 7d-twolinks-upstream-client --mods smc_rs,upstream $t/smc_rs_twolinks.sh;
SMC_TWOLINKS_ONLY=1 SMC_TWOLINKS_DOWN=client SMC_TWOLINKS_SILENT=1 SMC_TWOLINKS_MANY=1 SMC_TWOLINKS_MANY_DEV=eth0 $round 7e-twolinks-silent-many $both $t/smc_rs_twolinks.sh;
SMC_TWOLINKS_ONLY=1 SMC_TWOLINKS_MANY=1 $round 7f-twolinks-many $both $t/smc_rs_twolinks.sh;
SMC_TWOLINKS_ONLY=1 SMC_TWOLINKS_BURST=1 $round 7g-twolinks-burst $both $t/smc_rs_twolinks.sh"
if [ "$test_set" = faults ]; then
	# Under KASAN the guests boot in about 10 minutes and run 3 to 5 times
	# slower: the fault scripts only, against upstream and between two
	# smc_rs.
	faults="$t/smc_rs_roce_blocked.sh $t/smc_rs_scarce_slots.sh $t/smc_rs_abort_churn.sh"
	pair="$scale $round 2-smcr-server $faults;
$round 5-smcr-both $both $t/smc_rs_hostile.sh $faults $t/smc_rs_clc_faults.sh"
fi
vm_timeout=4500 vm_run pair pair smc_rs "$pair" upstream "$pair"

finish
