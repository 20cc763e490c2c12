#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The SMC-R exchange as Wireshark sees it. VM 1 serves, VM 2 runs smc_rs as
# the client (as in smc_rs_smcr.sh; VM 1 runs smc_rs or upstream); VM 2
# captures eth0 while a few connections echo their payload, then decodes the
# capture with tshark's own dissectors: "smc" for CLC over TCP and for LLC
# and CDC inside RoCEv2 (UDP port 4791), "infiniband" for the RDMA WRITEs
# that carry the data. Nothing of smc_rs is used to judge the capture.
#
# Decoding an existing capture instead (no VM, no traffic; for showing that
# the checks fail on captures without SMC-R):
#   SMC_OUT=DIR SMC_VM=2 SMC_CAPTURE=FILE.pcap SMC_CAPTURE_BYTES=N \
#       bash selftests/smc_rs_capture.sh
# where N is the payload each direction must carry in RDMA WRITEs.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

peer=10.10.0.$((3 - SMC_VM))
port=7302
sizes="1 65536 1048576"
# Seconds the link stays idle after the connections: longer than the 30 s
# of silence after which each side tests the link (TEST LINK).
idle=36
nsizes=$(echo $sizes | wc -w)

if [ "$side" = server ]; then
	server=upstream
	if ! lsmod | grep -q '^smc '; then
		server=smc_rs
		"$here/tools/smc_ueid" add SMC-RS-TESTBED
	fi
	run_test "$server server for the captured SMC-R exchange (server side)" \
		timeout 300 smc_echo server -f smc -p "$port" -n "$nsizes"
	# The link stays up while the client captures its idle time.
	sleep "$((idle + 10))"
	exit 0
fi

pcap=${SMC_CAPTURE:-$SMC_OUT/smcr.pcap}
total=${SMC_CAPTURE_BYTES:-0}

# Live part: capture on eth0 around the connections.
if [ -z "${SMC_CAPTURE:-}" ]; then
	"$here/tools/smc_ueid" add SMC-RS-TESTBED
	capture_started() {
		local i
		# A 32 MiB kernel buffer: a slow VM must not drop frames.
		dumpcap -q -i eth0 -B 32 -P -w "$pcap" 2>"$SMC_OUT/dumpcap-vm2.txt" &
		capture_pid=$!
		for i in $(seq 300); do
			grep -q "Capturing on" "$SMC_OUT/dumpcap-vm2.txt" && return 0
			kill -0 "$capture_pid" 2>/dev/null || break
			sleep 0.1
		done
		cat "$SMC_OUT/dumpcap-vm2.txt"
		return 1
	}
	run_test "dumpcap captures eth0 (client side)" capture_started
	for s in $sizes; do
		run_test "smc_rs client -> SMC-R server, $s bytes echoed (captured)" \
			timeout 120 smc_echo client -f smc -a "$peer" -p "$port" -s "$s" -w 90
		total=$((total + s))
	done
	capture_stopped() {
		# The last CDC and TCP FIN exchange, then the idle link's TEST LINKs.
		sleep "$idle"
		kill -INT "$capture_pid" && wait "$capture_pid"
		cat "$SMC_OUT/dumpcap-vm2.txt"
		# dumpcap's closing line: "Packets received/dropped on interface 'eth0': R/D (...)"
		grep -Eq "received/dropped on interface 'eth0': [0-9]+/0 " "$SMC_OUT/dumpcap-vm2.txt"
	}
	run_test "capture stopped, no frame dropped by the kernel" capture_stopped
fi

