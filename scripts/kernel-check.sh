#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Can smc_rs be built against, and loaded into, the kernel of build tree
# KDIR? Says so in one line, or names each thing that is missing and how
# to get it, and fails.
#
#   kernel-check.sh KDIR
#
# Checked: a configured build tree (a distribution's headers package has
# one), CONFIG_RUST=y, CONFIG_NET and CONFIG_INFINIBAND for SMC-R, and the
# rustc and bindgen on PATH against the versions the kernel was built with
# (a Rust module must be compiled by the very rustc of its kernel).
set -u
kdir=${1:?usage: kernel-check.sh KDIR}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
PATH=$(kernel_path)

problems=()
config=$kdir/.config
release=$(cat "$kdir/include/config/kernel.release" 2>/dev/null)
if [ -z "$release" ]; then
	case "$kdir" in
	/lib/modules/*/build | /lib/modules/*/build/) release=${kdir#/lib/modules/} release=${release%%/*} ;;
	*) release=$(basename "$kdir") ;;
	esac
fi

# cfg NAME: the value of NAME in the tree's configuration (empty if unset).
cfg() {
	sed -n "s/^$1=//p" "$config" | tr -d '"'
}

if [ ! -f "$kdir/Makefile" ] || [ ! -f "$config" ]; then
	problems+=("no configured kernel build tree at $kdir (a distribution's headers package, e.g. linux-headers-$(uname -r), provides one; 'make kernel' builds the test bed's)")
else
	if [ "$(cfg CONFIG_RUST)" != y ]; then
		problems+=("kernel $release was built without CONFIG_RUST: it cannot load any Rust module (boot a kernel built with Rust support, such as the test bed's: 'make kernel')")
	fi
	for opt in CONFIG_NET CONFIG_INET CONFIG_INFINIBAND; do
		[ -n "$(cfg $opt)" ] || problems+=("kernel $release lacks $opt")
	done
	want=$(cfg CONFIG_RUSTC_VERSION_TEXT)
	have=$(rustc --version 2>/dev/null)
	if [ -n "$want" ] && [ "$have" != "$want" ]; then
		problems+=("kernel $release was built by '$want', the rustc on PATH is '${have:-none}' (install that rustc and put it first on PATH)")
	fi
	want=$(cfg CONFIG_BINDGEN_VERSION_TEXT)
	have=$(bindgen --version 2>/dev/null)
	if [ -n "$want" ] && [ "$have" != "$want" ]; then
		problems+=("kernel $release was built with '$want', the bindgen on PATH is '${have:-none}'")
	fi
fi

if [ ${#problems[@]} -eq 0 ]; then
	echo "smc_rs builds for kernel $release ($kdir)"
	exit 0
fi
echo "smc_rs cannot be built for kernel $release:" >&2
for p in "${problems[@]}"; do
	echo "  - $p" >&2
done
exit 1
