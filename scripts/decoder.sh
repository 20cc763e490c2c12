#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The host's side of the guests' `tshark` (selftests/lib.sh): runs Wireshark's
# tshark natively on the captures the guests write into the shared folder.
# In a TCG guest tshark's start (its dissectors registered, libwireshark read
# over the shared root) takes a minute and more; here, a second. The decoder
# is the same binary the guests have: the guests' root is the host's.
#
#   decoder.sh DIR     serve the requests in DIR until killed
#
# A request is DIR/NAME.args, tshark's arguments separated by NUL bytes
# (paths absolute, inside the shared folder); the answer is NAME.out and
# NAME.err, then NAME.rc (tshark's exit status), each written whole before
# its name appears.
set -u
dir=${1:?usage: decoder.sh DIR}
mkdir -p "$dir"

while :; do
	for req in "$dir"/*.args; do
		[ -e "$req" ] || continue
		name=${req%.args}
		mapfile -d '' -t args <"$req"
		rm -f "$req"
		rc=0
		tshark "${args[@]}" >"$name.out.tmp" 2>"$name.err.tmp" </dev/null || rc=$?
		mv "$name.out.tmp" "$name.out"
		mv "$name.err.tmp" "$name.err"
		echo "$rc" >"$name.rc.tmp"
		mv "$name.rc.tmp" "$name.rc"
	done
	sleep 0.2
done