# Two decoding passes (tshark 4.0 as Debian 12 ships it). Both turn off the
# RPC-over-RDMA heuristic: it claims the 44-byte SMC-Rv2 LLC messages the
# smc heuristic lets pass (see below), then fails on them as malformed RPC.
#
# Pass 1, heuristics only: CLC on TCP; CDC and SMC-R v1 LLC inside RoCEv2;
# the InfiniBand headers of every RDMA WRITE; malformed frames and expert
# errors. Its fields, tab-separated, one line a frame, are in $decoded.
#
# Pass 2, LLC: the smc heuristic on InfiniBand payloads reads the 16-bit
# length of an SMC-Rv2 LLC message (type 0x2N) big-endian and wants 44;
# Linux writes that length in host byte order (net/smc/smc_llc.c, 0x2c 0x00
# on x86), so the heuristic rejects every v2 LLC message. Pass 2 therefore
# hands each RC SEND Only payload (opcode 4: LLC and CDC, 44 bytes each) to
# the smc dissector as "decode as" and keeps those frames only, in $llc.
decoded=$SMC_OUT/smcr-fields-vm2.txt
llc=$SMC_OUT/smcr-llc-vm2.txt
fields=(frame.number frame.len frame.cap_len ip.src ip.dst udp.length infiniband.bth.opcode infiniband.bth.padcnt
	infiniband.reth.dmalen smc.clc_msg smc.llc_msg _ws.malformed _ws.expert.severity
	_ws.col.Protocol _ws.col.Info)
llc_fields=(frame.number ip.src smc.llc_msg smc.confirm.link.response smc.length
	_ws.malformed _ws.col.Info)
common=(-n -r "$pcap" -d udp.port==4791,infiniband --disable-heuristic rpcrdma_infiniband)
decode() {
	local -a args=() llc_args=()
	local f
	for f in "${fields[@]}"; do args+=(-e "$f"); done
	for f in "${llc_fields[@]}"; do llc_args+=(-e "$f"); done
	tshark -v | head -n 1
	tshark "${common[@]}" -T fields -E occurrence=a -E aggregator=, "${args[@]}" >"$decoded" ||
		return 1
	tshark "${common[@]}" -d infiniband,smc -Y "infiniband.bth.opcode == 4" \
		-T fields -E occurrence=a -E aggregator=, "${llc_args[@]}" >"$llc" || return 1
	echo "$(wc -l <"$decoded") frames decoded, $(wc -l <"$llc") of them RC SEND Only"
	# For the record: Wireshark's defaults (every heuristic on).
	echo "with every heuristic on, frames tshark flags malformed:"
	tshark -n -r "$pcap" -Y _ws.malformed
	tshark -n -q -r "$pcap" -z expert
	[ -s "$decoded" ]
}
run_test "tshark decodes the capture" decode

# col NAME [LIST]: the 1-based column of field NAME in the array LIST
# (default: fields), for awk.
col() {
	local -n list=${2:-fields}
	local i
	for i in "${!list[@]}"; do
		[ "${list[$i]}" = "$1" ] && { echo $((i + 1)); return; }
	done
}
c_len=$(col frame.len) c_caplen=$(col frame.cap_len)
c_src=$(col ip.src) c_udplen=$(col udp.length) c_op=$(col infiniband.bth.opcode)
c_pad=$(col infiniband.bth.padcnt) c_dmalen=$(col infiniband.reth.dmalen)
c_clc=$(col smc.clc_msg) c_llc=$(col smc.llc_msg) c_malformed=$(col _ws.malformed)
c_sev=$(col _ws.expert.severity) c_proto=$(col _ws.col.Protocol) c_info=$(col _ws.col.Info)
l_src=$(col ip.src llc_fields) l_msg=$(col smc.llc_msg llc_fields)
l_resp=$(col smc.confirm.link.response llc_fields) l_len=$(col smc.length llc_fields)
l_malformed=$(col _ws.malformed llc_fields) l_info=$(col _ws.col.Info llc_fields)

# count AWK_CONDITION [FILE]: lines of FILE (default: pass 1) satisfying it.
count() {
	awk -F'\t' "$1 { n++ } END { print n + 0 }" "${2:-$decoded}"
}

# (a) CLC: smc.clc_msg 1 Proposal, 2 Accept, 3 Confirm (4 Decline: none).
clc_complete() {
	local proposal accept confirm decline
	echo "CLC messages (smc.clc_msg):"
	awk -F'\t' -v c="$c_clc" -v p="$c_proto" -v i="$c_info" \
		'$c != "" { print $1 "\t" $p "\t" $i }' "$decoded"
	proposal=$(count "\$$c_clc ~ /(^|,)1(,|\$)/")
	accept=$(count "\$$c_clc ~ /(^|,)2(,|\$)/")
	confirm=$(count "\$$c_clc ~ /(^|,)3(,|\$)/")
	decline=$(count "\$$c_clc ~ /(^|,)4(,|\$)/")
	echo "Proposal $proposal, Accept $accept, Confirm $confirm, Decline $decline; connections $nsizes"
	[ "$proposal" -ge "$nsizes" ] && [ "$accept" -ge "$nsizes" ] &&
		[ "$confirm" -ge "$nsizes" ] && [ "$decline" -eq 0 ]
}
run_test "capture: CLC Proposal, Accept and Confirm for each connection, no Decline (tshark smc.clc_msg)" \
	clc_complete

