#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sends the SMC_PNETID family malformed requests (attributes of wrong
types and lengths, strings without their NUL, unknown commands and
attribute numbers, truncated headers) and prints each step's errno, one
line per step. Run with smc_rs and with upstream smc.ko: the same output,
and no splat in the kernel log."""
import socket
import struct
import sys

GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 16, 3, 1, 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
GET, ADD, DEL, FLUSH = 1, 2, 3, 4
NAME, ETHNAME, IBNAME, IBPORT = 1, 2, 3, 4


def attr(kind, value):
    a = struct.pack("=HH", 4 + len(value), kind) + value
    return a + bytes(-len(a) % 4)


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
        self.s.settimeout(5)
        self.seq = 0
        self.family = GENL_ID_CTRL
        for payload in self.ask(CTRL_CMD_GETFAMILY, NLM_F_ACK,
                                attr(CTRL_ATTR_FAMILY_NAME, b"SMC_PNETID\0"))[1]:
            off = 4
            while off + 4 <= len(payload):
                ln, t = struct.unpack_from("=HH", payload, off)
                if t == CTRL_ATTR_FAMILY_ID:
                    self.family = struct.unpack_from("=H", payload, off + 4)[0]
                off += (ln + 3) & ~3
        if self.family == GENL_ID_CTRL:
            sys.exit("no SMC_PNETID family")

    def ask(self, cmd, flags, body=b"", raw=None):
        self.seq += 1
        payload = raw if raw is not None else struct.pack("=BBH", cmd, 1, 0) + body
        msg = struct.pack("=IHHII", 16 + len(payload), self.family,
                          NLM_F_REQUEST | flags, self.seq, 0) + payload
        self.s.send(msg)
        out, code = [], None
        while code is None:
            data = self.s.recv(65536)
            off = 0
            while off + 16 <= len(data):
                ln, kind, _, seq, _ = struct.unpack_from("=IHHII", data, off)
                if ln < 16:
                    break
                if seq == self.seq:
                    if kind == NLMSG_ERROR:
                        code = -struct.unpack_from("=i", data, off + 16)[0]
                    elif kind == NLMSG_DONE:
                        code = code if flags & NLM_F_ACK and not flags & NLM_F_DUMP else 0
                    else:
                        out.append(data[off + 16:off + ln])
                off += (ln + 3) & ~3
        return code, out


def main():
    g = Genl()
    steps = [
        ("flush", FLUSH, b""),
        ("add no name", ADD, attr(ETHNAME, b"eth0\0")),
        ("add name without NUL", ADD, attr(NAME, b"ABC") + attr(ETHNAME, b"eth0\0")),
        ("add name 17 chars", ADD, attr(NAME, b"A" * 17 + b"\0") + attr(ETHNAME, b"eth0\0")),
        ("add empty name", ADD, attr(NAME, b"\0") + attr(ETHNAME, b"eth0\0")),
        ("add blank name", ADD, attr(NAME, b"   \0") + attr(ETHNAME, b"eth0\0")),
        ("add interior blank", ADD, attr(NAME, b"A B\0") + attr(ETHNAME, b"eth0\0")),
        ("add ethname 16 chars", ADD, attr(NAME, b"X\0") + attr(ETHNAME, b"e" * 16 + b"\0")),
        ("add ethname without NUL", ADD, attr(NAME, b"X\0") + attr(ETHNAME, b"eth0")),
        ("add ibname 64 chars", ADD, attr(NAME, b"X\0") + attr(IBNAME, b"d" * 64 + b"\0")),
        ("add port empty", ADD, attr(NAME, b"X\0") + attr(IBNAME, b"d\0") + attr(IBPORT, b"")),
        ("add port 0", ADD, attr(NAME, b"X\0") + attr(IBNAME, b"d\0") + attr(IBPORT, b"\0")),
        ("add port 3", ADD, attr(NAME, b"X\0") + attr(IBNAME, b"d\0") + attr(IBPORT, b"\3")),
        ("add unknown attribute", ADD, attr(NAME, b"Y\0") + attr(ETHNAME, b"unk0\0") + attr(9, b"zz")),
        ("add nothing to add", ADD, attr(NAME, b"Z\0")),
        ("add lower spaced", ADD, attr(NAME, b"  low1 \0") + attr(ETHNAME, b"low0\0")),
        ("get no name", GET, b""),
        ("del no name", DEL, b""),
        ("del lower", DEL, attr(NAME, b"low1\0")),
        ("unknown command", 9, b""),
    ]
    for label, cmd, body in steps:
        code, _ = g.ask(cmd, NLM_F_ACK, body)
        print(f"{label}: {code}")
    code, msgs = g.ask(GET, NLM_F_DUMP)
    print(f"dump: {code} entries {len(msgs)}")
    for label, raw in [("short genl header", b"\1"), ("no genl header", b"")]:
        try:
            code, _ = g.ask(ADD, NLM_F_ACK, raw=raw)
        except socket.timeout:
            code = "timeout"
        print(f"{label}: {code}")
    print(f"flush: {g.ask(FLUSH, NLM_F_ACK)[0]}")


if __name__ == "__main__":
    main()
