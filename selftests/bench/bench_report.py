#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of `make bench` (scripts/bench.sh), on the host.

    bench_report.py RUN_DIR

RUN_DIR holds meta.txt and raw/r<ROUND>-<CONTENDER>/, one folder per VM-pair
boot, as selftests/bench/bench-vm.sh leaves them. Every figure is computed
here from those raw files; nothing is made up for what was not measured.
Writes RUN_DIR/report.txt, RUN_DIR/results.json and, with gnuplot,
RUN_DIR/chart.png (chart.dat and chart.gp beside it).
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys

CONTENDERS = ["tcp", "upstream", "smc_rs"]
# The phases of a 1-thread connection that smc_bench times (cps1 results).
CPS_PHASES = ["connect", "reqresp", "close"]
RATIOS = [("smc_rs", "upstream"), ("smc_rs", "tcp"), ("upstream", "tcp")]
RATIO_NAMES = {("smc_rs", "upstream"): "rs/up", ("smc_rs", "tcp"): "rs/tcp",
               ("upstream", "tcp"): "up/tcp"}
# Caches of the debug kernel's own bookkeeping (kmemleak, debugobjects):
# left out of the slab figure, which should be what a production kernel pays.
DEBUG_CACHES = {"kmemleak_object", "debug_objects_cache"}
PAGE = 4096
NOTE = "emulated guests (QEMU TCG, 1 vCPU each, debug kernel), Soft-RoCE (rxe): not hardware"