# (b) LLC and CDC inside RoCEv2. smc.llc_msg: 0x01/0x21 CONFIRM LINK (v1/v2),
# 0x06/0x26 CONFIRM RKEY, 0x09/0x29 DELETE RKEY, 0xfe CDC.
is_confirm_link="\$$l_msg ~ /^0x(01|21)\$/"
is_response="\$$l_resp ~ /^(1|True)\$/"
llc_confirm_link() {
	local request response
	echo "LLC messages (pass 2, smc.llc_msg; CDC left out):"
	awk -F'\t' -v m="$l_msg" -v n="$l_len" -v i="$l_info" \
		'$m != "" && $m != "0xfe" { print $1 "\t" $i "\tsmc.length " $n }' "$llc"
	request=$(count "$is_confirm_link && !($is_response)" "$llc")
	response=$(count "$is_confirm_link && $is_response" "$llc")
	echo "CONFIRM LINK requests $request, responses $response"
	[ "$request" -ge 1 ] && [ "$response" -ge 1 ]
}
run_test "capture: LLC CONFIRM LINK request and response inside RoCEv2 (tshark smc.llc_msg, decode-as smc)" \
	llc_confirm_link
# 0x07/0x27: TEST LINK (v1/v2).
is_test_link="\$$l_msg ~ /^0x(07|27)\$/"
# The dissector flags a TEST LINK response only in its summary ("(Resp)").
is_test_link_response="\$$l_info ~ /\\(Resp\\)/"
llc_test_link() {
	local request response
	awk -F'\t' -v m="$l_msg" -v i="$l_info" '$m ~ /^0x(07|27)$/ { print $1 "\t" $i }' "$llc"
	request=$(count "$is_test_link && !($is_test_link_response)" "$llc")
	response=$(count "$is_test_link && $is_test_link_response" "$llc")
	echo "TEST LINK requests $request, responses $response"
	[ "$request" -ge 1 ] && [ "$response" -ge 1 ]
}
run_test "capture: the idle link is tested, TEST LINK request and response (tshark smc.llc_msg)" \
	llc_test_link
send_payloads_known() {
	local sends unknown
	sends=$(wc -l <"$llc")
	# Anything the smc dissector cannot name shows as "Unknown Command".
	unknown=$(count "\$$l_msg == \"\" || \$$l_info ~ /Unknown Command/ || \$$l_malformed != \"\"" "$llc")
	echo "RC SEND Only frames $sends, not a known LLC or CDC message (or malformed) $unknown"
	awk -F'\t' -v m="$l_msg" '{ print $m }' "$llc" | sort | uniq -c
	[ "$sends" -gt 0 ] && [ "$unknown" -eq 0 ]
}
run_test "capture: every RC SEND Only payload is a known SMC-R LLC or CDC message (tshark decode-as smc)" \
	send_payloads_known
cdc_present() {
	local cdc from_client from_server
	cdc=$(count "\$$c_llc == \"0xfe\"")
	from_client=$(count "\$$c_llc == \"0xfe\" && \$$c_src == \"10.10.0.$SMC_VM\"")
	from_server=$((cdc - from_client))
	echo "CDC messages (pass 1, heuristic) $cdc (client $from_client, server $from_server); first few:"
	awk -F'\t' -v l="$c_llc" -v p="$c_proto" -v i="$c_info" \
		'$l == "0xfe" && n++ < 6 { print $1 "\t" $p "\t" $i }' "$decoded"
	# Every connection's close alone needs CDC messages both ways.
	[ "$from_client" -ge "$nsizes" ] && [ "$from_server" -ge "$nsizes" ]
}
run_test "capture: CDC messages inside RoCEv2 from both peers (tshark heuristic, smc.llc_msg 0xfe)" cdc_present

