# SPDX-License-Identifier: GPL-2.0
#
# The echo of smc_echo's protocol (8-byte length, payload) for the Python
# probes: imported by them, not run.
import os
import struct


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
