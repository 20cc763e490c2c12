#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks, with an SMC-R connection to PEER open, that sock_diag sends
SMC_DIAG_CONNINFO and SMC_DIAG_LGRINFO for it only when the request asks
for them (diag_ext), as upstream's smc_diag, and that short or odd requests
(sock_diag and SMC generic netlink dumps with junk attributes) are answered
without harm.

    smc_diag_ext.py PEER"""
import socket
import struct
import sys

AF_SMC = 43
NETLINK_SOCK_DIAG, NETLINK_GENERIC = 4, 16
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
SMC_DIAG_CONNINFO, SMC_DIAG_LGRINFO = 1, 2
CONNINFO_LEN, LGRINFO_LEN = 76, 147
GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 16, 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
GET_LGR_SMCR, GET_LINK_SMCR, GET_DEV_SMCR = 2, 3, 6


def messages(sock, seq, dump=True):
    """The answer to request `seq`: (type, body) until DONE, an error, or
    (not a dump) the acknowledgement."""
    out = []
    while True:
        data = sock.recv(1 << 16)
        off = 0
        while off + 16 <= len(data):
            length, kind, _, mseq, _ = struct.unpack_from("=IHHII", data, off)
            body = data[off + 16:off + length]
            off += (length + 3) & ~3
            if mseq != seq:
                continue
            if kind == NLMSG_DONE:
                return out
            if kind == NLMSG_ERROR:
                err = struct.unpack_from("=i", body)[0]
                out.append(("error", err))
                if err or not dump:
                    return out
                continue
            out.append((kind, body))


def attrs(buf):
    a = {}
    off = 0
    while off + 4 <= len(buf):
        alen, atype = struct.unpack_from("=HH", buf, off)
        if alen < 4:
            break
        a[atype & 0x3fff] = buf[off + 4:off + alen]
        off += (alen + 3) & ~3
    return a


def diag(payload, seq):
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
    nl.send(struct.pack("=IHHII", 16 + len(payload), SOCK_DIAG_BY_FAMILY,
                        NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + payload)
    return messages(nl, seq)


def peer_socket(msgs, peer):
    """The extensions of the socket connected to PEER."""
    want = socket.inet_aton(peer)
    for kind, body in msgs:
        if kind == "error" or len(body) < 64:
            continue
        if body[24:28] == want:
            return attrs(body[64:])
    return None


def main():
    peer = sys.argv[1]
    rc = 0
    full = peer_socket(diag(struct.pack("=BBBB", AF_SMC, 0, 0, 0xff) + bytes(48), 1), peer)
    bare = peer_socket(diag(struct.pack("=BBBB", AF_SMC, 0, 0, 0) + bytes(48), 2), peer)
    conn = peer_socket(diag(struct.pack("=BBBB", AF_SMC, 0, 0, 1 << (SMC_DIAG_CONNINFO - 1))
                            + bytes(48), 3), peer)
    print("all extensions:", sorted(full) if full is not None else None)
    print("none:", sorted(bare) if bare is not None else None)
    print("conninfo only:", sorted(conn) if conn is not None else None)
    if full is None or len(full.get(SMC_DIAG_CONNINFO, b"")) != CONNINFO_LEN \
            or len(full.get(SMC_DIAG_LGRINFO, b"")) != LGRINFO_LEN:
        print("conninfo/lgrinfo missing or of the wrong size when asked for")
        rc = 1
    else:
        token = struct.unpack_from("=I", full[SMC_DIAG_CONNINFO])[0]
        ibname = full[SMC_DIAG_LGRINFO][1:65].split(b"\0")[0]
        print("token %#x, ibname %s" % (token, ibname.decode()))
        if token == 0 or ibname != b"rxe0":
            rc = 1
    if bare is None or SMC_DIAG_CONNINFO in bare or SMC_DIAG_LGRINFO in bare:
        print("extensions sent without being asked for")
        rc = 1
    if conn is None or SMC_DIAG_CONNINFO not in conn or SMC_DIAG_LGRINFO in conn:
        print("diag_ext bits not honoured one by one")
        rc = 1
    # A request of the bare sock_diag header (family, protocol): answered.
    short = diag(struct.pack("=BB", AF_SMC, 0), 4)
    print("short request: %d messages" % len(short))
    # SMC generic netlink dumps with junk attributes: answered (data or an
    # error), never harm.
    g = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    name = b"SMC_GEN_NETLINK\0"
    a = struct.pack("=HH", 4 + len(name), CTRL_ATTR_FAMILY_NAME) + name
    a += bytes(-len(a) % 4)
    g.send(struct.pack("=IHHII", 20 + len(a), GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, 10, 0)
           + struct.pack("=BBH", CTRL_CMD_GETFAMILY, 1, 0) + a)
    family = None
    for kind, body in messages(g, 10, dump=False):
        if kind != "error":
            fid = attrs(body[4:]).get(CTRL_ATTR_FAMILY_ID)
            family = struct.unpack("=H", fid[:2])[0] if fid else family
    if family is None:
        print("no SMC_GEN_NETLINK")
        return 1
    junk = struct.pack("=HH", 4, 1) + struct.pack("=HH", 12, 0x7fff) + bytes(8) + b"\x03\x00"
    for seq, cmd in ((11, GET_LGR_SMCR), (12, GET_LINK_SMCR), (13, GET_DEV_SMCR)):
        for payload in (b"", junk):
            g.send(struct.pack("=IHHII", 20 + len(payload), family, NLM_F_REQUEST | NLM_F_DUMP,
                               seq, 0) + struct.pack("=BBH", cmd, 1, 0) + payload)
            got = messages(g, seq)
            print("genl cmd %d, %d junk bytes: %s" % (
                cmd, len(payload), [k if k != "error" else "error %d" % e for k, e in
                                    ((m[0], m[1] if m[0] == "error" else 0) for m in got)]))
            if payload == b"" and not [m for m in got if m[0] != "error"]:
                print("genl cmd %d: nothing listed while a connection is held" % cmd)
                rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
