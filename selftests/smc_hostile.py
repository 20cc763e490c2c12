#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One SMC connection (AF_INET, IPPROTO_SMC) for the hostile-input test,
printing what the application saw as one line "result=WHAT bytes=N".

    smc_hostile.py server PORT CONNS
        accepts CONNS connections one after the other and echoes each until
        the peer is done writing; per connection: result=eof, or
        result=ERRNO (the first failing call's errno name, e.g. ECONNABORTED)

    smc_hostile.py client ADDR PORT SIZE [KNOB]
        connects, then (KNOB given, not 0) writes KNOB to this side's fault
        injection knob, sends SIZE random bytes, finishes writing and reads
        the echo (a refused connection is tried again for a while);
        result=ok (echo byte for byte), result=mismatch,
        result=short (the stream ended early) or result=ERRNO

Every call gives up after 60 s (result=ETIMEDOUT)."""
import errno
import os
import socket
import sys
import threading
import time

IPPROTO_SMC = 256
KNOB = "/sys/kernel/debug/smc_rs/inject"
TIMEOUT = 60


def name_of(e):
    if isinstance(e, socket.timeout):
        return "ETIMEDOUT"
    return errno.errorcode.get(e.errno, str(e.errno)) if e.errno else type(e).__name__


def report(result, n):
    print(f"result={result} bytes={n}", flush=True)


def serve_one(conn):
    n = 0
    conn.settimeout(TIMEOUT)
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                report("eof", n)
                return
            n += len(data)
            conn.sendall(data)
    except OSError as e:
        report(name_of(e), n)
    finally:
        conn.close()


def server(port, conns):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(8)
    ls.settimeout(3 * TIMEOUT)
    for _ in range(conns):
        try:
            conn, _ = ls.accept()
        except OSError as e:
            report(name_of(e), 0)
            return
        serve_one(conn)
    ls.close()


def client(addr, port, size, knob):
    payload = os.urandom(size)
    # The server may not listen yet: refused connections are tried again.
    for _ in range(TIMEOUT * 10):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC)
        s.settimeout(TIMEOUT)
        try:
            s.connect((addr, port))
            break
        except ConnectionRefusedError:
            s.close()
            time.sleep(0.1)
        except OSError as e:
            report("connect-" + name_of(e), 0)
            return
    else:
        report("connect-ECONNREFUSED", 0)
        return
    if knob:
        with open(KNOB, "w") as f:
            f.write(f"{knob}\n")
    send_error = []

    def send_all():
        try:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
        except OSError as e:
            send_error.append(e)

    sender = threading.Thread(target=send_all)
    sender.start()
    got = bytearray()
    try:
        while True:
            data = s.recv(65536)
            if not data:
                break
            got += data
    except OSError as e:
        sender.join()
        s.close()
        report(name_of(e), len(got))
        return
    sender.join()
    s.close()
    if send_error:
        report(name_of(send_error[0]), len(got))
    elif len(got) < size:
        report("short", len(got))
    else:
        report("ok" if bytes(got) == payload else "mismatch", len(got))


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "server":
        server(int(sys.argv[2]), int(sys.argv[3]))
    elif len(sys.argv) >= 5 and sys.argv[1] == "client":
        knob = int(sys.argv[5]) if len(sys.argv) > 5 else 0
        client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), knob)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
