# SPDX-License-Identifier: GPL-2.0
# Shared settings for the build and VM scripts. Sourced, not run.

# Not under /var/cache: virtme-ng hides that from its guests.
SMC_CACHE=${SMC_CACHE:-/var/lib/smc_rs}
SMC_TOOLS=${SMC_TOOLS:-$SMC_CACHE/tools}
KERNEL_SERIES=6.12
RUSTC_VERSION=1.96
BINDGEN_VERSION=0.73.2
VNG_VERSION=1.42
CARGO_FUZZ_VERSION=0.13.2

log() { printf '[smc_rs %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "error: $*"; exit 1; }

# PATH for anything that builds kernel code: Debian rustc/rustdoc and our bindgen first.
kernel_path() { printf "%s:%s:%s" "$SMC_TOOLS/kbin" "$SMC_TOOLS/venv/bin" "$PATH"; }

check_toolchain() {
	[ -f "/usr/src/linux-source-$KERNEL_SERIES.tar.xz" ] ||
		die "linux-source-$KERNEL_SERIES is missing (run scripts/setup-host.sh)"
	/usr/bin/rustc --version | grep -q "rustc $RUSTC_VERSION" ||
		die "/usr/bin/rustc is not $RUSTC_VERSION (Debian rustc-web)"
	[ -d /usr/lib/rustlib/src/rust/library ] ||
		die "Rust std source missing (Debian rust-web-src)"
	"$SMC_TOOLS/kbin/bindgen" --version | grep -q "bindgen $BINDGEN_VERSION" ||
		die "bindgen $BINDGEN_VERSION missing"
	[ -x "$SMC_TOOLS/venv/bin/vng" ] || die "virtme-ng missing"
	command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86 missing"
}
