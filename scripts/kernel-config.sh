#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Write .config in the current kernel tree: virtme-ng's minimal VM base, our
# fragment on top, then the options virtme-ng forces back on turned off again.
# Fails when an option smc_rs depends on did not survive olddefconfig.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
fragment=$1

"$SMC_TOOLS/venv/bin/vng" --kconfig --config "$fragment" >/dev/null

# Debug information is chosen by the fragment alone (vng appends its own
# DWARF choice after the fragment): start from none, the fragment turns it on.
scripts/config --disable DEBUG_INFO --enable DEBUG_INFO_NONE \
	--disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
	--disable DEBUG_INFO_DWARF4 --disable DEBUG_INFO_DWARF5 \
	--disable DEBUG_INFO_BTF
# Apply the "is not set" lines of the fragment again: vng's base may re-enable them.
sed -n 's/^# CONFIG_\([A-Z0-9_]*\) is not set$/\1/p' "$fragment" |
	while read -r opt; do scripts/config --disable "$opt"; done
sed -n 's/^CONFIG_\([A-Z0-9_]*\)=\(.*\)$/\1 \2/p' "$fragment" |
	while read -r opt val; do
		case "$val" in
		y) scripts/config --enable "$opt" ;;
		m) scripts/config --module "$opt" ;;
		n) scripts/config --disable "$opt" ;;
		*) scripts/config --set-val "$opt" "$val" ;;
		esac
	done
make olddefconfig >/dev/null

bad=0
while read -r opt val; do
	case "$val" in
	n) grep -q "^CONFIG_$opt=" .config && { log "config: CONFIG_$opt stayed on"; bad=1; } ;;
	*) grep -qx "CONFIG_$opt=$val" .config || { log "config: CONFIG_$opt=$val did not stick"; bad=1; } ;;
	esac
done < <(sed -n 's/^CONFIG_\([A-Z0-9_]*\)=\(.*\)$/\1 \2/p' "$fragment")
[ $bad -eq 0 ] || die "kernel configuration lost required options (is the Rust toolchain right?)"
