#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""1-byte writes to a reader that takes 1 byte at a time, behind a full
send path.

  smc_small_writes.py server PORT BYTES COUNTERS
  smc_small_writes.py client ADDR PORT BYTES

The client writes 128 KiB of a pattern at once (more than its send buffer
and the server's RMB hold: it blocks, its messages flagged write_blocked),
then BYTES more, one send() each. The server accepts, waits until the
client is blocked, reads BYTES bytes one recv() each, then the rest in
large reads, and checks every byte. It prints the messages (RDMA SENDs:
CDC and LLC messages) its rxe device sent while it read byte by byte
(COUNTERS: the port's hw_counters folder):
a receiver that announced its consumer cursor after every byte it read
to a blocked writer would send about one message a byte (and have the writer write a byte a
message, TCP's silly window); upstream's rule announces it once more than
a tenth of the RMB was read. Sockets are
AF_INET with IPPROTO_SMC. Exit status 0 when the bytes are right; the
packet count is the caller's to judge.
"""
import socket
import sys
import time

from smc_echo_check import accept_one, connect_retry

IPPROTO_SMC = 256
PAUSE_S = 3
BULK = 128 * 1024


def byte_at(i):
    return (i * 7 + (i >> 8)) & 0xFF


def counter(folder, name):
    with open("%s/%s" % (folder, name)) as f:
        return int(f.read())


def server(port, n, counters):
    c = accept_one(port, IPPROTO_SMC, 120)
    c.settimeout(60)
    # The writer fills its send buffer and our RMB meanwhile, then blocks.
    time.sleep(PAUSE_S)
    sent0 = counter(counters, "rdma_sends")
    for i in range(n):
        b = c.recv(1)
        if len(b) != 1:
            print("EOF after %d of %d bytes" % (i, n))
            return 1
        if b[0] != byte_at(i):
            print("byte %d is %d, want %d" % (i, b[0], byte_at(i)))
            return 1
    sent = counter(counters, "rdma_sends") - sent0
    rest = bytearray()
    while True:
        data = c.recv(65536)
        if not data:
            break
        rest += data
    want = bytes(byte_at(i) for i in range(n, n + BULK))
    if bytes(rest) != want:
        at = next((i for i in range(min(len(rest), BULK)) if rest[i] != want[i]), len(rest))
        print("%d bytes after the first %d, want %d; they differ from byte %d"
              % (len(rest), n, BULK, n + at))
        return 1
    c.close()
    print("read %d bytes one at a time (rxe sent %d messages meanwhile), then %d"
          % (n, sent, BULK))
    print("messages=%d" % sent)
    return 0


def client(addr, port, n):
    s = connect_retry(addr, port, IPPROTO_SMC)
    if s is None:
        return 1
    s.settimeout(60)
    data = bytes(byte_at(i) for i in range(n + BULK))
    s.sendall(data[:BULK])
    for i in range(BULK, n + BULK):
        if s.send(data[i:i + 1]) != 1:
            print("send %d wrote nothing" % i)
            return 1
    s.shutdown(socket.SHUT_WR)
    s.settimeout(60)
    if s.recv(1) != b"":
        print("data from the reader")
        return 1
    s.close()
    return 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "server":
        return server(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    if len(sys.argv) == 5 and sys.argv[1] == "client":
        return client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
