#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# SO_RCVTIMEO set while a non-blocking SMC connect runs its CLC exchange
# must hold after the connection falls back, as it holds for TCP: the
# probe connects non-blocking to a server that declines SMC after a delay
# (smc_echo -x slowdecline), sets a 1 s receive timeout at once, waits for
# the connection, then receives with nothing sent by the server: EAGAIN
# after about a second, not a receive that waits forever. Then an echo
# through smc_echo's protocol (8-byte length, payload) proves the data
# path of the fallback intact.
#
#   smc_rcvtimeo_probe.py ADDR PORT
import errno
import os
import select
import socket
import struct
import sys
import time

from smc_echo_check import echo_intact

# SMC sockets as IPPROTO_SMC of AF_INET (the same sockets as AF_SMC's),
# so that Python takes their addresses as AF_INET ones.
IPPROTO_SMC = 256


def connect(addr, port):
    """A non-blocking connect, SO_RCVTIMEO set while it runs; retried while
    the server is not there yet. Returns the socket, or None."""
    for _ in range(20):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC)
        s.setblocking(False)
        err = s.connect_ex((addr, port))
        if err in (0, errno.EINPROGRESS):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 1, 0))
            _, writable, _ = select.select([], [s], [], 30)
            if not writable:
                print("the connection did not complete in 30 s")
                return None
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if not err:
                return s
        s.close()
        if err not in (errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ETIMEDOUT):
            print(f"connect: {os.strerror(err)}")
            return None
        time.sleep(1)
    print("no server")
    return None


def main():
    s = connect(sys.argv[1], int(sys.argv[2]))
    if s is None:
        return 1
    s.setblocking(True)
    t0 = time.monotonic()
    try:
        got = s.recv(1)
        print(f"recv returned {got!r}, expected EAGAIN after the 1 s timeout")
        return 1
    except BlockingIOError:
        pass
    took = time.monotonic() - t0
    print(f"recv: EAGAIN after {took:.2f} s")
    if not 0.5 <= took <= 5:
        return 1
    return echo_intact(s)


if __name__ == "__main__":
    sys.exit(main())
