#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What `make install` and `make uninstall` leave, in a scratch DESTDIR with
# PREFIX=/usr: after install exactly the expected files (depmod's index
# files aside), the module carrying upstream's aliases and the modprobe.d
# file naming smc_rs for each of them, the preload library with its
# SONAME; after uninstall no file (depmod's
# index aside). Then the Debian packages (scripts/make-deb.sh) and `dkms
# build` of the DKMS package's source against the bed's kernel tree
# (DKMS_CHECK=0 leaves them out), in a DKMS tree of its own.
#
#   scripts/install-check.sh [install|dkms]   (both without an argument)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
tmp=$(mktemp -d /tmp/smc_rs-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
kdir=$(make -s -C "$top" --no-print-directory kdir)
krel=$(cat "$kdir/include/config/kernel.release") || exit 1
tools="smcss smcr smcd smc_pnet smc_run smc_chk smc_dbg"

# files DIR: the files under DIR, depmod's index files left out.
files() {
	(cd "$1" && find . -type f | sed 's|^\./||' | grep -v "^lib/modules/$krel/modules\." | sort)
}

install_check() {
	local d=$tmp/root want got a rc=0
	make -s -C "$top" --no-print-directory install DESTDIR="$d" PREFIX=/usr >"$tmp/install.log" 2>&1 ||
		{ cat "$tmp/install.log"; return 1; }
	want=$({
		echo etc/modprobe.d/smc_rs.conf
		echo "lib/modules/$krel/updates/smc_rs.ko"
		echo usr/lib/libsmc-preload.so
		for t in $tools; do
			echo "usr/bin/$t"
			echo "usr/share/bash-completion/completions/$t"
			echo "usr/share/man/man8/$t.8"
		done
		echo usr/share/man/man7/af_smc.7
	} | sort)
	got=$(files "$d")
	if [ "$got" != "$want" ]; then
		echo "installed files differ from the expected ones:"
		diff <(echo "$want") <(echo "$got")
		rc=1
	fi
	for t in $tools; do
		[ -x "$d/usr/bin/$t" ] || { echo "usr/bin/$t is not executable"; rc=1; }
	done
	readelf -d "$d/usr/lib/libsmc-preload.so" | grep -qF 'Library soname: [libsmc-preload.so]' ||
		{ echo "libsmc-preload.so has no SONAME libsmc-preload.so"; rc=1; }
	grep -q smc_rs.ko "$d/lib/modules/$krel/modules.dep" ||
		{ echo "depmod did not index smc_rs.ko"; rc=1; }
	# Every alias of the module is named in the modprobe.d file.
	for a in $(modinfo -F alias "$d/lib/modules/$krel/updates/smc_rs.ko"); do
		grep -qx "alias $a smc_rs" "$d/etc/modprobe.d/smc_rs.conf" ||
			{ echo "alias $a missing from modprobe.d/smc_rs.conf"; rc=1; }
	done
	modinfo -F alias "$d/lib/modules/$krel/updates/smc_rs.ko" | grep -qx net-pf-43 ||
		{ echo "no net-pf-43 alias"; rc=1; }
	make -s -C "$top" --no-print-directory uninstall DESTDIR="$d" PREFIX=/usr ||
		{ echo "make uninstall failed"; return 1; }
	got=$(files "$d")
	if [ -n "$got" ]; then
		echo "left after make uninstall:"
		echo "$got"
		rc=1
	fi
	echo "install: $(echo "$want" | wc -l) files, uninstall: none left"
	return $rc
}

# The Debian packages (scripts/make-deb.sh): the tools package holds
# exactly the expected files and its smc_run finds the library where the
# package puts it; the DKMS package's source builds with `dkms build`
# against the bed's kernel tree, in a DKMS tree of its own.
dkms_check() {
	local v x want got
	command -v dkms >/dev/null || { echo "dkms not installed (make setup)"; return 1; }
	v=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
	"$top/scripts/make-deb.sh" "$tmp/debs" || return 1
	x=$tmp/x
	mkdir -p "$x/tools" "$x/dkms"
	dpkg-deb -x "$tmp/debs/smc-rs-tools_${v}_$(dpkg --print-architecture).deb" "$x/tools"
	dpkg-deb -x "$tmp/debs/smc-rs-dkms_${v}_all.deb" "$x/dkms"
	want=$({
		for t in $tools; do
			echo "usr/bin/$t"
			echo "usr/share/bash-completion/completions/$t"
			echo "usr/share/man/man8/$t.8.gz"
		done
		echo "usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libsmc-preload.so"
		echo usr/share/man/man7/af_smc.7.gz
		echo usr/share/doc/smc-rs-tools/copyright
	} | sort)
	got=$(cd "$x/tools" && find . -type f | sed 's|^\./||' | sort)
	[ "$got" = "$want" ] || { echo "tools package files differ:"; diff <(echo "$want") <(echo "$got"); return 1; }
	"$x/tools/usr/bin/smc_run" true 2>"$tmp/run.err" ||
		{ cat "$tmp/run.err"; echo "the packaged smc_run does not find its library"; return 1; }
	[ -f "$x/dkms/etc/modprobe.d/smc_rs.conf" ] && [ -f "$x/dkms/usr/src/smc_rs-$v/dkms.conf" ] ||
		{ echo "the dkms package lacks its modprobe.d file or dkms.conf"; return 1; }
	mkdir -p "$tmp/tree"
	dkms add -m smc_rs -v "$v" --sourcetree "$x/dkms/usr/src" --dkmstree "$tmp/tree" >"$tmp/dkms.log" 2>&1 &&
		dkms build -m smc_rs -v "$v" -k "$krel" --kernelsourcedir "$kdir" \
			--sourcetree "$x/dkms/usr/src" --dkmstree "$tmp/tree" >>"$tmp/dkms.log" 2>&1
	local rc=$?
	tail -n 3 "$tmp/dkms.log"
	[ "$rc" = 0 ] || { tail -n 30 "$tmp/tree/smc_rs/$v/build/make.log" 2>/dev/null; return 1; }
	ls "$tmp/tree/smc_rs/$v/$krel/"*/module/smc_rs.ko* >/dev/null 2>&1 ||
		{ echo "no smc_rs.ko in the DKMS tree"; return 1; }
	echo "packages: smc-rs-tools and smc-rs-dkms $v; dkms build: smc_rs $v for $krel"
}

case $what in
install) install_check ;;
dkms) dkms_check ;;
*) install_check && { [ "${DKMS_CHECK:-1}" = 0 ] || dkms_check; } ;;
esac
