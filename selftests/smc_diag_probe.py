#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sets up AF_SMC sockets in known states and prints what sock_diag
(NETLINK_SOCK_DIAG, smc_diag's ABI) reports for them, one sorted line per
socket, leaving out what differs from run to run (inode, cookie). Run once
with smc_rs and once with upstream smc.ko + smc_diag.ko, each with its own
base port (ports are printed relative to it): the output must be the same.

    smc_diag_probe.py BASE_PORT [COMMAND...]

With a COMMAND (e.g. smcss -a), runs it while the sockets are held and
prints its output instead of the decoded dump."""
import ctypes
import os
import socket
import struct
import subprocess
import sys

AF_SMC = 43
IPPROTO_SMC = 256
NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
NLMSG_DONE, NLMSG_ERROR = 3, 2
SMC_DIAG_SHUTDOWN, SMC_DIAG_FALLBACK = 3, 5

libc = ctypes.CDLL(None, use_errno=True)


def sockaddr(family, host, port):
    if family == socket.AF_INET:
        return struct.pack("=HH4s8x", socket.AF_INET, socket.htons(port), socket.inet_aton(host))
    return struct.pack("=HHI16sI", socket.AF_INET6, socket.htons(port), 0,
                       socket.inet_pton(socket.AF_INET6, host), 0)


def smc_socket(proto=0):
    fd = libc.socket(AF_SMC, socket.SOCK_STREAM, proto)
    if fd < 0:
        sys.exit("socket(AF_SMC): %s" % os.strerror(ctypes.get_errno()))
    return fd


def call(name, fd, addr):
    buf = ctypes.create_string_buffer(addr)
    if getattr(libc, name)(fd, buf, len(addr)) < 0:
        sys.exit("%s: %s" % (name, os.strerror(ctypes.get_errno())))


def dump(base):
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
    req = struct.pack("=BBBB", AF_SMC, 0, 0, 0xff) + bytes(48)
    nl.send(struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY,
                        NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + req)
    rows = []
    while True:
        data = nl.recv(65536)
        off = 0
        while off + 16 <= len(data):
            length, kind, _, _, _ = struct.unpack_from("=IHHII", data, off)
            if kind == NLMSG_DONE:
                return sorted(rows)
            if kind == NLMSG_ERROR:
                sys.exit("sock_diag error %d" % struct.unpack_from("=i", data, off + 16)[0])
            m = data[off + 16:off + length]
            fam, state, mode, shut = struct.unpack_from("=BBBB", m, 0)
            sport, dport = (p - base if base <= p < base + 100 else p
                            for p in struct.unpack_from(">HH", m, 4))
            src, dst = m[8:24], m[24:40]
            uid = struct.unpack_from("=I", m, 52)[0]
            attrs = {}
            a = 64
            while a + 4 <= len(m):
                alen, atype = struct.unpack_from("=HH", m, a)
                attrs[atype] = m[a + 4:a + alen]
                a += (alen + 3) & ~3
            fb = struct.unpack("=II", attrs[SMC_DIAG_FALLBACK]) if SMC_DIAG_FALLBACK in attrs else None
            sd = attrs.get(SMC_DIAG_SHUTDOWN, b"-")[0] if SMC_DIAG_SHUTDOWN in attrs else "-"
            rows.append("family %d state %d mode %d shutdown %s/%s sport %d dport %d src %s dst %s uid %d fallback %s"
                        % (fam, state, mode, shut, sd, sport, dport, src.hex(), dst.hex(), uid,
                           "0x%08x/0x%08x" % fb if fb else "-"))
            off += (length + 3) & ~3


def main():
    base = int(sys.argv[1])
    held = []
    # A plain TCP server for SMC clients to fall back to.
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("127.0.0.1", base + 1))
    tcp.listen(8)
    # An unconnected AF_SMC socket and an IPPROTO_SMC one.
    held.append(smc_socket())
    held.append(socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC))
    # AF_SMC and AF_SMC6 listeners.
    lst = smc_socket()
    call("bind", lst, sockaddr(socket.AF_INET, "127.0.0.1", base))
    libc.listen(lst, 8)
    lst6 = smc_socket(1)
    call("bind", lst6, sockaddr(socket.AF_INET6, "::1", base + 10))
    libc.listen(lst6, 8)
    # AF_SMC clients of the TCP server: fallback (no SMC option from it);
    # one shut down for writing, one both ways.
    for port, how in ((base + 2, None), (base + 3, socket.SHUT_WR), (base + 4, socket.SHUT_RDWR)):
        c = smc_socket()
        call("bind", c, sockaddr(socket.AF_INET, "127.0.0.1", port))
        call("connect", c, sockaddr(socket.AF_INET, "127.0.0.1", base + 1))
        held.append(tcp.accept()[0])
        if how is not None:
            libc.shutdown(c, how)
    # A TCP client of the AF_SMC listener, accepted: fallback on the server.
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.bind(("127.0.0.1", base + 5))
    t.connect(("127.0.0.1", base))
    a = libc.accept(lst, None, None)
    if a < 0:
        sys.exit("accept: %s" % os.strerror(ctypes.get_errno()))
    held.append(t)
    if len(sys.argv) > 2:
        run = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sys.stdout.write(run.stdout)
        print("exit %d" % run.returncode)
        return
    for row in dump(base):
        print(row)


main()