def note(meta):
    """What the absolute figures are, with the kernel and its debug checkers."""
    if meta.get("kernel_flavour") == "release":
        return NOTE.replace("debug kernel", "release kernel: the debug kernel's checkers compiled out")
    if meta.get("debug_checkers") == "off":
        return NOTE.replace("debug kernel", "debug kernel booted with %s" % meta.get("boot_opts", "?"))
    return NOTE


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def keyvals(text):
    d = {}
    for line in (text or "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            d[k.strip()] = v.strip()
    return d


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    return "%.2f" % v


# ------------------------------------------------------------ raw files

def parse_results(text):
    """RESULT lines of smc_bench: a list of dicts."""
    out = []
    for line in (text or "").splitlines():
        if not line.startswith("RESULT "):
            continue
        d = {}
        for tok in line.split()[1:]:
            if "=" in tok:
                k, v = tok.split("=", 1)
                d[k] = v
        out.append(d)
    return out


def parse_meminfo_slab(text):
    """A mem-vmN-LABEL.txt snapshot: meminfo (kB), slab caches, smcss rows."""
    meminfo, slabs, smcss, section = {}, {}, [], None
    for line in (text or "").splitlines():
        if line.startswith("== "):
            section = line[3:].strip()
            continue
        if section == "meminfo":
            m = re.match(r"(\S+):\s+(\d+)", line)
            if m:
                meminfo[m.group(1)] = int(m.group(2))
        elif section == "slabinfo":
            f = line.split()
            if len(f) < 16 or f[0] in ("slabinfo", "#") or f[6] != ":":
                continue
            try:
                slabs[f[0]] = {"objs": int(f[1]), "objsize": int(f[3]),
                               "bytes": int(f[14]) * int(f[5]) * PAGE}
            except ValueError:
                continue
        elif section == "smcss":
            smcss.append(line)
    return meminfo, slabs, smcss


def smcss_rows(lines, port):
    """Rows of `smcss -a -d` for connections on the bench port: a list of
    (mode, reason, bufbytes)."""
    rows = []
    suffix = ":%d" % port
    for line in lines or []:
        f = line.split()
        if len(f) < 7 or f[0] in ("State", "LISTEN") or f[0].startswith("("):
            continue
        if not (f[3].endswith(suffix) or f[4].endswith(suffix)):
            continue
        mode, reason, buf = f[6], "", 0
        if mode == "TCP" and len(f) > 7:
            reason = f[7]
        if mode in ("SMCR", "SMCD") and len(f) > 10:
            try:
                buf = int(f[9], 16) + int(f[10], 16)
            except ValueError:
                buf = 0
        rows.append((mode, reason, buf))
    return rows


def parse_perftest(text):
    """ib_write_bw: {'bw': Mbit/s}; ib_write_lat: {'p50': us RTT, 'p99': ...}.
    perftest's WRITE latency is half the ping-pong round trip: doubled here
    to compare with the sockets' round trips."""
    lines = (text or "").splitlines()
    for i, line in enumerate(lines):
        if "#bytes" not in line:
            continue
        nums = None
        for nxt in lines[i + 1:i + 4]:
            f = nxt.split()
            if f and all(re.match(r"^[0-9.]+$", x) for x in f):
                nums = [float(x) for x in f]
                break
        if not nums:
            continue
        if "BW average" in line and len(nums) >= 4:
            avg = nums[3]
            if "Gb/sec" in line:
                return {"bw": avg * 1000.0}
            return {"bw": avg * 1048576 * 8 / 1e6}  # MiB/s
        if "t_typical" in line and len(nums) >= 8:
            return {"p50": 2 * nums[4], "p99": 2 * nums[7], "avg": 2 * nums[5]}
    return {}


def counters_delta(d, label):
    """after - before of ctr-LABEL-{before,after}-vm2.txt."""
    b = keyvals(read(os.path.join(d, "ctr-%s-before-vm2.txt" % label)))
    a = keyvals(read(os.path.join(d, "ctr-%s-after-vm2.txt" % label)))
    out = {}
    for k, v in a.items():
        x, y = num(v), num(b.get(k))
        if x is not None and y is not None:
            out[k] = x - y
    return out


# ------------------------------------------------------------ analysis

class Run:
    def __init__(self, run_dir):
        self.dir = run_dir
        self.meta = keyvals(read(os.path.join(run_dir, "meta.txt")))
        self.port = int(self.meta.get("port", "7400") or 7400)
        self.streams = self.meta.get("streams", "4")
        self.threads = self.meta.get("cps_threads", "4")
        self.idle_conns = int(self.meta.get("idle_conns", "200") or 200)
        listed = self.meta.get("contenders", " ".join(CONTENDERS)).split()
        self.contenders = [c for c in CONTENDERS if c in listed] + \
            [c for c in listed if c not in CONTENDERS]
        self.boots = []
        raw = os.path.join(run_dir, "raw")
        for name in sorted(os.listdir(raw)) if os.path.isdir(raw) else []:
            m = re.match(r"^r(\d+)-(.+)$", name)
            if m and os.path.isdir(os.path.join(raw, name)):
                self.boots.append((int(m.group(1)), m.group(2), os.path.join(raw, name)))
        self.samples = {}    # (metric, contender) -> [values]
        self.failed = {}     # (metric, contender) -> count
        self.extra = {}      # (metric, contender) -> [dicts]
        self.evidence = {}   # contender -> workload group -> aggregate
        self.memdetail = {}  # contender -> list of per-boot dicts
        self.boot_info = []
        for rnd, c, d in self.boots:
            self.read_boot(rnd, c, d)
        self.boot_info.sort(key=lambda b: (b["seq"], b["round"]))

    def add(self, metric, c, value, extra=None):
        self.samples.setdefault((metric, c), []).append(value)
        if extra:
            self.extra.setdefault((metric, c), []).append(extra)

    def fail(self, metric, c):
        self.failed[(metric, c)] = self.failed.get((metric, c), 0) + 1

    def read_boot(self, rnd, c, d):
        boot = keyvals(read(os.path.join(d, "boot.txt")))
        notes = []
        for n in (1, 2):
            t = read(os.path.join(d, "notes-vm%d.txt" % n))
            if t:
                notes += ["VM%d: %s" % (n, x) for x in t.splitlines() if x.strip()]
        self.boot_info.append({"seq": int(num(boot.get("seq")) or 0), "round": rnd, "contender": c, "rc": boot.get("rc"),
                               "splat": boot.get("splat") == "1",
                               "secs": num(boot.get("secs")),
                               "ceiling": boot.get("ceiling") == "1", "notes": notes,
                               "dir": os.path.relpath(d, self.dir)})
        for r in parse_results(read(os.path.join(d, "results.txt"))):
            metric = r.get("metric")
            if not metric:
                continue
            v = num(r.get("value"))
            if r.get("status") != "ok" or v is None:
                self.fail(metric, c)
                continue
            extra = {k: r[k] for k in r if k not in ("metric", "value", "status", "unit")}
            extra["round"] = rnd
            self.add(metric, c, v, extra)
            if metric == "cps1":
                # Where the single thread's connections spent their time.
                for phase in CPS_PHASES:
                    pv = num(r.get(phase + "_us"))
                    if pv is not None:
                        self.add("cps1_" + phase, c, pv, {"round": rnd})
        self.read_memory(rnd, c, d)
        self.read_evidence(c, d)
        self.read_ceiling(rnd, d)
        self.read_cpu(rnd, c, d)

    def read_cpu(self, rnd, c, d):
        """The CPU pass (bench-vm.sh cpu_pass): CPU per operation, both VMs.

        Each cpu-LABEL-vmN.txt counts one VM's cpu-clock samples (one a
        millisecond) by cpu_split.py's classes; the operations come from
        the pass's own runs: ping-pong exchanges, bulk bytes, Redis
        requests (SET and GET, redis_n each)."""
        ops = {}
        for r in parse_results(read(os.path.join(d, "cpu-results.txt"))):
            if r.get("status") != "ok":
                continue
            if r.get("metric") == "lat_p50":
                ops["pingpong"] = num(r.get("count"))
            elif r.get("metric") == "bulk1":
                b = num(r.get("bytes"))
                ops["bulk1"] = b / 1048576.0 if b else None
        csv = read(os.path.join(d, "cpu-redis-vm2.csv"))
        if csv and all(('"%s"' % t) in csv for t in ("SET", "GET")):
            ops["redis"] = 2 * (num(self.meta.get("redis_n")) or 0)
        for label, (mid, scale) in CPU_WORKLOADS.items():
            split = [keyvals(read(os.path.join(d, "cpu-%s-vm%d.txt" % (label, vm))))
                     for vm in (1, 2)]
            n = ops.get(label)
            if not any(split) and n is None:
                continue
            if not all(x.get("samples") for x in split) or not n:
                self.fail(mid, c)
                self.fail(mid + "_host", c)
                continue
            tot = {k: sum(num(x.get(k)) or 0 for x in split)
                   for k in ("samples", "idle", "rnic", "smc", "other")}
            busy = tot["samples"] - tot["idle"]
            # One sample is a millisecond of CPU time.
            self.add(mid, c, busy * scale / n,
                     {"round": rnd, "ops": n, "busy_ms": busy, "rnic_ms": tot["rnic"],
                      "smc_ms": tot["smc"], "other_ms": tot["other"],
                      "vm": {"vm%d" % (i + 1): x for i, x in enumerate(split)}})
            self.add(mid + "_host", c, (busy - tot["rnic"]) * scale / n, {"round": rnd})

    def read_memory(self, rnd, c, d):
        n = self.idle_conns
        for r in parse_results(read(os.path.join(d, "results.txt"))):
            if r.get("metric") == "idle_setup" and r.get("status") == "ok":
                n = int(num(r.get("conns")) or n)
        detail = {"round": rnd, "conns": n}
        for vm, role in ((1, "server"), (2, "client")):
            snaps = {}
            for label in ("before", "during", "after"):
                t = read(os.path.join(d, "mem-vm%d-idle-%s.txt" % (vm, label)))
                if t is not None:
                    snaps[label] = parse_meminfo_slab(t)
            if "before" not in snaps or "during" not in snaps:
                for m in ("mem_total", "mem_slab", "mem_smcbuf"):
                    self.fail("%s_vm%d" % (m, vm), c)
                continue
            (mb, sb, _), (md, sd, rows_d) = snaps["before"], snaps["during"]
            total = (mb.get("MemFree", 0) - md.get("MemFree", 0)) * 1024.0 / n
            slab_meminfo = (md.get("Slab", 0) - mb.get("Slab", 0)) * 1024.0 / n
            caches = []
            slab = 0
            for name in set(sb) | set(sd):
                b = sb.get(name, {"bytes": 0, "objs": 0})
                a = sd.get(name, {"bytes": 0, "objs": 0})
                if name in DEBUG_CACHES:
                    continue
                slab += a["bytes"] - b["bytes"]
                caches.append((a["bytes"] - b["bytes"], name, (a["objs"] - b["objs"]) / n))
            caches.sort(reverse=True)
            slab /= n
            self.add("mem_total_vm%d" % vm, c, total / 1024.0)
            self.add("mem_slab_vm%d" % vm, c, slab / 1024.0)
            rows = smcss_rows(rows_d, self.port)
            has_smcss = any(line.startswith("State") for line in rows_d)
            if has_smcss:
                self.add("mem_smcbuf_vm%d" % vm, c, sum(b for _, _, b in rows) / n / 1024.0)
            side = {"role": role, "memfree_drop_per_conn": total,
                    "slab_per_conn": slab, "meminfo_slab_per_conn": slab_meminfo,
                    "top_caches": [{"cache": nm, "bytes_per_conn": by / n, "objs_per_conn": ob}
                                   for by, nm, ob in caches[:8] if by > 0],
                    "smc_diag_rows": len(rows) if has_smcss else None,
                    "smc_diag_modes": modes_count(rows) if has_smcss else None}
            if "after" in snaps:
                side["retained_after_close_per_conn"] = \
                    (mb.get("MemFree", 0) - snaps["after"][0].get("MemFree", 0)) * 1024.0 / n
            detail["vm%d" % vm] = side
        self.memdetail.setdefault(c, []).append(detail)

    def read_evidence(self, c, d):
        ev = self.evidence.setdefault(c, {})
        for f in sorted(os.listdir(d)):
            m = re.match(r"^ctr-(.+)-r(\d+)-before-vm2\.txt$", f)
            if not m:
                continue
            group = re.sub(r"\d+$", "", m.group(1)) if m.group(1).startswith(("bulk", "cps")) \
                else m.group(1)
            if group.startswith("rdma_"):
                group = "ceiling"
            label = "%s-r%s" % (m.group(1), m.group(2))
            g = ev.setdefault(group, {"ctr": {}, "modes": {}, "reasons": set(), "smcss": False,
                                       "stats": False, "runs": 0})
            g["runs"] += 1
            delta = counters_delta(d, label)
            if any(k.startswith("smc_") for k in delta):
                g["stats"] = True
            for k, v in delta.items():
                g["ctr"][k] = g["ctr"].get(k, 0) + v
            probe = "idle" if m.group(1) == "idle" else label
            for vm in (1, 2):
                t = read(os.path.join(d, "smcss-%s-vm%d.txt" % (probe, vm)))
                if t is None or not any(x.startswith("State") for x in t.splitlines()):
                    continue
                g["smcss"] = True
                # Redis listens on the bench port + 10 (bench-vm.sh).
                port = self.port + 10 if group == "redis" else self.port
                for mode, reason, _ in smcss_rows(t.splitlines(), port):
                    key = "vm%d %s" % (vm, mode)
                    g["modes"][key] = g["modes"].get(key, 0) + 1
                    if reason:
                        g["reasons"].add("VM%d %s" % (vm, reason))

    def read_ceiling(self, rnd, d):
        for f in sorted(os.listdir(d)):
            m = re.match(r"^perftest-(bw|lat)-r(\d+)-vm2\.txt$", f)
            if not m:
                continue
            res = parse_perftest(read(os.path.join(d, f)))
            if m.group(1) == "bw":
                if "bw" in res:
                    self.add("rdma_write_bw", "ceiling", res["bw"], {"round": rnd})
                else:
                    self.fail("rdma_write_bw", "ceiling")
            else:
                if "p50" in res:
                    self.add("rdma_write_lat_p50", "ceiling", res["p50"], {"round": rnd})
                    self.add("rdma_write_lat_p99", "ceiling", res["p99"], {"round": rnd})
                else:
                    self.fail("rdma_write_lat_p50", "ceiling")
                    self.fail("rdma_write_lat_p99", "ceiling")

    def ceiling_packets(self):
        """rxe packets sent and received on VM2 during the perftest runs."""
        total = None
        for c in self.evidence:
            g = self.evidence[c].get("ceiling")
            if g:
                total = (total or 0) + g["ctr"].get("rxe_sent_pkts", 0) + \
                    g["ctr"].get("rxe_rcvd_pkts", 0)
        return total

    # -------------------------------------------------------- verdicts

    def verdict(self, c, group):
        """('SMC-R' | 'TCP fallback' | 'TCP' | 'mixed' | 'unproven', evidence text)."""
        g = self.evidence.get(c, {}).get(group)
        fam = "tcp" if c == "tcp" else "smc"
        if fam == "tcp":
            return "TCP", "AF_INET sockets, no SMC module loaded"
        if not g:
            return "unproven", "no counters recorded"
        ctr, parts = g["ctr"], []
        smc, fb = ctr.get("smc_conns", 0), ctr.get("smc_fallbacks", 0)
        hs = ctr.get("smc_hs_errors", 0)
        rxe = ctr.get("rxe_sent_pkts", 0) + ctr.get("rxe_rcvd_pkts", 0)
        v = None
        if g["stats"]:
            parts.append("smcr stats on VM2: %d SMC-R, %d fallback(s), %d handshake error(s)"
                         % (smc, fb, hs))
            if smc > 0 and fb == 0 and hs == 0:
                v = "SMC-R"
            elif smc == 0 and fb > 0:
                v = "TCP fallback"
            elif smc > 0 or fb > 0 or hs > 0:
                v = "mixed"
            if ctr.get("smc_tx_bytes"):
                parts.append("%s sent via SMC" % human_bytes(ctr["smc_tx_bytes"]))
        if g["smcss"]:
            modes = g["modes"]
            parts.append("smc_diag: " + (", ".join("%s %d" % (k, modes[k]) for k in sorted(modes))
                                         or "no rows"))
            smcr = sum(n for k, n in modes.items() if k.endswith("SMCR"))
            tcp = sum(n for k, n in modes.items() if k.endswith("TCP"))
            if v is None:
                v = "SMC-R" if smcr and not tcp else "TCP fallback" if tcp and not smcr else \
                    "mixed" if smcr and tcp else None
            if g["reasons"]:
                parts.append("fallback reasons " + ", ".join(sorted(g["reasons"])))
        parts.append("rxe packets %d" % rxe)
        if v is None:
            v = "SMC-R?" if rxe > 1000 else "unproven"
        if v == "SMC-R" and rxe == 0:
            parts.append("BUT no rxe packets")
        if v == "TCP fallback" and group not in ("ceiling",) and rxe > 1000:
            parts.append("rxe traffic anyway")
        return v, "; ".join(parts)

    def contender_verdict(self, c):
        groups = [g for g in self.evidence.get(c, {}) if g != "ceiling"]
        if c == "tcp":
            return "TCP", {}
        vs = {g: self.verdict(c, g) for g in groups}
        kinds = {v for v, _ in vs.values()}
        if not vs:
            return "not run", vs
        if len(kinds) == 1:
            return kinds.pop(), vs
        return "mixed", vs


def modes_count(rows):
    out = {}
    for mode, reason, _ in rows:
        k = mode + (" " + reason if reason else "")
        out[k] = out.get(k, 0) + 1
    return out


def human_bytes(b):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(b) < 1024 or unit == "TiB":
            return ("%.0f %s" if unit == "B" else "%.1f %s") % (b, unit)
        b /= 1024.0
    return str(b)


def summary(values):
    if not values:
        return None
    return {"n": len(values), "min": min(values), "median": statistics.median(values),
            "max": max(values)}


# ------------------------------------------------------------ output

def metric_table(run):
    s, t = run.streams, run.threads
    return [
        ("bulk1", "bulk throughput, 1 stream", "Mbit/s", "higher", "bulk"),
        ("bulk" + s, "bulk throughput, %s streams" % s, "Mbit/s", "higher", "bulk"),
        ("lat_p50", "1-byte ping-pong RTT, p50", "us", "lower", "pingpong"),
        ("lat_p99", "1-byte ping-pong RTT, p99", "us", "lower", "pingpong"),
        ("cps1", "connect+1B req/resp+close, 1 thread", "conn/s", "higher", "cps"),
        ("cps1_connect", "  of which socket()+connect(), mean", "us", "lower", "cps"),
        ("cps1_reqresp", "  of which 1B request and answer, mean", "us", "lower", "cps"),
        ("cps1_close", "  of which close(), mean", "us", "lower", "cps"),
        ("cps" + t, "connect+1B req/resp+close, %s threads" % t, "conn/s", "higher", "cps"),
        ("redis_set_c1", "redis-benchmark SET, 1 client (smc_run)", "req/s", "higher", "redis"),
        ("redis_get_c1", "redis-benchmark GET, 1 client (smc_run)", "req/s", "higher", "redis"),
        ("redis_set_c50", "redis-benchmark SET, 50 clients (smc_run)", "req/s", "higher", "redis"),
        ("redis_get_c50", "redis-benchmark GET, 50 clients (smc_run)", "req/s", "higher", "redis"),
        ("qperf_bw_1", "qperf tcp_bw, 1-byte messages", "MB/s", "higher", "anchors"),
        ("qperf_lat_1", "qperf tcp_lat, 1-byte messages", "us", "lower", "anchors"),
        ("qperf_bw_64k", "qperf tcp_bw, 64 KiB messages", "MB/s", "higher", "anchors"),
        ("qperf_lat_64k", "qperf tcp_lat, 64 KiB messages", "us", "lower", "anchors"),
        ("sockperf_avg", "sockperf ping-pong (TCP), mean", "us", "lower", "anchors"),
        ("sockperf_p50", "sockperf ping-pong (TCP), p50", "us", "lower", "anchors"),
        ("cpu_pp", "CPU per ping-pong exchange, both VMs", "us", "lower", "pingpong"),
        ("cpu_pp_host", "  the same, the RNIC's share taken out", "us", "lower", "pingpong"),
        ("cpu_bulk1", "CPU per MiB, bulk 1 stream, both VMs", "ms", "lower", "bulk"),
        ("cpu_bulk1_host", "  the same, the RNIC's share taken out", "ms", "lower", "bulk"),
        ("cpu_redis", "CPU per Redis request (50 clients), both", "us", "lower", "redis"),
        ("cpu_redis_host", "  the same, the RNIC's share taken out", "us", "lower", "redis"),
        ("mem_total_vm1", "idle conn: memory, VM1 server (MemFree)", "KiB/conn", "lower", "idle"),
        ("mem_total_vm2", "idle conn: memory, VM2 client (MemFree)", "KiB/conn", "lower", "idle"),
        ("mem_slab_vm1", "idle conn: slab, VM1 server", "KiB/conn", "lower", "idle"),
        ("mem_slab_vm2", "idle conn: slab, VM2 client", "KiB/conn", "lower", "idle"),
        ("mem_smcbuf_vm1", "idle conn: SMC buffers, VM1 (smc_diag)", "KiB/conn", "lower", "idle"),
        ("mem_smcbuf_vm2", "idle conn: SMC buffers, VM2 (smc_diag)", "KiB/conn", "lower", "idle"),
    ]


# The CPU pass's workloads: label -> (metric, milliseconds to the unit).
CPU_WORKLOADS = {"pingpong": ("cpu_pp", 1000.0), "bulk1": ("cpu_bulk1", 1.0),
                 "redis": ("cpu_redis", 1000.0)}

CEILING = [
    ("rdma_write_bw", "rxe RDMA WRITE bandwidth (ib_write_bw)", "Mbit/s"),
    ("rdma_write_lat_p50", "rxe RDMA WRITE RTT p50 (2x ib_write_lat typical)", "us"),
    ("rdma_write_lat_p99", "rxe RDMA WRITE RTT p99 (2x ib_write_lat 99%)", "us"),
]

# Workloads the report names without figures (none today).
NOT_MEASURED = []


def build(run):
    metrics = []
    for mid, label, unit, better, group in metric_table(run):
        m = {"id": mid, "label": label, "unit": unit, "better": better, "workload": group,
             "values": {}, "ratios": {}}
        for c in run.contenders:
            sm = summary(run.samples.get((mid, c), []))
            entry = {"samples": run.samples.get((mid, c), []),
                     "failed": run.failed.get((mid, c), 0)}
            if sm:
                entry.update(sm)
            if mid in ("cpu_pp", "cpu_bulk1", "cpu_redis"):
                # The split behind each sample (bench-vm.sh cpu_pass).
                entry["split"] = run.extra.get((mid, c), [])
            entry["mode"] = run.verdict(c, group)[0]
            m["values"][c] = entry
        for a, b in RATIOS:
            va, vb = m["values"].get(a, {}), m["values"].get(b, {})
            if va.get("median") is not None and vb.get("median"):
                m["ratios"]["%s/%s" % (a, b)] = va["median"] / vb["median"]
        metrics.append(m)
    ceiling = []
    for mid, label, unit in CEILING:
        sm = summary(run.samples.get((mid, "ceiling"), []))
        e = {"id": mid, "label": label, "unit": unit,
             "samples": run.samples.get((mid, "ceiling"), []),
             "failed": run.failed.get((mid, "ceiling"), 0)}
        if sm:
            e.update(sm)
        ceiling.append(e)
    modes = {}
    for c in run.contenders:
        v, per = run.contender_verdict(c)
        modes[c] = {"verdict": v, "workloads": {g: {"mode": x, "evidence": ev}
                                                for g, (x, ev) in sorted(per.items())}}
        if c == "tcp":
            modes[c]["workloads"] = {"all": {"mode": "TCP",
                                             "evidence": "AF_INET sockets, no SMC module"}}
    return metrics, ceiling, modes


def report_text(run, metrics, ceiling, modes):
    meta = run.meta
    L = []
    L.append("smc_rs benchmark  %s  commit %s%s  kernel %s" % (
        meta.get("date", "?"), meta.get("commit", "?"),
        " (uncommitted changes)" if meta.get("dirty") == "1" else "", meta.get("kernel", "?")))
    L.append("host: %s, %s CPUs; guests: %s" % (meta.get("host_cpu", "?"), meta.get("host_cpus", "?"),
                                                meta.get("accel", "tcg")))
    L.append("")
    L.append("ABSOLUTE FIGURES: " + note(meta) + ".")
    L.append("Only ratios within one run mean something; every cell is min / median / max")
    L.append("over reps x rounds samples (memory: one sample per boot).")
    L.append("settings: " + ", ".join("%s=%s" % (k, meta[k]) for k in (
        "rounds", "reps", "secs", "streams", "pp_count", "cps_threads", "idle_conns", "ceiling")
        if k in meta))
    L.append("")
    L.append("Mode (what the connections really were):")
    for c in run.contenders:
        L.append("  %-9s %s" % (c, modes[c]["verdict"]))
        for g, w in modes[c]["workloads"].items():
            L.append("    %-9s %s: %s" % (g, w["mode"], w["evidence"]))
    L.append("")
    L.append("Boots:")
    for b in run.boot_info:
        st = "ok" if b["rc"] == "0" else "FAILED (status %s)" % (b["rc"] or "?")
        if b["splat"]:
            st += ", KERNEL SPLAT"
        L.append("  round %d %-9s %s, %s s%s  [%s]" % (
            b["round"], b["contender"], st, fmt(b["secs"]) if b["secs"] is not None else "?",
            ", with the ceiling" if b["ceiling"] else "", b["dir"]))
        for n in b["notes"]:
            L.append("      note: " + n)
    L.append("")
    cw = 26
    head = "%-42s %-11s" % ("metric", "unit") + "".join(
        " %-*s" % (cw, c + " (min/med/max)") for c in run.contenders) + \
        "".join(" %7s" % RATIO_NAMES[r] for r in RATIOS)
    L.append(head)
    L.append("-" * len(head))
    for m in metrics:
        cells = []
        for c in run.contenders:
            e = m["values"].get(c, {})
            if e.get("median") is None:
                cell = "n/a" + (" (%d failed)" % e["failed"] if e.get("failed") else "")
            else:
                cell = "%s / %s / %s" % (fmt(e["min"]), fmt(e["median"]), fmt(e["max"])) \
                    if e["n"] > 1 else "%s (n=1)" % fmt(e["median"])
                if e.get("failed"):
                    cell += " !%d" % e["failed"]
            cells.append(" %-*s" % (cw, cell))
        ratios = "".join(" %7s" % (fmt(m["ratios"]["%s/%s" % r]) if "%s/%s" % r in m["ratios"]
                                   else "-") for r in RATIOS)
        arrow = "^" if m["better"] == "higher" else "v"
        L.append("%-42s %-11s" % (m["label"], m["unit"] + " " + arrow) + "".join(cells) + ratios)
    for mid, label, why in NOT_MEASURED:
        L.append("%-42s %-11s %s" % (label, "-", why))
    L.append("")
    L.append("^ higher is better, v lower is better; ratios are of the medians (a/b: rs = smc_rs,")
    L.append("up = upstream); '!N': N failed samples left out; n/a: nothing measured.")
    L.append("")
    L.append("CPU split of the CPU pass (cpu-clock samples of both VMs, idle left out; rnic: rxe")
    L.append("and the RoCE packets' receive path, what an RDMA NIC does in hardware; smc: the")
    L.append("SMC module's own code; other: system calls, copies, scheduling, TCP, the NIC driver):")
    any_cpu = False
    for mid in ("cpu_pp", "cpu_bulk1", "cpu_redis"):
        for c in run.contenders:
            for e in run.extra.get((mid, c), []):
                b = e["busy_ms"] or 1
                any_cpu = True
                L.append("  %-10s %-9s %6d ms busy over %s ops: rnic %4.1f %%, smc %4.1f %%, other %4.1f %%"
                         % (mid, c, e["busy_ms"], fmt(e["ops"]), 100.0 * e["rnic_ms"] / b,
                            100.0 * e["smc_ms"] / b, 100.0 * e["other_ms"] / b))
    if not any_cpu:
        L.append("  (no CPU pass in this run: BENCH_CPU=0, or it failed)")
    L.append("")
    L.append("Ceiling: raw rxe RDMA WRITE between the same VMs (perftest; same caveat)")
    pk = run.ceiling_packets()
    if pk is not None:
        L.append("  (rxe packets on VM2 during these runs: %d)" % pk)
    for e in ceiling:
        if e.get("median") is None:
            val = "n/a" + (" (%d failed)" % e["failed"] if e.get("failed") else "")
        else:
            val = "%s / %s / %s  (n=%d)" % (fmt(e["min"]), fmt(e["median"]), fmt(e["max"]), e["n"])
        L.append("  %-50s %-7s %s" % (e["label"], e["unit"], val))
    L.append("")
    L.append("Memory per idle connection, details (per boot):")
    for c in run.contenders:
        for d in run.memdetail.get(c, []):
            for vm in ("vm1", "vm2"):
                s = d.get(vm)
                if not s:
                    L.append("  %s round %d %s: no snapshots" % (c, d["round"], vm))
                    continue
                line = "  %s round %d %s (%s, %d conns): MemFree %s KiB/conn, slab %s KiB/conn" % (
                    c, d["round"], vm.upper(), s["role"], d["conns"],
                    fmt(s["memfree_drop_per_conn"] / 1024), fmt(s["slab_per_conn"] / 1024))
                line += " (meminfo Slab %s)" % fmt(s["meminfo_slab_per_conn"] / 1024)
                if "retained_after_close_per_conn" in s:
                    line += ", retained after close %s KiB/conn" % fmt(
                        s["retained_after_close_per_conn"] / 1024)
                L.append(line)
                if s.get("smc_diag_modes") is not None:
                    L.append("      smc_diag rows: " + (", ".join(
                        "%s %d" % kv for kv in sorted(s["smc_diag_modes"].items())) or "none"))
                if s["top_caches"]:
                    L.append("      slab: " + ", ".join(
                        "%s %s B (%s obj)" % (t["cache"], fmt(t["bytes_per_conn"]),
                                              fmt(t["objs_per_conn"]))
                        for t in s["top_caches"][:6]))
    return "\n".join(L) + "\n"


def chart(run, metrics, ceiling, out_dir):
    gp = shutil.which("gnuplot")
    if not gp:
        return False
    by_id = {m["id"]: m for m in metrics}
    cs = run.contenders
    panels = [
        ("Bulk throughput (Mbit/s, higher is better)",
         [("1 stream", "bulk1"), ("%s streams" % run.streams, "bulk" + run.streams)],
         ("rdma_write_bw", "rxe RDMA WRITE (ib_write_bw)")),
        ("1-byte ping-pong RTT (us, lower is better)",
         [("p50", "lat_p50"), ("p99", "lat_p99")],
         ("rdma_write_lat_p50", "rxe RDMA WRITE RTT p50")),
        ("Connections/s: connect, 1-byte req/resp, close (higher is better)",
         [("1 thread", "cps1"), ("%s threads" % run.threads, "cps" + run.threads)], None),
        ("Memory per idle connection (KiB, lower is better)",
         [("VM1 total", "mem_total_vm1"), ("VM2 total", "mem_total_vm2"),
          ("VM1 slab", "mem_slab_vm1"), ("VM2 slab", "mem_slab_vm2"),
          ("VM1 SMC buf", "mem_smcbuf_vm1"), ("VM2 SMC buf", "mem_smcbuf_vm2")], None),
        ("CPU per operation, both VMs (lower is better; 'host': RNIC's share out)",
         [("ping-pong us", "cpu_pp"), ("host us", "cpu_pp_host"),
          ("bulk ms/MiB", "cpu_bulk1"), ("host ms/MiB", "cpu_bulk1_host"),
          ("Redis us/req", "cpu_redis"), ("host us/req", "cpu_redis_host")], None),
    ]
    ceil = {e["id"]: e.get("median") for e in ceiling}
    dat = []
    for _, rows, _ in panels:
        for label, mid in rows:
            vals = by_id.get(mid, {}).get("values", {})
            cols = []
            for c in cs:
                e = vals.get(c, {})
                for k in ("median", "min", "max"):
                    v = e.get(k)
                    cols.append("NaN" if v is None else "%g" % v)
            dat.append('"%s" %s' % (label, " ".join(cols)))
        dat.append("")
        dat.append("")
    with open(os.path.join(out_dir, "chart.dat"), "w") as f:
        f.write("\n".join(dat) + "\n")
    meta = run.meta
    g = ["set terminal pngcairo size 1500,1575 font 'sans,10' noenhanced",
         "set output 'chart.png'",
         "set datafile missing 'NaN'",
         "set style data histogram",
         "set style histogram errorbars gap 1 lw 1",
         "set style fill solid 0.75 border -1",
         "set key below horizontal",
         "set grid ytics",
         "set yrange [0:*]",
         "set offsets 0, 0, graph 0.12, 0",
         "set multiplot layout 3,2 title \"smc_rs bench %s, commit %s - %s. "
         "Bars: median, whiskers: min..max\"" % (meta.get("date", "?"), meta.get("commit", "?"),
                                                 note(meta))]
    for i, (title, rows, cline) in enumerate(panels):
        g.append("set title \"%s\"" % title)
        if not any(by_id.get(mid, {}).get("values", {}).get(c, {}).get("median") is not None
                   for _, mid in rows for c in cs):
            g += ["set xrange [0:1]", "set yrange [0:1]", "unset xtics",
                  "set label 1 'nothing measured' at graph 0.5, graph 0.5 center",
                  "plot 2 notitle",
                  "unset label 1", "set xtics", "set autoscale x", "set yrange [0:*]"]
            continue
        parts = []
        for j, c in enumerate(cs):
            using = "%d:%d:%d" % (2 + 3 * j, 3 + 3 * j, 4 + 3 * j)
            if j == 0:
                using += ":xtic(1)"
            parts.append("%s index %d using %s title '%s'" % (
                "'chart.dat'" if j == 0 else "''", i, using, c))
        if cline and ceil.get(cline[0]) is not None:
            parts.append("%g with lines dashtype 2 lw 2 lc rgb 'black' title '%s'" % (
                ceil[cline[0]], cline[1]))
        g.append("plot " + ", ".join(parts))
    g.append("unset multiplot")
    with open(os.path.join(out_dir, "chart.gp"), "w") as f:
        f.write("\n".join(g) + "\n")
    r = subprocess.run([gp, "chart.gp"], cwd=out_dir, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("bench_report: gnuplot failed:\n" + r.stderr)
        return False
    return True


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench_report.py RUN_DIR")
    out = sys.argv[1]
    run = Run(out)
    metrics, ceiling, modes = build(run)
    text = report_text(run, metrics, ceiling, modes)
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write(text)
    doc = {
        "schema": 1,
        "note": "absolute figures: " + note(run.meta),
        "meta": run.meta,
        "contenders": run.contenders,
        "modes": modes,
        "boots": run.boot_info,
        "metrics": metrics,
        "ceiling": ceiling,
        "not_measured": [{"id": i, "label": lab, "reason": why} for i, lab, why in NOT_MEASURED],
        "extra": {
            "idle_setup": {
                "label": "idle set: connections opened per second, one after the other",
                "unit": "conn/s",
                "values": {c: summary(run.samples.get(("idle_setup", c), [])) for c in run.contenders},
            },
            "ceiling_rxe_packets": run.ceiling_packets(),
        },
        "memory_detail": run.memdetail,
    }
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    chart(run, metrics, ceiling, out)


if __name__ == "__main__":
    main()
