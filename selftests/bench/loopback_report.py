#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The loopback benchmark's table (selftests/bench/loopback-vm.sh): per
workload the median of each contender's repetitions, and the ratios
smc_rs/upstream and smc_rs/TCP (above 1 is better for smc_rs: latencies
and CPU times are inverted), with the goals of the SMC-D loopback work
beside them.

    loopback_report.py RESULTS [JSON]
"""
import json
import statistics
import sys

# metric: (label, higher is better, goal vs TCP, goal vs upstream)
ROWS = [
    ("bulk1", "bulk, 1 stream (Mbit/s)", True, 1.0, None),
    ("bulk4", "bulk, 4 streams (Mbit/s)", True, 1.0, None),
    ("lat_p50", "1-byte ping-pong p50 (us)", False, 1.5, 1.0),
    ("lat_p99", "1-byte ping-pong p99 (us)", False, None, None),
    ("cps1", "connections/s, 1 thread", True, None, 1.0),
    ("redis_set_c1", "Redis SET, 1 client (req/s)", True, 2.5, 1.1),
    ("redis_get_c1", "Redis GET, 1 client (req/s)", True, 2.5, 1.1),
    ("redis_set_c50", "Redis SET, 50 clients (req/s)", True, 2.5, 1.1),
    ("redis_get_c50", "Redis GET, 50 clients (req/s)", True, 2.5, 1.1),
    ("cpu_pp", "CPU per ping-pong exchange (us)", False, None, None),
    ("cpu_redis_c1", "CPU per Redis request, 1 client (us)", False, None, None),
    ("cpu_redis_c50", "CPU per Redis request, 50 clients (us)", False, None, None),
]


def parse(path):
    vals = {}
    segs = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("RESULT "):
                continue
            kv = dict(p.split("=", 1) for p in line.split()[1:] if "=" in p)
            if kv.get("status") != "ok":
                continue
            c, m = kv.get("contender"), kv.get("metric")
            try:
                v = float(kv["value"])
            except (KeyError, ValueError):
                continue
            if m == "bulk_tcp_segs":
                segs.setdefault(c, []).append(v)
                continue
            vals.setdefault((c, m), []).append(v)
    return vals, segs


def ratio(a, b, higher):
    if a is None or b is None or a == 0 or b == 0:
        return None
    return a / b if higher else b / a


def main():
    vals, segs = parse(sys.argv[1])
    med = {k: statistics.median(v) for k, v in vals.items()}
    out = {"rows": [], "tcp_segments_in_bulk": {c: max(s) for c, s in segs.items()}}
    print("Loopback (one VM, 127.0.0.1): medians; ratios > 1 favour smc_rs")
    print(f"{'workload':40} {'tcp':>10} {'upstream':>10} {'smc_rs':>10} {'rs/tcp':>7} {'goal':>5} {'rs/up':>7} {'goal':>5}")
    for m, label, higher, goal_tcp, goal_up in ROWS:
        t, u, r = (med.get((c, m)) for c in ("tcp", "upstream", "smc_rs"))
        rt, ru = ratio(r, t, higher), ratio(r, u, higher)
        fmt = lambda x: f"{x:10.1f}" if x is not None else f"{'n/a':>10}"
        fr = lambda x: f"{x:7.2f}" if x is not None else f"{'n/a':>7}"
        fg = lambda g: f"{g:5.2f}" if g is not None else f"{'':>5}"
        print(f"{label:40} {fmt(t)} {fmt(u)} {fmt(r)} {fr(rt)} {fg(goal_tcp)} {fr(ru)} {fg(goal_up)}")
        out["rows"].append({"metric": m, "label": label, "tcp": t, "upstream": u, "smc_rs": r,
                            "smc_rs_vs_tcp": rt, "smc_rs_vs_upstream": ru,
                            "goal_vs_tcp": goal_tcp, "goal_vs_upstream": goal_up})
    print("TCP segments the host sent during a repetition's bulk runs (max): " +
          ", ".join(f"{c} {int(v)}" for c, v in sorted(out["tcp_segments_in_bulk"].items())))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
