#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Holds one AF_SMC connection to an smc_echo server open while operators'
tools look at it, then completes one echo over it.

    smcr_hold.py [--tcp] PEER PORT READY_FILE GO_FILE...

Connects (AF_SMC; an IPv6 PEER, such as an IPv4-mapped ::ffff:a.b.c.d,
with SMCPROTO_SMC6; with --tcp a plain AF_INET/AF_INET6 socket), sends the
8-byte echo length, creates READY_FILE, waits (up to 300 s) until every
GO_FILE exists, sends the payload, checks the echo and exits 0."""
import ctypes
import errno
import os
import socket
import struct
import sys
import time

from smc_echo_check import recv_upto

AF_SMC = 43
SMCPROTO_SMC = 0
SMCPROTO_SMC6 = 1
PAYLOAD = bytes(range(256)) * 16

libc = ctypes.CDLL(None, use_errno=True)


def connect(peer, port, family=AF_SMC):
    """An AF_SMC (or, with FAMILY AF_INET, TCP) connection to PEER:PORT,
    retried for 90 s while the server is not listening yet."""
    if ":" in peer:
        proto = SMCPROTO_SMC6
        addr = struct.pack("=H", socket.AF_INET6) + struct.pack("!HI", port, 0) + \
            socket.inet_pton(socket.AF_INET6, peer) + bytes(4)
        if family != AF_SMC:
            family = socket.AF_INET6
    else:
        proto = SMCPROTO_SMC
        addr = struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + \
            socket.inet_aton(peer) + bytes(8)
    if family != AF_SMC:
        proto = 0
    deadline = time.time() + 90
    while True:
        s = socket.socket(family, socket.SOCK_STREAM, proto)
        if libc.connect(s.fileno(), addr, len(addr)) == 0:
            return s
        err = ctypes.get_errno()
        s.close()
        if time.time() > deadline or err not in (errno.ECONNREFUSED, errno.ETIMEDOUT,
                                                 errno.EHOSTUNREACH):
            raise OSError(err, "connect: " + os.strerror(err))
        time.sleep(0.5)


def main():
    args = sys.argv[1:]
    family = AF_SMC
    if args[:1] == ["--tcp"]:
        family, args = socket.AF_INET, args[1:]
    peer, port, ready, go = args[0], int(args[1]), args[2], args[3:]
    s = connect(peer, port, family)
    s.sendall(struct.pack("!Q", len(PAYLOAD)))
    with open(ready, "w") as f:
        f.write("held\n")
    deadline = time.time() + 300
    while not all(os.path.exists(g) for g in go):
        if time.time() > deadline:
            print("smcr_hold: nobody said go", file=sys.stderr)
            return 1
        time.sleep(0.2)
    s.sendall(PAYLOAD)
    got = recv_upto(s, len(PAYLOAD))
    s.close()
    if got != PAYLOAD:
        print("smcr_hold: echo differs (%d bytes back)" % len(got), file=sys.stderr)
        return 1
    print("smcr_hold: held and echoed %d bytes" % len(PAYLOAD))
    return 0


if __name__ == "__main__":
    sys.exit(main())
