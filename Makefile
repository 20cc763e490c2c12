# SPDX-License-Identifier: GPL-2.0
#
# smc_rs developer targets. The module itself is described in Kbuild; this
# file drives the cached kernel, the module build, the VM bed and the tests.
# `make help` lists the targets.

SHELL := /bin/bash
TOP := $(CURDIR)
SCRIPTS := $(TOP)/scripts

# The kernel tree smc_rs builds against: the running kernel's when it has
# a build tree with CONFIG_RUST=y, else the test bed's (built once,
# cached; the VMs boot it). `make kernel-check` says whether KDIR can take
# smc_rs, and what is missing when it cannot.
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
KDIR ?= $(shell if grep -qs '^CONFIG_RUST=y' $(RUNNING_KDIR)/.config; then echo $(RUNNING_KDIR); else $(SCRIPTS)/build-kernel.sh; fi)
KPATH := $(shell source $(SCRIPTS)/lib.sh && kernel_path)
# A clang-built tree (the KASAN flavour, SMC_KERNEL_FLAVOUR=kasan) takes
# modules built by clang too.
KLLVM = $(if $(shell grep -s '^CONFIG_CC_IS_CLANG=y' $(KDIR)/.config),LLVM=1)

PREFIX ?= /usr/local

.PHONY: kernel-check install uninstall deb all modules clippy kdir kernel setup clean help vm vm-pair check check-long check-kasan demo walkthrough bench host-test fuzz fuzz-long selftests-build selftests tools man

all: modules

setup:
	@$(SCRIPTS)/setup-host.sh

kernel: setup
	@$(SCRIPTS)/build-kernel.sh >/dev/null

kdir:
	@echo $(KDIR)

# Fails when KDIR cannot take smc_rs; says first why the running kernel is
# not the one built for, when it is not.
kernel-check:
	@[ "$(KDIR)" = "$(RUNNING_KDIR)" ] || $(SCRIPTS)/kernel-check.sh $(RUNNING_KDIR) >/dev/null || \
		echo "so smc_rs is built for $(KDIR), not for the running kernel"
	@$(SCRIPTS)/kernel-check.sh $(KDIR)

modules:
	@PATH="$(KPATH)" $(MAKE) -C $(KDIR) M=$(TOP) $(KLLVM) modules

# The module built with clippy (the kernel's CLIPPY=1: its lint set, and
# every warning is an error with CONFIG_WERROR); the next `make` rebuilds
# with rustc.
clippy:
	@PATH="$(KPATH)" $(MAKE) -C $(KDIR) M=$(TOP) $(KLLVM) CLIPPY=1 modules

# Userspace test programs (run inside the VMs from the shared host root).
selftests-build:
	@$(MAKE) -C selftests --no-print-directory

host-test:
	@cd wire && cargo test --quiet

# The operator tools, all for every user as upstream installs them.
TOOLS := smcss smcr smcd smc_pnet smc_run smc_chk smc_dbg
# The release of the kernel KDIR builds for.
KRELEASE = $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)

