#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summary of fallback-vm.sh's results: per contender the median of its
connections per second, and the median over rounds of its ratio to TCP in
the same round (paired: a round's contenders ran back to back, so the
host's slow and fast phases cancel out of the ratio).

  fallback_summary.py RESULTS_FILE
"""
import statistics
import sys


def parse(path):
    runs = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("RESULT "):
                continue
            kv = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
            if kv.get("status") != "ok":
                continue
            runs.setdefault(kv["contender"], {})[int(kv["rep"])] = float(kv["value"])
    return runs


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    runs = parse(sys.argv[1])
    tcp = runs.get("tcp", {})
    print("%-12s %8s %6s %s" % ("contender", "conn/s", "/TCP", "per-round ratios to TCP"))
    for name, by_round in runs.items():
        ratios = [v / tcp[r] for r, v in sorted(by_round.items()) if tcp.get(r)]
        print("%-12s %8.1f %6s %s" % (
            name, statistics.median(by_round.values()),
            "%.2f" % statistics.median(ratios) if ratios else "-",
            " ".join("%.2f" % x for x in ratios)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
