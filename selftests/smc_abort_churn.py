#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Abortive closes, one after the other, each with bytes still on their
way: a sender whose buffers serve the next connection before its writes
completed would make the peer read zeros or another connection's bytes.

    smc_abort_churn.py client PEER PORT N THREADS
        N SMC connections in THREADS threads, one after the other in
        each; each sends 256 KiB of 32-bit words that all hold its own id
        (its local port: never 0, and the server knows it from accept())
        and closes with SO_LINGER 0 at once.
    smc_abort_churn.py server PORT N
        accepts N connections and reads each until its end (EOF or reset);
        every whole word it got must be the connection's id (the client's
        port). Prints the words read and the foreign ones; exit 0 when all
        N connections came and no word was foreign."""
import socket
import struct
import sys
import threading
import time

# SMC sockets as IPPROTO_SMC of AF_INET (the same sockets as AF_SMC's),
# so that Python takes their addresses as AF_INET ones.
IPPROTO_SMC = 256
WORDS = 65536


def connect(peer, port):
    deadline = time.time() + 90
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC)
        try:
            s.connect((peer, port))
            return s
        except (ConnectionRefusedError, OSError):
            s.close()
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def client(peer, port, n, threads):
    failed = []

    def run(count):
        for _ in range(count):
            try:
                s = connect(peer, port)
                s.sendall(struct.pack(">I", s.getsockname()[1]) * WORDS)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
            except OSError as e:
                # The abort of an earlier connection may reach this one's
                # send: only the peer's reading is judged.
                failed.append(str(e))

    # All N, also when THREADS does not divide N (the server waits for N).
    counts = [n // threads + (1 if i < n % threads else 0) for i in range(threads)]
    ts = [threading.Thread(target=run, args=(c,)) for c in counts]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(f"{sum(counts)} connections sent and aborted, {len(failed)} send errors")
    return 0


def server(port, n):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(64)
    ls.settimeout(300)
    totals = {"words": 0, "foreign": 0, "conns": 0}
    lock = threading.Lock()

    def serve(c, cid):
        buf = bytearray()
        c.settimeout(60)
        while True:
            try:
                data = c.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not data:
                break
            buf += data
        c.close()
        whole = len(buf) // 4 * 4
        words = struct.unpack(f">{whole // 4}I", bytes(buf[:whole])) if whole else ()
        foreign = sum(1 for w in words if w != cid)
        with lock:
            totals["words"] += len(words)
            totals["foreign"] += foreign
            totals["conns"] += 1

    ts = []
    for _ in range(n):
        c, addr = ls.accept()
        t = threading.Thread(target=serve, args=(c, addr[1]))
        t.start()
        ts.append(t)
    for t in ts:
        t.join()
    print(f"{totals['conns']} connections, {totals['words']} words read, {totals['foreign']} foreign")
    return 0 if totals["conns"] == n and totals["foreign"] == 0 else 1


def main():
    if sys.argv[1] == "client":
        return client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    return server(int(sys.argv[2]), int(sys.argv[3]))


if __name__ == "__main__":
    sys.exit(main())
