#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Asks the SMC generic netlink family (SMC_GEN_NETLINK) what upstream's
tools ask and prints the answers, one line per step, attributes decoded
(nests included). Run once with smc_rs and once with upstream smc.ko: the
output must be the same.

    smc_genl_probe.py          system info and handshake limitation
    smc_genl_probe.py stats    statistics and fallback statistics
    smc_genl_probe.py smcd     the family's commands and their flags, the
                               system EID (dump, enable, disable), the SMC-D
                               device and link group dumps"""
import ctypes
import os
import socket
import struct
import sys

GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 16, 3, 1, 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
GET_SYS_INFO, GET_STATS, GET_FBACK_STATS, DUMP_HS, ENABLE_HS, DISABLE_HS = 1, 7, 8, 16, 17, 18
GET_LGR_SMCD, GET_DEV_SMCD, DUMP_SEID, ENABLE_SEID, DISABLE_SEID = 4, 5, 13, 14, 15
CTRL_ATTR_OPS, CTRL_ATTR_OP_ID, CTRL_ATTR_OP_FLAGS = 6, 1, 2
AF_SMC, SOL_SMC, SMC_LIMIT_HS = 43, 286, 1


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)  # NETLINK_GENERIC
        self.seq = 0
        name = b"SMC_GEN_NETLINK\0"
        attr = struct.pack("=HH", 4 + len(name), CTRL_ATTR_FAMILY_NAME) + name
        attr += bytes(-len(attr) % 4)
        msgs = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK, attr)
        self.family = None
        self.ops = []
        for _, payload in msgs:
            for t, v in attrs(payload):
                if t == CTRL_ATTR_FAMILY_ID:
                    self.family = struct.unpack("=H", v[:2])[0]
                elif t == CTRL_ATTR_OPS:
                    for _, op in attrs(v):
                        o = dict(attrs(op))
                        self.ops.append((struct.unpack("=I", o[CTRL_ATTR_OP_ID])[0],
                                         struct.unpack("=I", o[CTRL_ATTR_OP_FLAGS])[0]))
        if self.family is None:
            sys.exit("no SMC_GEN_NETLINK family")

    def request(self, kind, cmd, flags, payload=b""):
        self.seq += 1
        hdr = struct.pack("=IHHII", 20 + len(payload), kind, NLM_F_REQUEST | flags, self.seq, 0)
        self.s.send(hdr + struct.pack("=BBH", cmd, 1, 0) + payload)
        out = []
        while True:
            data = self.s.recv(65536)
            off = 0
            while off + 16 <= len(data):
                length, t, _, seq, _ = struct.unpack_from("=IHHII", data, off)
                body = data[off + 16:off + length]
                off += (length + 3) & ~3
                if seq != self.seq:
                    continue
                if t == NLMSG_DONE:
                    return out
                if t == NLMSG_ERROR:
                    err = struct.unpack_from("=i", body)[0]
                    if err or not flags & NLM_F_DUMP:
                        return out + [("error", os.strerror(-err) if err else "ok")]
                    continue
                out.append((body[0], body[4:]))
                if not flags & (NLM_F_DUMP | NLM_F_ACK):
                    return out


def attrs(buf):
    off = 0
    while off + 4 <= len(buf):
        alen, t = struct.unpack_from("=HH", buf, off)
        if alen < 4:
            break
        yield t & 0x3fff, buf[off + 4:off + alen]
        off += (alen + 3) & ~3


def show(buf, nested=()):
    out = []
    for t, v in attrs(buf):
        if t in nested:
            out.append("%d{%s}" % (t, show(v)))
        elif len(v) == 1:
            out.append("%d=%d" % (t, v[0]))
        else:
            out.append("%d=%r" % (t, v.rstrip(b"\0")))
    return " ".join(out)


def limit_hs_of_new_socket():
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(AF_SMC, socket.SOCK_STREAM, 0)
    val, ln = ctypes.c_int(-1), ctypes.c_uint(4)
    rc = libc.getsockopt(fd, SOL_SMC, SMC_LIMIT_HS, ctypes.byref(val), ctypes.byref(ln))
    os.close(fd)
    return val.value if rc == 0 else "errno %d" % ctypes.get_errno()


def main():
    g = Genl()

    def step(name, cmd, flags, nested=()):
        msgs = g.request(g.family, cmd, flags)
        print("%s: %s" % (name, " | ".join(
            m[1] if m[0] == "error" else "cmd %d %s" % (m[0], show(m[1], nested)) for m in msgs)))

    if sys.argv[1:] == ["stats"]:
        # The whole reply, byte for byte, and the fallbacks decoded.
        for kind, payload in g.request(g.family, GET_STATS, NLM_F_DUMP):
            print("stats: cmd %s %s" % (kind, payload.hex() if kind != "error" else payload))
        step("fallbacks", GET_FBACK_STATS, NLM_F_DUMP, nested=(8,))
        return

    if sys.argv[1:] == ["smcd"]:
        # Command (flags: 1 admin, 2 do, 4 dump, 8 policy) in order of
        # registration, then the answers an SMC-D tool gets.
        print("ops: %s" % " ".join("%d:%#x" % op for op in g.ops))
        step("seid", DUMP_SEID, NLM_F_DUMP)
        step("enable seid", ENABLE_SEID, NLM_F_ACK)
        step("disable seid", DISABLE_SEID, NLM_F_ACK)
        step("seid", DUMP_SEID, NLM_F_DUMP)
        step("smcd devices", GET_DEV_SMCD, NLM_F_DUMP)
        step("smcd link groups", GET_LGR_SMCD, NLM_F_DUMP)
        return

    if sys.argv[1:2] == ["hs"]:
        # hs [enable|disable]: optionally switch, then the dump alone.
        if sys.argv[2:] == ["enable"]:
            step("enable hs limitation", ENABLE_HS, NLM_F_ACK)
        elif sys.argv[2:] == ["disable"]:
            step("disable hs limitation", DISABLE_HS, NLM_F_ACK)
        step("hs limitation", DUMP_HS, NLM_F_DUMP)
        return

    step("sys info", GET_SYS_INFO, NLM_F_DUMP, nested=(1,))
    step("hs limitation", DUMP_HS, NLM_F_DUMP)
    print("new socket SMC_LIMIT_HS: %s" % limit_hs_of_new_socket())
    step("enable hs limitation", ENABLE_HS, NLM_F_ACK)
    step("hs limitation", DUMP_HS, NLM_F_DUMP)
    print("new socket SMC_LIMIT_HS: %s" % limit_hs_of_new_socket())
    step("disable hs limitation", DISABLE_HS, NLM_F_ACK)
    step("hs limitation", DUMP_HS, NLM_F_DUMP)
    print("new socket SMC_LIMIT_HS: %s" % limit_hs_of_new_socket())


main()