# (c) RDMA WRITE First/Middle/Last/Only (opcodes 6, 7, 8, 10; 9 and 11 with
# immediate): payload = UDP length - UDP header 8 - BTH 12 - RETH 16 (First,
# Only) - ImmDt 4 - pad - ICRC 4. Only frames captured whole count, and the
# payload must add up to the lengths the RETHs announce.
write_bytes() {
	awk -F'\t' -v s="$c_src" -v u="$c_udplen" -v o="$c_op" -v pad="$c_pad" -v d="$c_dmalen" \
		-v fl="$c_len" -v cl="$c_caplen" -v me="10.10.0.$SMC_VM" '
	$o ~ /^(6|7|8|9|10|11)$/ {
		dir = ($s == me) ? "client" : "server"
		if ($cl != $fl) { cut[dir]++; next }
		len = $u - 8 - 12 - $pad - 4
		if ($o == 6 || $o == 10 || $o == 11) len -= 16
		if ($o == 9 || $o == 11) len -= 4
		bytes[dir] += len; frames[dir]++
		if ($d != "") announced[dir] += $d
	}
	END {
		for (i = 0; i < 2; i++) {
			dir = i ? "server" : "client"
			printf "%s RDMA WRITE frames %d (%d cut short by the capture), payload %d bytes, RETH DMA length %d\n",
				dir, frames[dir], cut[dir], bytes[dir], announced[dir]
		}
		ok = bytes["client"] == announced["client"] && bytes["server"] == announced["server"] &&
			cut["client"] + cut["server"] == 0
		print bytes["client"] + 0, bytes["server"] + 0, ok
	}' "$decoded"
}
rdma_write_carries_payload() {
	local out client server consistent
	out=$(write_bytes)
	echo "$out" | head -n 2
	read -r client server consistent < <(echo "$out" | tail -n 1)
	# The client writes each connection's 8-byte length header and the data
	# into the server's RMB; the server echoes the data into the client's.
	echo "echoed payload: $total bytes each way (client adds 8 bytes a connection)"
	[ "$total" -gt 0 ] && [ "$consistent" = 1 ] &&
		[ "$client" -ge "$total" ] && [ "$server" -ge "$total" ]
}
run_test "capture: RDMA WRITEs carry the echoed payload both ways (tshark infiniband.bth.opcode, infiniband.reth.dmalen)" \
	rdma_write_carries_payload

# (d) Nothing Wireshark considers malformed or an error. An RDMA WRITE's
# payload is the application's bytes: when no heuristic claims it, the
# InfiniBand dissector reads its first four bytes as an Ethernet type and
# two zero bytes, so a 1-byte write of 0x08 or 0x90 (three pad bytes of
# zero) is handed to IPv4 or LOOP, which then fail on it. Such a frame is
# listed but not counted when the InfiniBand headers themselves decoded
# (no "Malformed Packet: InfiniBand") and the guess is all that failed.
# RC RDMA WRITE opcodes: 6 First, 7 Middle, 8 Last, 9 Last with Immediate,
# 10 Only, 11 Only with Immediate.
well_formed() {
	local verdicts errors guessed
	verdicts=$(awk -F'\t' -v m="$c_malformed" -v e="$c_sev" -v op="$c_op" '
		{
			bad = $m != "" || $e ~ /(^|,)(8388608|0x00800000)(,|$)/
			if (!bad) next
			write = $op ~ /^(6|7|8|9|10|11)$/
			if (write && $m != "" && $m !~ /InfiniBand/)
				print "guessed\t" $0
			else
				print "bad\t" $0
		}' "$decoded")
	errors=$(printf '%s\n' "$verdicts" | grep -c '^bad' || true)
	guessed=$(printf '%s\n' "$verdicts" | grep -c '^guessed' || true)
	echo "$(wc -l <"$decoded") frames: malformed or with expert errors $errors;" \
		"RDMA WRITE payloads a guessed Ethernet type failed on (not counted) $guessed"
	printf '%s\n' "$verdicts" | grep -v '^$' | head -n 10
	[ -s "$decoded" ] && [ "$errors" -eq 0 ]
}
run_test "capture: no frame malformed or with an expert error, RPC-over-RDMA heuristic off (tshark _ws.malformed, _ws.expert.severity)" \
	well_formed

[ -n "${SMC_CAPTURE:-}" ] || dmesg | grep smc_rs | tail -20
