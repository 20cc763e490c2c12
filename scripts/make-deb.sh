#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian packages of smc_rs, built with dpkg-deb from the tree (no
# debian/ directory, no network):
#
#   smc-rs-tools_VERSION_ARCH.deb  the operator tools in /usr/bin (smcss,
#       smcr, smcd, smc_pnet, smc_run, smc_chk, smc_dbg), the preload
#       library in /usr/lib/<multiarch>/libsmc-preload.so (where smc_run
#       looks), the man pages (gzipped) and the bash completion;
#   smc-rs-dkms_VERSION_all.deb    the module's source in
#       /usr/src/smc_rs-VERSION for DKMS (postinst: dkms add, build and
#       install for the running kernel when it has CONFIG_RUST; DKMS
#       rebuilds it for kernels installed later) and
#       /etc/modprobe.d/smc_rs.conf.
#
# Both conflict with IBM's smc-tools package (the same tool names).
#
#   scripts/make-deb.sh [OUTDIR]     (default: deb/ in the tree)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/deb}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
arch=$(dpkg --print-architecture)
multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
tools="smcss smcr smcd smc_pnet smc_run smc_chk smc_dbg"
maintainer="smc_rs developers <smc_rs@localhost>"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

# copyright DIR PACKAGE: the machine-readable copyright file.
copyright() {
	mkdir -p "$1/usr/share/doc/$2"
	cat >"$1/usr/share/doc/$2/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: smc_rs

Files: *
Copyright: smc_rs developers
License: GPL-2.0
 On Debian systems the full text of the GNU General Public License
 version 2 is in /usr/share/common-licenses/GPL-2.
EOF
}

# build DIR NAME: the control file's sizes, then the package.
build() {
	local size
	size=$(du -sk --exclude=DEBIAN "$1" | cut -f1)
	sed -i "s/^Installed-Size: .*/Installed-Size: $size/" "$1/DEBIAN/control"
	dpkg-deb --root-owner-group -Zxz --build "$1" "$out/$2" >/dev/null
	echo "$out/$2"
}

# The tools.
make -s -C "$top" --no-print-directory tools man >/dev/null
r=$tmp/tools
mkdir -p "$r/DEBIAN" "$r/usr/bin" "$r/usr/lib/$multi" "$r/usr/share/man/man7" \
	"$r/usr/share/man/man8" "$r/usr/share/bash-completion/completions"
for t in $tools; do
	install -m 0755 "$top/tools/target/release/$t" "$r/usr/bin/$t"
	install -m 0644 "$top/tools/completion/$t" "$r/usr/share/bash-completion/completions/$t"
done
install -m 0644 "$top/tools/target/release/libsmc_preload.so" "$r/usr/lib/$multi/libsmc-preload.so"
for m in "$top"/tools/target/man/*.[78]; do
	gzip -9n <"$m" >"$r/usr/share/man/man${m##*.}/$(basename "$m").gz"
done
copyright "$r" smc-rs-tools
cat >"$r/DEBIAN/control" <<EOF
Package: smc-rs-tools
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: 0
Depends: libc6, libgcc-s1, libelf1, zlib1g
Conflicts: smc-tools
Section: net
Priority: optional
Description: operator tools for AF_SMC (SMC-R, SMC-D)
 smcss, smcr, smcd, smc_pnet, smc_run (with its preload library and a BPF
 mode), smc_chk and smc_dbg, with the names, options and output of IBM's
 smc-tools, for smc_rs or upstream's smc module.
EOF
build "$r" "smc-rs-tools_${version}_${arch}.deb"

# The module's source for DKMS.
d=$tmp/dkms
src=$d/usr/src/smc_rs-$version
mkdir -p "$d/DEBIAN" "$src" "$d/etc/modprobe.d"
(cd "$top" && git ls-files -z --cached --others --exclude-standard -- \
	Kbuild Makefile dkms.conf .config.fragment include rust wire/src scripts modprobe |
	xargs -0 cp --parents -t "$src")
install -m 0644 "$top/modprobe/smc_rs.conf" "$d/etc/modprobe.d/smc_rs.conf"
copyright "$d" smc-rs-dkms
cat >"$d/DEBIAN/control" <<EOF
Package: smc-rs-dkms
Version: $version
Architecture: all
Maintainer: $maintainer
Installed-Size: 0
Depends: dkms, make
Section: kernel
Priority: optional
Description: AF_SMC (Shared Memory Communications) in Rust, as a DKMS module
 smc_rs implements the AF_SMC socket family (SMC-R over RoCE, with TCP
 fallback) for kernels built with CONFIG_RUST, interoperating with
 upstream's smc module. Kernels without Rust support are skipped.
EOF
printf '/etc/modprobe.d/smc_rs.conf\n' >"$d/DEBIAN/conffiles"
cat >"$d/DEBIAN/postinst" <<EOF
#!/bin/sh
set -e
if [ "\$1" = configure ]; then
	dkms add -m smc_rs -v $version >/dev/null 2>&1 || true
	dkms autoinstall -k "\$(uname -r)" || true
fi
EOF
cat >"$d/DEBIAN/prerm" <<EOF
#!/bin/sh
set -e
if [ "\$1" = remove ] || [ "\$1" = upgrade ]; then
	dkms remove -m smc_rs -v $version --all >/dev/null 2>&1 || true
fi
EOF
chmod 0755 "$d/DEBIAN/postinst" "$d/DEBIAN/prerm"
build "$d" "smc-rs-dkms_${version}_all.deb"
