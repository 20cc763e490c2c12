#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Urgent data behind a full send path: every urgent byte must arrive as
urgent, at its mark, with a SIGURG, as TCP delivers it.

  smc_urgent_load.py server PORT ROUNDS [inet]
  smc_urgent_load.py client ADDR PORT ROUNDS [inet]

Each round the client sends 256 KiB of a pattern (more than the send
buffer and the peer's RMB hold, so that the data is still being pushed
from the completion handler when the urgent byte follows) and then one
byte with MSG_OOB, the round's number; it waits for the server's 1-byte
acknowledgement before the next round. The server (F_SETOWN, a SIGURG
handler, SO_OOBINLINE off) checks that a SIGURG came each round, and by
the round's number mod 3:
  0: reads through select() until SIOCATMARK, exactly the round's 256 KiB
     byte for byte, then the urgent byte with MSG_OOB;
  1: the same, but leaves the urgent byte unread: the next round's data
     must still come (TCP skips the byte);
  2: the client sends 4 KiB more after the urgent byte; the server reads
     with blocking recv() only (no poll): the 256 KiB and the 4 KiB with
     the urgent byte left out of the stream, then the byte with MSG_OOB.
An urgent byte sent without its flag shows as a byte too many in the
stream, or as a mark that never comes (the wait for it is bounded); a
stream that stops at the mark hangs (the caller's timeout ends it).
Sockets are AF_INET with IPPROTO_SMC; "inet" uses plain TCP, the
reference. Exit status 0 when every round holds.
"""
import errno
import fcntl
import os
import select
import signal
import socket
import struct
import sys
import time

from smc_echo_check import accept_one, connect_retry

IPPROTO_SMC = 256
SIOCATMARK = 0x8905
CHUNK = 256 * 1024
WAIT_S = 30


def pattern(rnd):
    word = struct.pack("<I", 0x55000000 | rnd)
    return word * (CHUNK // 4)


def tail(rnd):
    return bytes([0xA0 | (rnd & 0xF)]) * 4096


def proto():
    return 0 if sys.argv[-1] == "inet" else IPPROTO_SMC


def at_mark(s):
    buf = fcntl.ioctl(s.fileno(), SIOCATMARK, b"\0\0\0\0")
    return struct.unpack("i", buf)[0] != 0


def read_to_mark(c, rnd):
    """Reads, through select, up to the urgent mark that follows the
    round's data; the bytes, or None after a failure (printed)."""
    got = bytearray()
    deadline = time.monotonic() + WAIT_S
    while not (at_mark(c) and len(got) >= CHUNK):
        left = deadline - time.monotonic()
        if left <= 0:
            print("round %d: no mark after %d bytes" % (rnd, len(got)))
            return None
        r, _, _ = select.select([c], [], [c], min(left, 1.0))
        if at_mark(c) and len(got) >= CHUNK:
            break
        if not r:
            continue
        data = c.recv(65536)
        if not data:
            print("round %d: EOF after %d bytes" % (rnd, len(got)))
            return None
        got += data
        if len(got) > CHUNK:
            print("round %d: %d bytes before the mark, want %d" % (rnd, len(got), CHUNK))
            return None
    return got


def read_blocking(c, n, rnd):
    """Blocking reads (no poll, no timeout) of `n` bytes: across the mark,
    where the urgent byte is not part of the stream."""
    got = bytearray()
    while len(got) < n:
        data = c.recv(min(65536, n - len(got)))
        if not data:
            print("round %d: EOF after %d bytes" % (rnd, len(got)))
            return None
        got += data
    return got


def server(port, rounds):
    signals = [0]

    def on_urg(_sig, _frame):
        signals[0] += 1

    signal.signal(signal.SIGURG, on_urg)
    c = accept_one(port, proto(), 120)
    c.setblocking(True)
    fcntl.fcntl(c.fileno(), fcntl.F_SETOWN, os.getpid())
    bad = 0
    # SIGURGs before this round's urgent byte could be sent (TCP may signal
    # one urgent pointer more than once).
    base = 0
    for rnd in range(rounds):
        mode = rnd % 3
        want = pattern(rnd)
        if mode == 2:
            # Blocked in recv() at the mark when the urgent byte comes,
            # then the tail the client sent after it.
            want += tail(rnd)
            got = read_blocking(c, len(want), rnd)
        else:
            got = read_to_mark(c, rnd)
        if got is None:
            return 1
        if bytes(got) != want:
            at = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), len(got))
            print("round %d: the data differs from byte %d" % (rnd, at))
            bad += 1
        if mode == 2:
            # Read past the mark: the urgent byte is gone (TCP clears its
            # urgent data then), MSG_OOB finds none.
            try:
                oob = c.recv(1, socket.MSG_OOB)
                print("round %d: recv(MSG_OOB) past the mark gave %r, want EINVAL" % (rnd, oob))
                bad += 1
            except OSError as e:
                if e.errno != errno.EINVAL:
                    print("round %d: recv(MSG_OOB) past the mark: %s, want EINVAL" % (rnd, e))
                    bad += 1
        elif mode == 0:
            # Mode 1 leaves it unread: the stream goes on past it.
            try:
                oob = c.recv(1, socket.MSG_OOB)
            except OSError as e:
                print("round %d: recv(MSG_OOB): %s" % (rnd, e))
                return 1
            if oob != bytes([rnd & 0xFF]):
                print("round %d: urgent byte %r, want %d" % (rnd, oob, rnd & 0xFF))
                bad += 1
        for _ in range(100):
            if signals[0] > base:
                break
            time.sleep(0.05)
        if signals[0] <= base:
            print("round %d: no SIGURG (%d so far)" % (rnd, signals[0]))
            bad += 1
        base = signals[0]
        c.sendall(b"k")
    print("# %d rounds: urgent bytes at their marks, %d SIGURG, %d bad" % (rounds, signals[0], bad))
    c.close()
    return 1 if bad else 0


def client(addr, port, rounds):
    s = connect_retry(addr, port, proto())
    if s is None:
        return 1
    s.settimeout(WAIT_S)
    for rnd in range(rounds):
        s.sendall(pattern(rnd))
        s.send(bytes([rnd & 0xFF]), socket.MSG_OOB)
        if rnd % 3 == 2:
            s.sendall(tail(rnd))
        if s.recv(1) != b"k":
            print("round %d: no acknowledgement" % rnd)
            return 1
    s.close()
    return 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "server":
        return server(int(sys.argv[2]), int(sys.argv[3]))
    if len(sys.argv) >= 5 and sys.argv[1] == "client":
        return client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
