#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Both ends of an orphaned SMC connection: the client fills the send
buffer of a connection whose server reads nothing, closes it and leaves it
to the kernel; the server reads only later.

    smc_orphan_peer.py client PEER PORT
        connects (IPPROTO_SMC), writes without blocking until the buffers
        are full, closes; prints "wrote N".
    smc_orphan_peer.py server PORT GO_FILE
        accepts one connection, waits (up to 300 s) for GO_FILE, then
        reads until end of stream or error; prints "read N, then EOF" or
        "read N, then ERRNAME"."""
import errno
import os
import socket
import sys
import time

from smc_echo_check import accept_one

IPPROTO_SMC = 256


def client(peer, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC)
    deadline = time.time() + 90
    while True:
        try:
            s.connect((peer, port))
            break
        except ConnectionRefusedError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    s.setblocking(False)
    chunk = bytes(65536)
    wrote = 0
    idle_since = time.time()
    # Full once nothing more goes for a second (the sender may still be
    # moving bytes into the peer's buffer when EAGAIN comes first).
    while time.time() - idle_since < 1.0:
        try:
            wrote += s.send(chunk)
            idle_since = time.time()
        except BlockingIOError:
            time.sleep(0.05)
    s.close()
    print(f"wrote {wrote}")
    return 0 if wrote > 0 else 1


def server(port, go_file):
    conn = accept_one(port, IPPROTO_SMC, 300)
    deadline = time.time() + 300
    while not os.path.exists(go_file) and time.time() < deadline:
        time.sleep(0.5)
    conn.settimeout(30)
    got = 0
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                print(f"read {got}, then EOF")
                return 0
            got += len(data)
    except OSError as e:
        name = errno.errorcode.get(e.errno, str(e)) if e.errno else type(e).__name__
        print(f"read {got}, then {name}")
        return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "client":
        return client(sys.argv[2], int(sys.argv[3]))
    if len(sys.argv) == 4 and sys.argv[1] == "server":
        return server(int(sys.argv[2]), sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
