#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of cpu_split.py on `perf script` text shaped as perf prints it."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_split  # noqa: E402


def sample(comm, *frames):
    """perf script -F comm,ip,sym,dso: the command right-aligned, then one
    tab-led line a frame, leaf first, then a blank line."""
    lines = ["%16s " % comm]
    for i, f in enumerate(frames):
        sym, _, dso = f.partition("@")
        lines.append("\t%16x %s (%s)" % (0xffffffff81000000 + i, sym, dso or "[kernel.kallsyms]"))
    return "\n".join(lines) + "\n\n"


IDLE = sample("swapper", "pv_native_safe_halt", "default_idle", "default_idle_call", "do_idle",
              "cpu_startup_entry")
# A softirq on top of the idle loop: rxe receiving a packet.
IRQ_ON_IDLE = sample("swapper", "rxe_rcv", "rxe_udp_encap_recv", "udp_queue_rcv_one_skb",
                     "udp_rcv", "net_rx_action", "handle_softirqs", "irq_exit_rcu",
                     "common_interrupt", "pv_native_safe_halt", "do_idle")
# IP receive below rxe: no rxe frame on the chain.
IP_RX = sample("swapper", "ip_rcv_core", "ip_rcv", "__netif_receive_skb", "virtnet_poll",
               "__napi_poll", "net_rx_action", "handle_softirqs", "irq_exit_rcu",
               "common_interrupt", "default_idle", "do_idle")
# SMC's completion handler called by rxe's completer: SMC's.
SMC_UNDER_RXE = sample("kworker/0:1", "smc_cdc_rx@[smc_rs]", "smc_rx_handler@[smc_rs]",
                       "rxe_cq_post", "rxe_completer", "do_task", "process_one_work")
# rxe running a work request SMC posted, inline: the RNIC's.
RXE_UNDER_SMC = sample("smc_echo", "crc32_le", "rxe_icrc_generate", "rxe_requester",
                       "rxe_post_send", "tx_push@[smc_rs]", "smc_sendmsg@[smc_rs]",
                       "__sys_sendto", "do_syscall_64")
TCP_TX = sample("redis-server", "tcp_sendmsg_locked", "tcp_sendmsg", "__sys_sendto",
                "do_syscall_64")
TCP_RX = sample("swapper", "tcp_v4_rcv", "ip_local_deliver", "ip_rcv", "virtnet_poll",
                "net_rx_action", "handle_softirqs", "irq_exit_rcu", "default_idle", "do_idle")
COPY = sample("smc_echo", "_copy_to_user", "smc_recvmsg@[smc]", "sock_recvmsg")
# A module modprobe loaded: perf names it by its file.
COPY_KO = sample("smc_echo", "_copy_to_user",
                 "smc_rx_recvmsg@/lib/modules/6.12.0/kernel/net/smc/smc.ko.xz", "sock_recvmsg")
# Not a module of SMC's, whatever its name holds.
NOT_SMC = sample("smc_echo", "_copy_to_user", "foo@/lib/modules/6.12.0/kernel/net/smcx.ko",
                 "bar@[smc_foo]", "sock_recvmsg")
USER = "%16s \n\t%16x main (/usr/bin/smc_bench)\n\n" % ("smc_bench", 0x401000)
PERF = sample("perf", "memcpy_orig", "perf_mmap__push")


def split(text, smc=True):
    return cpu_split.split(text.splitlines(keepends=True), smc)


class Classes(unittest.TestCase):
    def one(self, text, smc=True):
        c = split(text, smc)
        self.assertEqual(c["samples"], 1, c)
        return [k for k in ("idle", "rnic", "smc", "other") if c[k] == 1][0]

    def test_idle(self):
        self.assertEqual(self.one(IDLE), "idle")

    def test_softirq_on_idle_is_work(self):
        self.assertEqual(self.one(IRQ_ON_IDLE), "rnic")

    def test_roce_receive_below_rxe(self):
        self.assertEqual(self.one(IP_RX), "rnic")
        self.assertEqual(self.one(IP_RX, smc=False), "other")

    def test_nearest_owner(self):
        self.assertEqual(self.one(SMC_UNDER_RXE), "smc")
        self.assertEqual(self.one(RXE_UNDER_SMC), "rnic")
        self.assertEqual(self.one(COPY), "smc")
        self.assertEqual(self.one(COPY_KO), "smc")
        self.assertEqual(self.one(NOT_SMC), "other")

    def test_tcp(self):
        self.assertEqual(self.one(TCP_TX), "other")
        self.assertEqual(self.one(TCP_RX), "other")
        self.assertEqual(self.one(TCP_RX, smc=False), "other")

    def test_user_space(self):
        self.assertEqual(self.one(USER), "other")

    def test_counts(self):
        text = IDLE * 3 + RXE_UNDER_SMC * 2 + SMC_UNDER_RXE + TCP_TX + PERF * 4
        self.assertEqual(split(text), {"samples": 7, "idle": 3, "rnic": 2, "smc": 1,
                                       "other": 1, "perf": 4})
        self.assertEqual(split(text, smc=False)["rnic"], 0)


if __name__ == "__main__":
    unittest.main()
