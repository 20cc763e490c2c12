#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Splits a VM's CPU samples by who would do the work on real hardware.

Reads `perf script -F comm,ip,sym,dso` of a system-wide `perf record -a -g
-e cpu-clock` (one sample a millisecond of CPU time, idle included) and
prints key=value lines:

  samples  every sample but perf's own (counted as perf)
  idle     the idle loop (no interrupt or softirq on top of it)
  rnic     what an RDMA NIC does in hardware: Soft-RoCE's own code and what
           it calls (its packet path, ICRC, copies into and out of memory
           regions), and for the SMC contenders the receive path of the
           RoCE packets below rxe (NAPI, IP, UDP)
  smc      the SMC module's own code (smc_rs or upstream's smc), with what
           it calls that is not the RNIC's
  other    everything else: system calls, copies, scheduling, wake-ups,
           TCP's whole stack and the NIC driver (for TCP and the
           connections' clcsocks)

A sample belongs to the nearest owner on its call chain, leaf first: the
first frame that is rxe's (`rxe_*`, the driver is built in) makes it the
RNIC's, the first frame in the SMC module makes it SMC's (so that rxe
calling SMC's completion handler counts as SMC's work, and SMC posting a
work request that rxe executes inline counts as the RNIC's).

  cpu_split.py smc|tcp < perf-script.txt
"""

import sys

IDLE_FRAMES = {"do_idle", "cpu_startup_entry", "cpu_idle_poll", "default_idle_call"}
# A frame that means the CPU took an interrupt or ran softirqs: work, even
# on top of the idle loop.
IRQ_PREFIXES = ("asm_sysvec_", "sysvec_", "asm_common_interrupt", "common_interrupt",
                "handle_softirqs", "__do_softirq", "do_softirq", "irq_exit_rcu",
                "__irq_exit_rcu", "run_ksoftirqd")
SMC_MODULES = ("smc_rs", "smc", "smc_diag")
# The receive path of the packets rxe consumes, below rxe on the chain.
RX_FRAMES = {"net_rx_action", "__napi_poll", "virtnet_poll", "udp_rcv", "__udp4_lib_rcv",
             "udp_unicast_rcv_skb", "udp_queue_rcv_skb", "udp_queue_rcv_one_skb"}


def module_of(dso):
    """A kernel module's name from a frame's dso: perf names a module
    `[NAME]`, or by its file when it found one (`/lib/modules/.../smc.ko`,
    also compressed), as for modules that modprobe loads."""
    if dso.startswith("[") and dso.endswith("]"):
        return dso[1:-1]
    base = dso.rsplit("/", 1)[-1]
    return base.split(".ko", 1)[0] if ".ko" in base else ""


def classify(frames, smc_contender):
    """frames: (sym, dso) from the leaf to the root."""
    seen_irq = False
    for sym, dso in frames:
        if sym.startswith("rxe_") and smc_contender:
            return "rnic"
        if module_of(dso) in SMC_MODULES:
            return "smc"
        if sym.startswith(IRQ_PREFIXES):
            seen_irq = True
        if sym in IDLE_FRAMES and not seen_irq:
            return "idle"
    if smc_contender:
        names = {s for s, _ in frames}
        if names & RX_FRAMES and not any(s.startswith("tcp_") for s in names):
            return "rnic"
    return "other"


def samples(lines):
    """Yields each sample's command and frames, leaf first."""
    comm, frames = "", None
    for line in lines:
        if not line.strip():
            if frames is not None:
                yield comm, frames
            frames = None
            continue
        if not line.startswith("\t"):
            # A sample's header: its command, right-aligned.
            if frames is not None:
                yield comm, frames
            comm, frames = line.strip(), []
            continue
        if frames is None:
            comm, frames = "", []
        parts = line.split()
        # "ADDR SYM (DSO)", SYM may be "[unknown]" or hold spaces.
        if len(parts) < 2:
            continue
        dso = parts[-1] if parts[-1].startswith("(") else ""
        sym = " ".join(parts[1:-1] if dso else parts[1:])
        sym = sym.split("+0x")[0]
        frames.append((sym, dso.strip("()") if dso else ""))
    if frames is not None:
        yield comm, frames


def split(lines, smc_contender):
    counts = {"samples": 0, "idle": 0, "rnic": 0, "smc": 0, "other": 0, "perf": 0}
    for comm, frames in samples(lines):
        if comm == "perf":
            counts["perf"] += 1
            continue
        counts["samples"] += 1
        counts[classify(frames, smc_contender)] += 1
    return counts


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("smc", "tcp"):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    counts = split(sys.stdin, sys.argv[1] == "smc")
    for k, v in counts.items():
        print(f"{k}={v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
