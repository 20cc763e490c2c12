#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything the build and the VM test bed need on a bare Debian 12
# machine. Idempotent: a second run only checks.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

apt_pkgs=(
	linux-source-6.12
	rustc-web rust-web-src rust-web-clippy libclang-dev clang llvm lld
	flex bison bc libelf-dev libssl-dev cpio kmod xz-utils dwarves
	qemu-system-x86 busybox-static
	iproute2 rdma-core ibverbs-utils perftest linux-perf
	libbpf-dev bpftool
	make pkg-config zlib1g-dev
	python3-venv g++
	python3-docutils man-db dkms
	gnuplot-nox
	redis-server redis-tools qperf sockperf
	tshark
)

missing=()
for p in "${apt_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing Debian packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# wireshark-common (pulled in by tshark) asks whether non-root users may
	# capture; the VM tests capture as root, so: no.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# bindgen-cli from crates.io, pinned; lives in the tool directory, not on PATH.
mkdir -p "$SMC_TOOLS"
if ! "$SMC_TOOLS/bin/bindgen" --version 2>/dev/null | grep -q "bindgen $BINDGEN_VERSION"; then
	log "building bindgen-cli $BINDGEN_VERSION (about 2 minutes)"
	cargo install --quiet --locked --root "$SMC_TOOLS" bindgen-cli --version "$BINDGEN_VERSION"
fi

# cargo-fuzz from crates.io, pinned (scripts/fuzz.sh; libFuzzer needs g++).
if ! cargo fuzz --version 2>/dev/null | grep -q "cargo-fuzz $CARGO_FUZZ_VERSION"; then
	log "building cargo-fuzz $CARGO_FUZZ_VERSION"
	cargo install --quiet --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION"
fi

# virtme-ng from PyPI, pinned, in a venv.
if ! "$SMC_TOOLS/venv/bin/vng" --version 2>/dev/null | grep -q "$VNG_VERSION"; then
	log "installing virtme-ng $VNG_VERSION"
	python3 -m venv "$SMC_TOOLS/venv"
	"$SMC_TOOLS/venv/bin/pip" install -q "virtme-ng==$VNG_VERSION"
fi

# The kernel's Rust must be Debian's compiler (it has the matching std source);
# rustup's rustc comes first on PATH and must not be used for kernel builds.
mkdir -p "$SMC_TOOLS/kbin"
ln -sf /usr/bin/rustc "$SMC_TOOLS/kbin/rustc"
ln -sf /usr/bin/rustdoc "$SMC_TOOLS/kbin/rustdoc"
ln -sf /usr/bin/clippy-driver "$SMC_TOOLS/kbin/clippy-driver"
ln -sf "$SMC_TOOLS/bin/bindgen" "$SMC_TOOLS/kbin/bindgen"

# virtme-ng links the kernel tree's modules under /lib/modules in the guest,
# which needs the directory to exist on the host.
mkdir -p /lib/modules

check_toolchain
log "host ready"
