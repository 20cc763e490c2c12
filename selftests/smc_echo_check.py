# SPDX-License-Identifier: GPL-2.0
#
# What the Python probes share, imported by them, not run: the echo of
# smc_echo's protocol (8-byte length, payload), a connect retried while
# the server does not listen yet, and one accepted connection.
import os
import socket
import struct
import time


def recv_upto(s, n):
    """Reads from s until n bytes came or the peer ended the stream."""
    got = b""
    while len(got) < n:
        chunk = s.recv(n - len(got))
        if not chunk:
            break
        got += chunk
    return got


def echo_intact(s, size=65536):
    """Sends size random bytes on the connected socket s and reads them
    back; says what happened and returns 0 when they came back intact."""
    payload = os.urandom(size)
    s.sendall(struct.pack(">Q", len(payload)) + payload)
    back = recv_upto(s, len(payload))
    if back != payload:
        print(f"echo: {len(back)} of {len(payload)} bytes, or different ones")
        return 1
    print(f"echo: {size // 1024} KiB intact over the fallback")
    return 0


def connect_retry(addr, port, proto, tries=90):
    """An AF_INET stream socket of protocol proto connected to addr:port,
    tried once a second while refused (the server may not listen yet);
    None (said why) after tries refusals."""
    for _ in range(tries):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
        try:
            s.connect((addr, port))
            return s
        except ConnectionRefusedError:
            s.close()
            time.sleep(1)
    print("connect: refused for %d s" % tries)
    return None


def accept_one(port, proto, timeout):
    """The first connection to port on every address (AF_INET, protocol
    proto), waited for at most timeout seconds; the listener is closed."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    ls.settimeout(timeout)
    conn, _ = ls.accept()
    ls.close()
    return conn
