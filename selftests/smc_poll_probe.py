#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# poll() must not wait for the socket lock: one thread runs a blocking SMC
# connect() that holds its socket's lock through the CLC exchange (the
# server, smc_echo -x slowdecline, declines SMC after 1.5 s), while the main
# thread polls the same socket with a zero timeout every 50 ms. Each poll
# must return at once, as upstream's smc_poll and TCP's do; a poll that took
# the lock would wait for the whole exchange. Then an echo through
# smc_echo's protocol (8-byte length, payload) over the fallback.
#
#   smc_poll_probe.py ADDR PORT
import errno
import os
import select
import socket
import sys
import threading
import time

from smc_echo_check import echo_intact

IPPROTO_SMC = 256
LONGEST_POLL_S = 0.3


def main():
    addr, port = sys.argv[1], int(sys.argv[2])
    for _ in range(20):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SMC)
        outcome = {}

        def connect():
            t0 = time.monotonic()
            outcome["err"] = s.connect_ex((addr, port))
            outcome["took"] = time.monotonic() - t0

        t = threading.Thread(target=connect)
        t.start()
        time.sleep(0.3)
        polls, longest = 0, 0.0
        while t.is_alive():
            p = select.poll()
            p.register(s, select.POLLIN | select.POLLOUT)
            t0 = time.monotonic()
            p.poll(0)
            longest = max(longest, time.monotonic() - t0)
            polls += 1
            time.sleep(0.05)
        t.join()
        if outcome["err"] == 0:
            break
        s.close()
        if outcome["err"] != errno.ECONNREFUSED:
            print(f"connect: {os.strerror(outcome['err'])}")
            return 1
        time.sleep(1)
    else:
        print("no server")
        return 1
    print(f"connect took {outcome['took']:.2f} s; {polls} polls meanwhile, "
          f"the longest {longest * 1000:.0f} ms")
    # The exchange must have been long enough to catch a poll that waits.
    if outcome["took"] < 1.0 or polls < 3 or longest > LONGEST_POLL_S:
        return 1
    return echo_intact(s)


if __name__ == "__main__":
    sys.exit(main())