# Installs the module into DESTDIR/lib/modules/<release of the kernel it
# was built for>/updates (depmod included) with the modprobe.d file that
# makes the kernel load smc_rs, not smc.ko, for AF_SMC and its netlink
# families; the tools into DESTDIR$(PREFIX)/bin and smc_run's library as
# DESTDIR$(PREFIX)/lib/libsmc-preload.so (smc_run looks in ../lib from
# where it is), the man pages into DESTDIR$(PREFIX)/share/man and the bash
# completion into DESTDIR$(PREFIX)/share/bash-completion/completions.
# `make uninstall` (same DESTDIR and PREFIX) removes all of it.
install: kernel-check modules tools man
	@PATH="$(KPATH)" $(MAKE) -C $(KDIR) M=$(TOP) $(KLLVM) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=updates modules_install
	@install -d $(DESTDIR)/etc/modprobe.d
	@install -m 0644 modprobe/smc_rs.conf $(DESTDIR)/etc/modprobe.d/
	@install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib
	@install -m 0755 $(addprefix tools/target/release/,$(TOOLS)) $(DESTDIR)$(PREFIX)/bin/
	@install -m 0755 tools/target/release/libsmc_preload.so $(DESTDIR)$(PREFIX)/lib/libsmc-preload.so
	@install -d $(DESTDIR)$(PREFIX)/share/man/man7 $(DESTDIR)$(PREFIX)/share/man/man8
	@install -m 0644 $(MAN_OUT)/*.7 $(DESTDIR)$(PREFIX)/share/man/man7/
	@install -m 0644 $(MAN_OUT)/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	@install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	@install -m 0644 $(addprefix tools/completion/,$(TOOLS)) \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/

uninstall:
	@rm -f $(DESTDIR)/lib/modules/$(KRELEASE)/updates/smc_rs.ko $(DESTDIR)/etc/modprobe.d/smc_rs.conf
	@if [ -d $(DESTDIR)/lib/modules/$(KRELEASE) ]; then depmod -b $(if $(DESTDIR),$(DESTDIR),/) $(KRELEASE); fi
	@rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(TOOLS)) $(DESTDIR)$(PREFIX)/lib/libsmc-preload.so
	@rm -f $(addprefix $(DESTDIR)$(PREFIX)/share/man/man8/,$(notdir $(basename $(wildcard Documentation/man/*.8.rst))))
	@rm -f $(addprefix $(DESTDIR)$(PREFIX)/share/man/man7/,$(notdir $(basename $(wildcard Documentation/man/*.7.rst))))
	@rm -f $(addprefix $(DESTDIR)$(PREFIX)/share/bash-completion/completions/,$(TOOLS))

# Debian packages: smc-rs-tools (the tools, man pages, completion) and
# smc-rs-dkms (the module's source for DKMS, the modprobe.d file), in deb/.
deb: kernel-check
	@$(SCRIPTS)/make-deb.sh $(TOP)/deb

# The man pages (reST in Documentation/man) as roff, in $(MAN_OUT).
MAN_OUT := $(TOP)/tools/target/man
man:
	@mkdir -p $(MAN_OUT)
	@for f in Documentation/man/*.rst; do \
		rst2man --strict "$$f" "$(MAN_OUT)/$$(basename "$$f" .rst)" || exit 1; \
	done

# Userspace operator tools (smcss, smcr, smcd, smc_run and its preload
# library), built with the rustup toolchain on PATH: tools/target/release/.
tools:
	@cargo build --release --locked --manifest-path tools/Cargo.toml

# Coverage-guided fuzzing of the wire parsers: a short pass (also part of
# `make check`), or the long one whose results go to wire/fuzz/RESULTS.md.
fuzz:
	@$(SCRIPTS)/fuzz.sh short

fuzz-long:
	@$(SCRIPTS)/fuzz.sh long

# Run CMD in one VM with smc_rs (MOD=smc) or upstream smc.ko (MOD=upstream).
#   make vm CMD='ip a'  MOD=smc_rs
vm: modules selftests-build tools
	@$(SCRIPTS)/vm.sh single "$(MOD)" "$(CMD)"

# Run SERVER in VM 1 and CLIENT in VM 2, joined by a virtual link with rxe:
#   make vm-pair SERVER='...' CLIENT='...' MOD1=smc_rs MOD2=upstream
vm-pair: modules selftests-build tools
	@$(SCRIPTS)/vm.sh pair "$(MOD1)" "$(SERVER)" "$(MOD2)" "$(CLIENT)"

# The test suite: host-side unit tests plus the kselftests in the VMs.
check: setup
	@$(SCRIPTS)/run-tests.sh

# The same tests and assertions with soak counts: 20000 short and 1000
# concurrent SMC-R connections, 10000 short ones in one VM, 20 s of fuzzing
# per target (Documentation/testing.rst lists every count of both).
check-long: setup
	@SMC_CHECK_LONG=1 FUZZ_SHORT_SECS=20 $(SCRIPTS)/run-tests.sh

# The fault scripts (RoCE blocked with the device removed in a handshake,
# scarce send slots with kill -9, abortive-close churn, hostile link
# input, CLC faults) on the KASAN flavour of the test kernel: clang-built,
# cached beside the default tree (a cold build took 28 minutes on 2 cores;
# the guests boot in about 10 minutes and the run takes over an hour).
check-kasan: setup
	@SMC_KERNEL_FLAVOUR=kasan SMC_TEST_SET=faults $(SCRIPTS)/run-tests.sh

# The main job: build, boot, and show an AF_SMC client and server talking.
demo: setup
	@$(SCRIPTS)/demo.sh

# The operators' monitoring walk-through (smcr device/linkgroup/stats, smcss
# -l/-R/-a, ...) on the server and client of a VM pair, once with smc_rs on
# both and once with upstream smc.ko on both: one text file with both
# outputs per command in walkthrough-results/<date>/walkthrough.txt.
walkthrough: setup
	@KDIR="$(KDIR)" $(SCRIPTS)/walkthrough.sh

# Benchmark (not a test): TCP, upstream smc.ko and smc_rs in VM pairs and
# over loopback in one VM, same workloads, on the release flavour of the
# test kernel (built once, cached); report, chart and JSON in
# bench-results/<date>/. Knobs are
# BENCH_* variables (Documentation/benchmarks.rst), e.g. make bench BENCH_SECS=2.
bench: setup
	@$(SCRIPTS)/bench.sh

clean:
	@kdir=$$($(SCRIPTS)/build-kernel.sh --if-built); \
	if [ -n "$$kdir" ]; then PATH="$(KPATH)" $(MAKE) -C $$kdir M=$(TOP) clean; fi
	@$(MAKE) -C selftests --no-print-directory clean
	@rm -rf wire/target

help:
	@echo 'smc_rs targets:'
	@echo '  make / make modules  build smc_rs.ko against the cached kernel'
	@echo '  make setup           install the toolchain and VM tools (Debian packages, bindgen, virtme-ng)'
	@echo '  make kernel          build the cached Rust-enabled debug kernel if needed'
	@echo '  make clippy          lint the module with clippy (warnings are errors)'
	@echo '  make -s kdir         print the path of the built kernel tree'
	@echo '  make check           run all tests: cargo test + kselftests in the VMs'
	@echo '  make check-long      the same tests at soak scale (more connections, longer fuzzing)'
	@echo '  make check-kasan     the fault tests on the KASAN kernel (clang-built, cached beside the default one)'
	@echo '  make install        module, modprobe.d file, tools, man pages, bash completion (DESTDIR=, PREFIX=/usr/local)'
	@echo '  make uninstall      removes what make install installed (same DESTDIR=, PREFIX=)'
	@echo '  make deb            Debian packages smc-rs-tools and smc-rs-dkms in deb/'
	@echo '  make man             the man pages (Documentation/man) as roff in tools/target/man'
	@echo '  make tools           build the operator tools (tools/target/release/smcss, smcr, smcd, smc_run, libsmc_preload.so)'
	@echo '  make fuzz            short fuzzing pass over the wire parsers (fuzz-long: 10^7 runs each)'
	@echo '  make demo            boot two VMs and show AF_SMC client and server talking'
	@echo '  make walkthrough     the monitoring walk-through (smcr, smcss) on two VMs, smc_rs and upstream smc.ko side by side'
	@echo '  make bench           benchmark TCP, upstream smc.ko, smc_rs in VM pairs (BENCH_*=...; report, chart, JSON)'
	@echo '  make vm CMD=...      run CMD in one VM   (MOD=smc_rs|upstream|none, default smc_rs)'
	@echo '  make vm-pair SERVER=... CLIENT=...  run a command in each of two linked VMs'
	@echo '                       (MOD1/MOD2=smc_rs|upstream|none; VM1 is 10.10.0.1, VM2 10.10.0.2)'
	@echo '  make clean           remove build products'
