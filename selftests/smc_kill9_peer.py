#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Both ends of a process killed with SIGKILL while it holds many SMC
connections: its kernel closes them all at once, from a task with a fatal
signal pending, and every peer must see the end of its stream.

    smc_kill9_peer.py client PEER PORT N HELD_FILE [AT_ONCE]
        connects N SMC sockets (AT_ONCE of them at the same time, from as
        many threads; one by one without it), sends 1 byte on each,
        creates HELD_FILE and sleeps (until it is killed).
    smc_kill9_peer.py server PORT N KILLED_FILE SECS
        accepts N connections and reads their byte, waits (up to 300 s) for
        KILLED_FILE, then waits up to SECS seconds for every connection to
        end (EOF or ECONNRESET); prints how many ended and when, exit 0 when
        all did."""
import os
import select
import socket
import sys
import threading
import time

# SMC sockets as IPPROTO_SMC of AF_INET (the same sockets as AF_SMC's),
# so that Python takes their addresses as AF_INET ones.
IPPROTO_SMC = 256


def connect_one(peer, port, deadline):
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC)
        try:
            s.connect((peer, port))
        except (ConnectionRefusedError, OSError):
            s.close()
            if time.time() > deadline:
                raise
            time.sleep(0.2)
            continue
        s.sendall(b"x")
        return s


def client(peer, port, n, held, at_once=1):
    socks = []
    deadline = time.time() + 90
    while len(socks) < n:
        batch = [None] * min(at_once, n - len(socks))

        def one(i):
            batch[i] = connect_one(peer, port, deadline)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(batch))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if None in batch:
            return 1
        socks.extend(batch)
    open(held, "w").close()
    while True:
        time.sleep(60)


def server(port, n, killed, secs):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(n)
    ls.settimeout(120)
    socks = []
    for _ in range(n):
        c, _ = ls.accept()
        c.settimeout(60)
        if c.recv(1) != b"x":
            print("a connection did not send its byte")
            return 1
        c.setblocking(False)
        socks.append(c)
    for _ in range(3000):
        if os.path.exists(killed):
            break
        time.sleep(0.1)
    else:
        print("the client was not killed")
        return 1
    # This VM's clock, not the file's time: the other VM wrote it.
    t0 = time.time()
    open_socks = set(socks)
    last = 0.0
    while open_socks and time.time() < t0 + secs:
        ready, _, _ = select.select(list(open_socks), [], [], 0.5)
        for s in ready:
            try:
                data = s.recv(4096)
            except ConnectionResetError:
                data = b""
            except BlockingIOError:
                continue
            if not data:
                open_socks.discard(s)
                last = time.time() - t0
    ended = n - len(open_socks)
    print(f"{ended} of {n} connections ended, the last {last:.1f} s after the kill")
    return 0 if not open_socks else 1


def main():
    if sys.argv[1] == "client":
        at_once = int(sys.argv[6]) if len(sys.argv) > 6 else 1
        return client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], at_once)
    return server(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5]))


if __name__ == "__main__":
    sys.exit(main())
