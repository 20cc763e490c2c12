#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Carrier control for a VM pair (vm.sh pair): a guest asks for its NIC's
# link to go down or up at the emulator's end by writing a request file into
# the shared output folder; this relays it to that VM's QEMU monitor as
# set_link and answers with a file of the same name ending in .done.
#
#   link-ctl.py OUT
#
# Request: OUT/linkctl-vmN-SEQ.req holding "l0 off", "l1 on", ... (the
# netdev ids vm.sh gives eth0 and eth1). Answer: OUT/linkctl-vmN-SEQ.done
# holding what the monitor printed. Runs until OUT/linkctl.stop appears.
#
# Why: a NIC taken down this way loses its carrier first, as with a pulled
# cable (the guest sees a port error), and the down VM's QEMU keeps reading
# its stream netdev and drops what arrives instead of holding it.
import glob
import os
import socket
import sys
import time


def monitor(path, command):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        out = b""
        while not out.endswith(b"(qemu) "):
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
        s.sendall(command.encode() + b"\n")
        out = b""
        while b"(qemu) " not in out:
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
        return out.decode(errors="replace").replace("\r", "")


def main():
    out = sys.argv[1]
    stop = os.path.join(out, "linkctl.stop")
    while not os.path.exists(stop):
        for req in sorted(glob.glob(os.path.join(out, "linkctl-vm*-*.req"))):
            vm = os.path.basename(req).split("-")[1]
            with open(req) as f:
                words = f.read().split()
            if len(words) == 2 and words[0] in ("l0", "l1") and words[1] in ("on", "off"):
                try:
                    reply = monitor(os.path.join(out, "mon-%s.sock" % vm),
                                    "set_link %s %s" % (words[0], words[1]))
                except OSError as e:
                    reply = "error: %s\n" % e
            else:
                reply = "error: bad request %r\n" % words
            done = req[: -len(".req")] + ".done"
            with open(done + ".tmp", "w") as f:
                f.write(reply)
            os.rename(done + ".tmp", done)
            os.unlink(req)
        time.sleep(0.05)


if __name__ == "__main__":
    main()
