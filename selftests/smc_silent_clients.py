#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Many clients that offer SMC and then say nothing: the listener must not
park a kernel thread per handshake while it waits for their proposals.

  smc_silent_clients.py server PORT [MAX_NEW_WORKERS]
      SMC listener on PORT; once the first client came, counts kernel
      workers (kworker threads) for 5 s (less than the 6 s a handshake
      waits for its proposal), accepting and closing whatever the listener
      hands over. Passes when at most MAX_NEW_WORKERS (16) workers more
      than before the clients existed at any time.
  smc_silent_clients.py client ADDR PORT [COUNT]
      COUNT (200) TCP connections to ADDR:PORT (whose SYNs carry the SMC
      option when the sock_ops program is attached), silent for 10 s, then
      closed.
"""
import os
import socket
import sys
import threading
import time

IPPROTO_SMC = 256


def kworkers():
    n = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                if f.read().startswith("kworker"):
                    n += 1
        except OSError:
            pass
    return n


def server(port, max_new):
    # An SMC listener (AF_INET/IPPROTO_SMC: Python binds it like TCP).
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1024)
    ls.settimeout(1.0)
    base = kworkers()
    print("# kernel workers before the clients: %d" % base)
    accepted = []
    first = threading.Event()
    stop = threading.Event()

    def acceptor():
        while not stop.is_set():
            try:
                c, _ = ls.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            accepted.append(1)
            c.close()

    t = threading.Thread(target=acceptor)
    t.start()
    # The clients connect in one burst; the handshakes are pending as soon
    # as TCP has them, before accept() hands any over. TCP's own queue
    # says when they are there: ss counts the listener's connections.
    deadline = time.time() + 120
    while time.time() < deadline:
        if os.popen("ss -Htn state established '( sport = :%d )' | wc -l" % port).read().strip() not in ("", "0"):
            first.set()
            break
        time.sleep(0.2)
    if not first.is_set():
        stop.set()
        t.join()
        print("# no client came")
        return 1
    # Within the 6 s that a handshake waits for its proposal: after that,
    # each handshake runs once (and briefly) to fall back.
    peak = base
    end = time.time() + 5
    while time.time() < end:
        peak = max(peak, kworkers())
        time.sleep(0.25)
    # The fallbacks, then the clients' closes, are handed over meanwhile.
    time.sleep(10)
    stop.set()
    t.join()
    ls.close()
    print("# kernel workers: %d before, at most %d with the silent clients; %d connections handed over"
          % (base, peak, len(accepted)))
    return 0 if peak - base <= max_new else 1


def client(addr, port, count):
    socks = []
    deadline = time.time() + 120
    while not socks:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.connect((addr, port))
            socks.append(s)
        except OSError:
            s.close()
            if time.time() > deadline:
                print("# the listener never came")
                return 1
            time.sleep(0.5)
    for _ in range(count - 1):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.connect((addr, port))
        socks.append(s)
    print("# %d silent connections open" % len(socks))
    time.sleep(10)
    for s in socks:
        s.close()
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "server":
        return server(int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 16)
    if len(sys.argv) >= 4 and sys.argv[1] == "client":
        return client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 200)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
