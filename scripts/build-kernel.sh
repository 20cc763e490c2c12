#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the Rust-enabled debug kernel that smc_rs is built against and
# tested on. The tree is cached outside the repository, keyed by the Debian
# kernel source version and the content of .config.fragment; a warm cache
# returns at once. Prints the kernel tree's path on stdout.
#
#   build-kernel.sh            build if needed, print the path
#   build-kernel.sh --if-built print the path if the tree is built, else nothing
#
# SMC_KERNEL_FLAVOUR selects another tree, cached beside the default one
# under its own name (neither replaces the other): kasan, the same kernel
# with kasan.config on top, built by clang (LLVM=1), since 6.12 allows
# KASAN beside Rust only in a clang-built kernel; release, the same kernel
# without the debug checkers (release.config), for benchmarks.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
. "$here/lib.sh"

if_built=0
[ "${1:-}" = --if-built ] && if_built=1
[ $if_built -eq 1 ] || check_toolchain

src_version=$(dpkg-query -W -f='${Version}' "linux-source-$KERNEL_SERIES" 2>/dev/null) || exit 0
flavour=${SMC_KERNEL_FLAVOUR:-}
fragments=("$top/.config.fragment")
case "$flavour" in
"") ;;
kasan)
	fragments+=("$here/kasan.config")
	export LLVM=1 ;;
release) fragments+=("$here/release.config") ;;
*) die "unknown SMC_KERNEL_FLAVOUR '$flavour' (known: kasan, release)" ;;
esac
key=$(cat "${fragments[@]}" "$here/kernel-config.sh" | sha256sum | cut -c1-12)
kdir="$SMC_CACHE/linux-$src_version-${flavour:+$flavour-}$key"

if [ -f "$kdir/.smc_rs_built" ]; then
	echo "$kdir"
	exit 0
fi
[ $if_built -eq 0 ] || exit 0

# One builder at a time: a second caller waits for the first one's tree.
mkdir -p "$SMC_CACHE"
exec 9>"$SMC_CACHE/.build.lock"
flock 9
if [ -f "$kdir/.smc_rs_built" ]; then
	echo "$kdir"
	exit 0
fi

export PATH=$(kernel_path)
jobs=$(nproc)
tmp="$kdir.partial"

if [ ! -f "$tmp/.smc_rs_configured" ]; then
	rm -rf "$tmp"
	mkdir -p "$tmp"
	log "extracting linux-source-$KERNEL_SERIES $src_version"
	tar -xJf "/usr/src/linux-source-$KERNEL_SERIES.tar.xz" -C "$tmp" --strip-components=1
	log "configuring (virtme-ng base + .config.fragment)"
	# A later fragment's setting of an option replaces an earlier one's.
	awk 'match($0, /^CONFIG_[A-Z0-9_]+=|^# CONFIG_[A-Z0-9_]+ is not set$/) {
		o = $0; sub(/^# /, "", o); sub(/[= ].*/, "", o)
		if (!(o in v)) order[n++] = o
		v[o] = $0
	} END { for (i = 0; i < n; i++) print v[order[i]] }' "${fragments[@]}" >"$tmp/.smc_rs_fragment"
	(cd "$tmp" && bash "$here/kernel-config.sh" .smc_rs_fragment) 2>&1 | { grep -v "warning: override" || true; } >&2
	touch "$tmp/.smc_rs_configured"
fi

log "building kernel in $tmp with $jobs jobs (a cold build takes 20-30 minutes)"
start=$(date +%s)
# Progress: one line per 500 objects instead of the full make output.
make -C "$tmp" -j"$jobs" 2>&1 | tee "$tmp/build.log" |
	awk '/^  (CC|RUSTC|LD|AR)/ { n++; if (n % 500 == 0) { printf "[kernel build] %d objects\n", n; fflush() } }
	     /error:|Error [0-9]/ { print; fflush() }' |
	while IFS= read -r line; do log "$line"; done
[ "${PIPESTATUS[0]}" -eq 0 ] || die "kernel build failed, see $tmp/build.log"
log "kernel built in $(( $(date +%s) - start )) s"

touch "$tmp/.smc_rs_built"
rm -rf "$kdir"
mv "$tmp" "$kdir"
# Older trees of this flavour (another source version or fragment) are stale.
for old in "$SMC_CACHE"/linux-*; do
	[ "$old" != "$kdir" ] && [ -d "$old" ] || continue
	case "${old#"$SMC_CACHE"/linux-}" in
	*-kasan-*) [ "$flavour" = kasan ] || continue ;;
	*-release-*) [ "$flavour" = release ] || continue ;;
	*) [ -z "$flavour" ] || continue ;;
	esac
	log "removing stale $old"
	rm -rf "$old"
done
echo "$kdir"
