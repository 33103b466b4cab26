#!/usr/bin/env python3
"""Turns the raw outputs of scripts/bench.sh into docs/results/bench.md and its PNG plots,
and prints the report.

Usage: bench_report.py RAW_DIR OUT_DIR ELAPSED_SECONDS   (scripts/bench.sh)

The parsers read the benchmarks' "row" lines where they print them, their human-readable
lines otherwise, with tolerant patterns: a line that is missing or changed leaves its figure
as "n/a" and a warning on stderr instead of failing the report. A section that raises is
reported as not reported (its traceback on stderr), the others are still written, and the
exit status is 1.
"""
import datetime
import math
import os
import platform
import re
import subprocess
import sys
import traceback

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PROFILES = ("memory-lean", "balanced", "wire-lean")
OPTIMAL_BLOOM = 9.59  # bits/key of an optimal Bloom filter at 1 %: log2(e) log2(1/p)
BOUND = 6.64  # log2(1/p): the information-theoretic bound at 1 %
TARGET_BPK = {"wire-lean": 8.2, "balanced": 9.1}
DRAM_FACTOR = 1.5
# One-sided 99.9 % tolerance of a measured FPR against its target, in standard errors.
Z = 3.09


WARNINGS = []
FAILED = []


def warn(message):
    """A figure or an output the report lacks: said on stderr, and the report says n/a."""
    WARNINGS.append(message)
    sys.stderr.write("bench_report: warning: %s\n" % message)


def read(raw, name, required=True):
    try:
        with open(os.path.join(raw, name + ".txt")) as f:
            text = f.read()
    except OSError:
        text = ""
    if required and not text.strip():
        warn("no output in %s" % os.path.join(raw, name + ".txt"))
    return text


def expect(where, figures, keys=None):
    """Warns about each figure of `figures` (a dict) that is missing or None."""
    for key in keys if keys is not None else list(figures):
        if figures.get(key) is None:
            warn("%s: '%s' not found (n/a)" % (where, key))
    return figures


def seconds(raw, name):
    try:
        with open(os.path.join(raw, name + ".s")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def num(pattern, text, group=1, default=None):
    m = re.search(pattern, text, re.M)
    return float(m.group(group)) if m else default


def fmt(x, spec="%.1f"):
    return "n/a" if x is None else spec % x


def rows(text):
    return [line.split("\t")[1:] for line in text.splitlines() if line.startswith("row\t")]


def to_float(text):
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def ratio(a, b):
    return a / b if a is not None and b else None


def met(ok):
    """yes / **no** from a comparison, n/a when a figure it needs is missing."""
    return "n/a" if ok is None else ("yes" if ok else "**no**")


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


# --- Parsers ---------------------------------------------------------------------------------


def parse_core(text):
    """{(name, profile, n): value} from core_ops_bench."""
    out = {}
    for r in rows(text):
        if len(r) >= 4:
            out[(r[0], r[1], int(r[2]))] = float(r[3])
    return out


def parse_peer_index(text):
    out = {}
    for block in re.split(r"\n(?=\S)", text):
        m = re.match(r"(\S+)\s+k=(\d+)", block)
        if not m:
            continue
        out[m.group(1)] = {
            "k": int(m.group(2)),
            "index": num(r"index ([\d.]+), scan", block),
            "scan": num(r"scan ([\d.]+)", block),
            "batch": num(r"batched.*?: ([\d.]+) ns/query", block),
            "peers": num(r"peers=(\d+)", block),
            "keys": num(r"keys/peer=(\d+)", block),
        }
    return out


def parse_who_has(text):
    return {
        "single": num(r"one key at a time\s+([\d.]+) ns/key", text),
        "batch_local": num(r"local counters prefetched\s+([\d.]+)", text),
        "batch_full": num(r"local and peer index prefetched\s+([\d.]+)", text),
        "local_single": num(r"local filter only: one at a time ([\d.]+)", text),
        "local_batch": num(r"local filter only:.*WhoHasBatch ([\d.]+)", text),
        "peers": num(r"(\d+) peers of", text),
        "keys": num(r"who-has: (\d+) keys here", text),
    }


CONTROL_FIGURES = (
    "keys", "added_ms", "batch_size", "zmq_single_p50", "zmq_single_p99", "zmq_single_p999",
    "zmq_batched_keys_per_s", "socket_single_p50", "socket_single_p99", "socket_single_p999",
    "socket_batched_keys_per_s", "redis_getbit_p50", "redis_getbit_p99", "redis_getbit_p999",
    "redis_pipelined_keys_per_s_1", "redis_pipelined_keys_per_s_16")


def parse_control(text):
    """bench/control_bench.sh: its "row<TAB>name<TAB>value<TAB>unit" lines (latencies in us);
    without them (an output from before those lines), its table for people."""
    out = {}
    for r in rows(text):
        if len(r) >= 2 and to_float(r[1]) is not None:
            out[r[0]] = to_float(r[1])
    if out:
        return out
    m = re.search(r"added (\d+) URLs in (\d+) ms", text)
    if m:
        out["keys"], out["added_ms"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"batches: ([\d,]+) URLs per request", text)
    out["batch_size"] = to_float(m.group(1)) if m else None
    # Table lines: a name, then p50, p99, p99.9 ("12.3 us" or "-") and batched keys/s.
    cell = r"\s+([\d,.]+ [um]s|-)"
    for prefix, name in (("zmq_", r"control endpoint"), ("socket_", r"who-has socket"),
                         ("redis_getbit_", r"redis GETBIT")):
        m = re.search(r"^.*%s.*?%s%s%s\s+([\d,]+|-)\s*$" % (name, cell, cell, cell), text, re.M)
        if not m:
            continue
        for i, q in enumerate(("p50", "p99", "p999")):
            v = m.group(i + 1).split()
            if len(v) == 2:
                out[(prefix if prefix == "redis_getbit_" else prefix + "single_") + q] = (
                    to_float(v[0]) * (1000 if v[1] == "ms" else 1))
        batched = to_float(m.group(4))
        if prefix == "redis_getbit_":
            out["redis_pipelined_keys_per_s_1"] = batched
        else:
            out[prefix + "batched_keys_per_s"] = batched
    m = re.search(r"^redis pipelined, 16 .*?([\d,]+)\s*$", text, re.M)
    if m:
        out["redis_pipelined_keys_per_s_16"] = to_float(m.group(1))
    for key, pattern in (("rounds", r"median over (\d+) interleaved rounds"),
                         ("batches", r"URLs per request, median of (\d+)"),
                         ("busy_poll_us", r"client busy poll (\d+) us"),
                         ("redis_pipelined_getbits_per_s",
                          r"redis pipelined GETBITs/s.*: ([\d,]+)")):
        m = re.search(pattern, text)
        out[key] = to_float(m.group(1)) if m else None
    return out


def parse_redis(text):
    out = {r[0]: float(r[1]) for r in rows(text) if len(r) >= 2}
    m = re.search(r"redis-server (\S+)", text)
    out["version"] = m.group(1) if m else "?"
    return out


def parse_summary(text):
    """Per profile: full-summary and delta figures; and the two sweeps."""
    profiles, sweeps = {}, {}
    for block in re.split(r"\n(?=== )", text):
        head = re.match(r"== (\S+): k=(\d+), 2\^(\d+) counters, n=(\d+), summary 2\^(\d+)", block)
        if head:
            profiles[head.group(1)] = {
                "k": int(head.group(2)),
                "n": int(head.group(4)),
                "summary_log2": int(head.group(5)),
                "full_bpk": num(r"full summary chosen \((\S+)\) bits/key\s+([\d.]+)", block, 2),
                "delta_bytes_per_key": num(r"delta at 1% churn: ([\d.]+) bytes per changed key",
                                           block),
                "flips_per_key": num(r"\(([\d.]+) flipped bits per changed key", block),
                "publish_ms": num(r"builder publish of that delta: ([\d.]+) ms", block),
                "fpr": num(r"summary FPR measured ([\d.]+)%", block),
            }
        sweep = re.match(r"== (\S+) sweep", block)
        if sweep:
            design = num(r"sized for a formula FPR <= ([\d.]+)%", block)
            absent = num(r"FPR measured over (\d+) absent keys", block)
            pts = []
            for m in re.finditer(r"^\s+(\d+) \| (\S+)\s+([\d.]+)\s+([\d.]+) \| (\S+)\s+([\d.]+)\s+"
                                 r"([\d.]+)", block, re.M):
                pts.append({"n": int(m.group(1)), "exact_m": m.group(2),
                            "exact_bpk": float(m.group(3)), "exact_fpr": float(m.group(4)),
                            "pow2_m": m.group(5), "pow2_bpk": float(m.group(6)),
                            "pow2_fpr": float(m.group(7)), "design_fpr": design,
                            "absent": int(absent) if absent else None})
            sweeps[sweep.group(1)] = pts
    return profiles, sweeps


def parse_gossip(text):
    """gossip_sim_bench: a list of the small clusters' blocks ("N nodes, K keys/node ...") and
    a list of the large clusters' blocks ("N nodes (S seeds listed by all) ...")."""
    small, large = [], []
    for block in re.split(r"\n(?=\d+ nodes\b)", text):
        head = re.match(r"(\d+) nodes, (\d+) keys/node", block)
        if head:
            small.append({
                "nodes": int(head.group(1)),
                "keys": int(head.group(2)),
                "join_s": num(r"join:.*?([\d.]+) s", block),
                "bytes_median": num(r"bytes/s per node: median ([\d.]+)", block),
                "bytes_mean": num(r"bytes/s per node:.*?mean ([\d.]+)", block),
                "bytes_max": num(r"bytes/s per node:.*?max ([\d.]+)", block),
                "deltas": num(r"deltas ([\d.]+)", block),
                "digests": num(r"digests ([\d.]+)", block),
                "full": num(r"full summaries ([\d.]+)", block),
                "conv_median": num(r"visible at all \d+ nodes: median ([\d.]+)", block),
                "conv_max": num(r"visible at all \d+ nodes:.*?max ([\d.]+)", block),
                "false_neg": num(r"false negatives after convergence: (\d+)", block),
                "wall_s": num(r"wall time ([\d.]+) s", block),
            })
            continue
        head = re.match(r"(\d+) nodes \((\d+) seeds", block)
        if not head:
            continue
        g = {"nodes": int(head.group(1)), "seeds": int(head.group(2))}
        g["keys"] = num(r"(\d+) keys/node", block)
        g["loss_pct"] = num(r"([\d.]+) % frames lost", block)
        g["churn_every_s"] = num(r"or a join every ([\d.]+) s", block)
        m = re.search(r"join every [\d.]+ s \((\d+), (\d+), (\d+)\)", block)
        g["failures"], g["restarts"], g["joins"] = (
            [int(x) for x in m.groups()] if m else (None, None, None))
        g["replace_every_s"] = num(r"one key replaced per node every (\d+) s", block)
        g["join_s"] = num(r"every current summary ([\d.]+) s after", block)
        g["measure_s"] = num(r"bytes/s per node over (\d+) s", block)
        g["steady_nodes"] = num(r"\((\d+) non-seed nodes up throughout\)", block)
        g["bytes_median"] = num(r"up throughout\): median ([\d.]+)", block)
        g["bytes_p99"] = num(r"up throughout\):.*?p99 ([\d.]+)", block)
        g["bytes_max"] = num(r"up throughout\):.*?max ([\d.]+)", block)
        g["bytes_mean"] = num(r"up throughout\):.*?mean ([\d.]+)", block)
        g["seed_median"] = num(r"seeds: median ([\d.]+)", block)
        g["seed_max"] = num(r"seeds: median [\d.]+, max ([\d.]+)", block)
        m = re.search(r"busiest node (\S+): ([\d.]+) x the median", block)
        g["busiest"] = m.group(1) if m else None
        g["busiest_over_median"] = float(m.group(2)) if m else None
        g["seed_over_median"] = num(r"busiest seed ([\d.]+) x", block)
        for key, label in (("deltas", "deltas"), ("digests", "digests"),
                           ("full", "full summaries"), ("requests", "requests"),
                           ("prune_graft", "prune/graft")):
            g[key] = num(r"by type per node:.*?\b%s ([\d.]+)" % re.escape(label), block)
        # The benchmark prints -1 when no add was timed.
        m = re.search(r"visible at every live node: median (-?[\d.]+), p90 (-?[\d.]+), max "
                      r"(-?[\d.]+)", block)
        for i, key in enumerate(("add_median", "add_p90", "add_max")):
            v = float(m.group(i + 1)) if m else None
            g[key] = v if v is not None and v >= 0 else None
        m = re.search(r"\((\d+) of (\d+) converged\)", block)
        g["adds_converged"], g["adds"] = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        m = re.search(r"settled after churn: (\w+)", block)
        g["settled"] = m.group(1) if m else None
        m = re.search(r"false negatives: (\d+) of (\d+) sampled.*? at (\d+) live nodes", block)
        g["false_neg"], g["checks"], g["live"] = (
            [int(x) for x in m.groups()] if m else (None, None, None))
        g["wall_s"] = num(r"wall time ([\d.]+) s", block)
        large.append(g)
    return small, large


def parse_classic(text):
    out = []
    for r in rows(text):
        if len(r) >= 8:
            out.append({"hash": r[0], "m": int(r[1]), "n": int(r[2]), "k": int(r[3]),
                        "fpr": float(r[4]), "theory": float(r[5]), "stderr": float(r[6]),
                        "ns": float(r[7])})
    return out


# --- Report sections -------------------------------------------------------------------------


def parse_rest_cost(text):
    """rest_cost_bench's table rows: per N, frames/s and bytes/s per node (median, max)."""
    out = []
    for line in text.splitlines():
        m = re.match(r"\| (\d+) \| ([\d.]+) / ([\d.]+) \| ([\d.]+) / ([\d.]+) \| ([\d.]+) \|"
                     r" ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (yes|no) \|", line)
        if m:
            out.append({"nodes": int(m.group(1)), "frames": float(m.group(2)),
                        "frames_max": float(m.group(3)), "bytes": float(m.group(4)),
                        "bytes_max": float(m.group(5)), "digests": float(m.group(6)),
                        "deltas": float(m.group(7)), "full": float(m.group(8)),
                        "other": float(m.group(9)), "alive": m.group(10) == "yes"})
    return out


def section_rest_cost(rows_):
    lines = ["## 8. Staying in sync at rest, real daemons", "",
             "`bench/rest_cost_bench.py BUILD_DIR`: N peerbloomd on 127.0.0.1, default gossip "
             "settings, CURVE on, 1,000 URLs per node, nothing changing; 40 s measured after 25 s "
             "settled. Per node and second, median (max) over the nodes. Target: at most 2.5 "
             "frames/s and 1 KB/s per node at every N.", "",
             "| N | frames/s | bytes/s | digests/s | deltas/s | full/s | other/s | all alive "
             "| met |", "|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows_:
        ok = r["frames"] <= 2.5 and r["bytes"] <= 1000
        lines.append("| %d | %.2f (%.2f) | %.0f (%.0f) | %.2f | %.2f | %.3f | %.2f | %s | %s |" % (
            r["nodes"], r["frames"], r["frames_max"], r["bytes"], r["bytes_max"], r["digests"],
            r["deltas"], r["full"], r["other"], "yes" if r["alive"] else "**no**", met(ok)))
    if not rows_:
        lines.append("no rows: rest_cost_bench printed none")
    return lines + [""]


def machine(raw, build_type, compiler):
    cpu = sh("lscpu | sed -n 's/^Model name: *//p' | head -1") or platform.processor()
    caches = sh("lscpu | sed -n 's/^\\(L[123][di]* cache\\): *\\(.*\\)/\\1 \\2/p' | paste -sd ';'")
    mem = sh("free -g | awk '/^Mem:/ {print $2}'")
    osname = sh(". /etc/os-release && echo $PRETTY_NAME")
    virt = sh("lscpu | sed -n 's/^Hypervisor vendor: *//p'")
    thp = sh("cat /sys/kernel/mm/transparent_hugepage/enabled")
    commit = read(raw, "commit", required=False).strip() or sh(
        "git -C '%s' rev-parse --short HEAD" % os.path.dirname(os.path.abspath(__file__)))
    return [
        "CPU: %s, %s cores online%s" % (cpu, os.cpu_count(),
                                        ", virtual machine (%s)" % virt if virt else ""),
        "caches: %s" % caches.replace(";", "; "),
        "memory: %s GiB; transparent huge pages: %s" % (mem, thp),
        "OS: %s, kernel %s" % (osname, platform.release()),
        "compiler: %s; build type %s (its own build directory)" % (compiler, build_type),
        "source: commit %s; report generated %s UTC; load average (1 min) at the build's "
        "start %s, after the last benchmark %s"
        % (commit, datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"),
           read(raw, "load-start", required=False).strip() or "n/a",
           read(raw, "load-end", required=False).strip() or "%.1f" % os.getloadavg()[0]),
    ]


def cmake_cache(raw, key):
    try:
        with open(os.path.join(raw, "..", "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return "?"


def section_ops(core):
    dram = core.get(("dram_load_4k_pages", "-", 1024)) or next(
        (v for (k, _, _), v in core.items() if k == "dram_load_4k_pages"), None)
    huge = next((v for (k, _, _), v in core.items() if k == "dram_load_huge_pages"), None)
    end = next((v for (k, _, _), v in core.items() if k == "dram_load_4k_pages_end"), None)
    mib = next((n for (k, _, n) in core if k == "dram_load_4k_pages"), 1024)
    ns_list = sorted({n for (k, p, n) in core if p in PROFILES})
    out = ["## 1. Counting filter and summary operations next to one random DRAM access", ""]
    out.append("One random DRAM access, a dependent load in a pointer chase over %d MiB (one "
               "random cycle through its 64-byte lines): **%s ns** on 4 KiB pages (%s ns when "
               "measured again at the end of this benchmark), **%s ns** on a buffer advised "
               "MADV_HUGEPAGE (fewer TLB misses). hash16 (SipHash-1-3-128 of a 16-byte key, not "
               "included in the operations below): %s ns."
               % (mib, fmt(dram), fmt(end), fmt(huge),
                  fmt(next((v for (k, _, _), v in core.items() if k == "hash16"), None))))
    out.append("")
    ops = [("cbf_add", "add"), ("cbf_remove", "remove"),
           ("cbf_may_contain_present", "may-contain (held)"),
           ("cbf_may_contain_absent", "may-contain (absent)"),
           ("cbf_may_contain_batch_absent", "may-contain batch of 256, per key (absent)")]
    head = "| operation (ns per key, median) |"
    sep = "|---|"
    cols = [(p, n) for n in ns_list for p in PROFILES]
    for p, n in cols:
        head += " %s n=%s |" % (p, "1e%d" % len(str(n)[1:]))
        sep += "---:|"
    out += [head, sep]

    def line(label, key, spec="%.1f", scale=1.0):
        s = "| %s |" % label
        for p, n in cols:
            v = core.get((key, p, n))
            s += " %s |" % fmt(None if v is None else v * scale, spec)
        return s

    out.append(line("counters k", "cbf_k", "%.0f"))
    out.append(line("counter memory (MiB)", "cbf_mib", "%.0f"))
    for key, label in ops:
        out.append(line(label, key))
    out.append(line("local FPR measured (%)", "cbf_fpr", "%.3f", 100))
    out.append(line("summary size (log2 bits)", "summary_log2_bits", "%.0f"))
    for key, label in (("summary_build", "summary build: project counters (ms)"),
                       ("summary_fold", "summary fold to half (ms)"),
                       ("summary_encode", "summary encode, smallest body (ms)"),
                       ("summary_decode", "summary decode (ms)")):
        out.append(line(label, key, "%.2f"))
    out.append(line("encoded summary (KiB)", "summary_bytes", "%.0f", 1 / 1024))
    out.append("")
    checks = []
    top = max(ns_list) if ns_list else None
    for p in PROFILES:
        vals = [core.get((k, p, top)) for k, _ in ops[:4]]
        if dram is None or None in vals:
            continue
        worst = max(vals)
        checks.append("| %s, n=1e7: slowest one-key operation within %.1f x one DRAM access | "
                      "%.1f ns = %.2f x %.1f ns (4 KiB pages); %.2f x %s ns (huge pages) | %s |"
                      % (p, DRAM_FACTOR, worst, worst / dram, dram,
                         worst / huge if huge else float("nan"), fmt(huge),
                         "yes" if worst <= DRAM_FACTOR * dram else "**no**"))
    if checks:
        out += ["| target | measured | met |", "|---|---|---|"] + checks + [""]
    out.append("Filters from ChooseGeometry(profile, n, 1 %), holding n random 16-byte keys; keys "
               "hashed in advance; add and remove keep the filter within 2 % of n. The one-key "
               "operations are independent, so the CPU overlaps several misses: a figure below "
               "one DRAM access is possible and means that overlap. The target is checked "
               "against the 4 KiB-page figure, the pages a std::vector of counters gets.")
    return out, dram, huge


def section_who_has(wh, pi):
    out = ["## 2. who-has in-process: peer index against a per-peer scan", ""]
    out.append("| %s | one key at a time | WhoHasBatch (local prefetched) | WhoHasBatch (local and "
               "index prefetched) | local filter only: one / batch |" % "who_has_bench")
    out.append("|---|---:|---:|---:|---:|")
    out.append("| %s keys here, %s peers of %s keys (ns/key) | %s | %s | %s | %s / %s |"
               % (fmt(wh["keys"], "%.0f"), fmt(wh["peers"], "%.0f"), fmt(wh["keys"], "%.0f"),
                  fmt(wh["single"]), fmt(wh["batch_local"]), fmt(wh["batch_full"]),
                  fmt(wh["local_single"]), fmt(wh["local_batch"])))
    out.append("")
    out.append("| peer_index_bench (ns/query, median) | peers x keys | PeerIndex | scan of every "
               "peer's filter | speed-up | PeerIndex batch of 4096 |")
    out.append("|---|---|---:|---:|---:|---:|")
    for name, r in pi.items():
        speed = r["scan"] / r["index"] if r["scan"] and r["index"] else None
        out.append("| %s (k=%d) | %s x %s | %s | %s | %sx | %s |"
                   % (name, r["k"], fmt(r["peers"], "%.0f"), fmt(r["keys"], "%.0f"),
                      fmt(r["index"]), fmt(r["scan"]), fmt(speed), fmt(r["batch"])))
    out.append("")
    return out


SOCKET_P50_BELOW = "one unpipelined Redis GETBIT round trip"
SOCKET_BATCHED_MIN = 5e6  # keys/s
SOCKET_OVER_REDIS = 10.0  # x Redis's pipelined keys/s for one k = 7 filter


def section_control(ctl, rd):
    out = ["## 3. who-has through the who-has socket and the control endpoint, next to a "
           "shared Redis bitmap", ""]
    expect("control_bench.sh", ctl, CONTROL_FIGURES)
    expect("redis_bitmap_bench.sh", rd, ["getbit_rtt_p50", "single_1_p50", "single_16_p50",
                                         "pipelined_keys_per_s_1", "pipelined_keys_per_s_16"])

    def us(v):
        return fmt(v) + " us" if v is not None else "n/a"

    def lat(prefix):
        return " | ".join(us(ctl.get(prefix + q)) for q in ("p50", "p99", "p999"))

    keys = ctl.get("keys")
    out.append("| design (control_bench.sh, daemon holding %s URLs) | one key per request: p50 "
               "| p99 | p99.9 | batched / pipelined keys/s |" % fmt(keys, "%.0f"))
    out.append("|---|---:|---:|---:|---:|")
    out.append("| peerbloom who-has socket (unix socket, `who_has_socket`) | %s | %s |"
               % (lat("socket_single_"), fmt(ctl.get("socket_batched_keys_per_s"), "%.0f")))
    out.append("| peerbloom control endpoint (ZeroMQ) | %s | %s |"
               % (lat("zmq_single_"), fmt(ctl.get("zmq_batched_keys_per_s"), "%.0f")))
    out.append("| Redis: one GETBIT, unpipelined round trip; pipelined: one k=7 filter (7 GETBITs "
               "per key) | %s | %s |"
               % (lat("redis_getbit_"), fmt(ctl.get("redis_pipelined_keys_per_s_1"), "%.0f")))
    out.append("| Redis: pipelined, 16 per-peer k=7 filters (112 GETBITs per key) | | | | %s |"
               % fmt(ctl.get("redis_pipelined_keys_per_s_16"), "%.0f"))
    out.append("")

    sock_p50, redis_p50 = ctl.get("socket_single_p50"), ctl.get("redis_getbit_p50")
    batched, redis_1 = ctl.get("socket_batched_keys_per_s"), ctl.get("redis_pipelined_keys_per_s_1")
    over = ratio(batched, redis_1)
    out += ["| target | measured | met |", "|---|---|---|"]
    out.append("| who-has socket, one key per request: p50 below %s (the same run, in turn) | "
               "%s against %s | %s |"
               % (SOCKET_P50_BELOW, us(sock_p50), us(redis_p50),
                  met(None if sock_p50 is None or redis_p50 is None else sock_p50 < redis_p50)))
    out.append("| who-has socket, batched: >= %.0f M keys/s | %s M keys/s | %s |"
               % (SOCKET_BATCHED_MIN / 1e6, fmt(None if batched is None else batched / 1e6,
                                                 "%.2f"),
                  met(None if batched is None else batched >= SOCKET_BATCHED_MIN)))
    out.append("| who-has socket, batched: >= %.0f x Redis pipelined for one k=7 filter, the same "
               "keys | %s x (%s against %s keys/s) | %s |"
               % (SOCKET_OVER_REDIS, fmt(over), fmt(batched, "%.0f"), fmt(redis_1, "%.0f"),
                  met(None if over is None else over >= SOCKET_OVER_REDIS)))
    out.append("")
    out.append("control_bench.sh: one daemon on 127.0.0.1 holding the URLs http://bench.example/0 "
               "..., Debian's redis-server on 127.0.0.1 (no persistence, one connection) holding "
               "the same URLs' k = 7 probes in a bit string. Single keys: %s requests in %s "
               "rounds, the who-has socket, the control endpoint and Redis GETBIT in turn; each "
               "figure is the median over the rounds of that round's percentile. Batched: %s "
               "URLs per request, median of %s requests (`peerbloom bench`; client busy poll "
               "%s us); Redis pipelined with 1000 GETBITs in flight, keys/s = GETBITs/s / 7 "
               "(%s GETBITs/s). Adding the URLs through `peerbloom add -` took %s ms."
               % (fmt(ctl.get("single_requests"), "%.0f"), fmt(ctl.get("rounds"), "%.0f"),
                  fmt(ctl.get("batch_size"), "%.0f"), fmt(ctl.get("batches"), "%.0f"),
                  fmt(ctl.get("busy_poll_us"), "%.0f"),
                  fmt(ctl.get("redis_pipelined_getbits_per_s"), "%.0f"),
                  fmt(ctl.get("added_ms"), "%.0f")))
    out.append("")

    def q(prefix):
        return " | ".join(us(rd.get(prefix + suf)) for suf in ("_p50", "_p99", "_p999"))

    out.append("| shared Redis bitmap (redis_bitmap_bench.sh, its own step) | one key: p50 | p99 "
               "| p99.9 | pipelined |")
    out.append("|---|---:|---:|---:|---:|")
    out.append("| one GETBIT, unpipelined round trip | %s | %s GETBITs/s |"
               % (q("getbit_rtt"), fmt(rd.get("pipelined_getbits_per_s_1"), "%.0f")))
    out.append("| one k=7 filter (7 GETBITs per key, sent together) | %s | %s keys/s |"
               % (q("single_1"), fmt(rd.get("pipelined_keys_per_s_1"), "%.0f")))
    out.append("| 16 per-peer k=7 filters (112 GETBITs per key) | %s | %s keys/s |"
               % (q("single_16"), fmt(rd.get("pipelined_keys_per_s_16"), "%.0f")))
    out.append("")
    out.append("redis_bitmap_bench.sh: redis-server %s, its own server at a random free port, "
               "the same URLs; pipelined runs of 1000 keys' GETBITs written at once (%s "
               "GETBITs/s with 16 filters). A pipelined Bloom lookup sends all k GETBITs of "
               "every filter; one round trip per GETBIT instead would cost about k x the round "
               "trip per filter."
               % (rd.get("version", "?"), fmt(rd.get("pipelined_getbits_per_s_16"), "%.0f")))
    out.append("")
    return out


def section_sweep(sweeps, absent, out_dir):
    out = ["## 4. Wire bits per key at 1 % over two octaves of n", ""]
    # Filters are sized for a formula FPR below 1 % (the design margin the sweep states), so
    # the strict column is the target. The looser one, for information, allows Z standard
    # errors of a binomial proportion over the absent keys above 1 %.
    tol = Z * math.sqrt(0.01 * 0.99 / absent) * 100 if absent else 0.0
    checks = []
    for prof in ("wire-lean", "balanced"):
        pts = sweeps.get(prof, [])
        if not pts:
            out.append("%s: not measured" % prof)
            continue
        worst = max(p["exact_bpk"] for p in pts)
        fpr = max(p["exact_fpr"] for p in pts)
        over = sum(p["exact_fpr"] > 1.0 for p in pts)
        strict = worst <= TARGET_BPK[prof] and fpr <= 1.0
        loose = worst <= TARGET_BPK[prof] and fpr <= 1.0 + tol
        checks.append("| %s: exact sizes, bits/key <= %.1f and FPR <= 1 %% at every n (%d..%d) | "
                      "max %.3f bits/key, max FPR %.4f %% (%d of %d points above 1 %%) | %s | "
                      "%s |" % (prof, TARGET_BPK[prof], pts[0]["n"], pts[-1]["n"], worst, fpr,
                                over, len(pts), "yes" if strict else "**no**",
                                "yes" if loose else "**no**"))
    out += ["| target | measured | met, strictly | met within %.3f points (%.2f standard errors "
            "over %d absent keys) |" % (tol, Z, absent or 0), "|---|---|---|---|"] + checks + [""]
    out.append("| n | wire-lean exact m | bits/key | FPR % | wire-lean 2^j | bits/key | balanced "
               "exact m | bits/key | FPR % | balanced 2^j | bits/key |")
    out.append("|---:|---|---:|---:|---|---:|---|---:|---:|---|---:|")
    wl, bl = sweeps.get("wire-lean", []), sweeps.get("balanced", [])
    for a, b in zip(wl, bl):
        out.append("| %d | %s | %.3f | %.4f | %s | %.3f | %s | %.3f | %.4f | %s | %.3f |"
                   % (a["n"], a["exact_m"], a["exact_bpk"], a["exact_fpr"], a["pow2_m"],
                      a["pow2_bpk"], b["exact_m"], b["exact_bpk"], b["exact_fpr"], b["pow2_m"],
                      b["pow2_bpk"]))
    out.append("")
    design = next((p[0]["design_fpr"] for p in (wl, bl) if p and p[0].get("design_fpr")), None)
    out.append("Each point: a node whose counting filter is sized for n keys (ChooseGeometry, "
               "`filter_sizes = \"exact\"` against `\"power-of-two\"`%s) holds n keys and "
               "encodes its summary with the smallest body; the receiver decodes it and the FPR "
               "is measured on %s absent keys. For reference: an optimal Bloom filter needs "
               "%.2f bits/key at 1 %%, the bound log2(1/p) is %.2f."
               % ("" if design is None else ", the smallest size whose formula FPR is at most "
                  "%.2f %%: a design margin below the 1 %% target" % design,
                  "n/a" if absent is None else "%d" % absent, OPTIMAL_BLOOM, BOUND))
    out.append("")
    out.append("![wire bits per key](bench-wire-bits.png)")
    out.append("")
    if wl or bl:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for pts, color, name in ((wl, "C0", "wire-lean"), (bl, "C1", "balanced")):
            if not pts:
                continue
            ax.plot([p["n"] for p in pts], [p["exact_bpk"] for p in pts], "o-", color=color,
                    label="%s, exact sizes" % name)
            ax.plot([p["n"] for p in pts], [p["pow2_bpk"] for p in pts], "s--", color=color,
                    mfc="none", label="%s, power-of-two sizes" % name)
            ax.axhline(TARGET_BPK[name], color=color, lw=0.8, ls=":",
                       label="%s target %.1f" % (name, TARGET_BPK[name]))
        ax.axhline(OPTIMAL_BLOOM, color="k", lw=1,
                   label="optimal Bloom filter %.2f" % OPTIMAL_BLOOM)
        ax.axhline(BOUND, color="k", lw=1, ls="--", label="bound log2(1/p) %.2f" % BOUND)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("keys n (log scale)")
        ax.set_ylabel("wire bits per key at 1 % target")
        ax.set_title("Summary size on the wire over two octaves of n")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "bench-wire-bits.png"), dpi=110)
        plt.close(fig)
    return out


def section_delta(profiles):
    out = ["## 5. Delta bytes per changed key", ""]
    out.append("| profile | k | n | full summary bits/key | delta bytes per changed key | flipped "
               "bits per changed key | publish of the delta (ms) | summary FPR % |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for p in PROFILES:
        r = profiles.get(p)
        if r:
            out.append("| %s | %d | %d | %s | %s | %s | %s | %s |"
                       % (p, r["k"], r["n"], fmt(r["full_bpk"], "%.2f"),
                          fmt(r["delta_bytes_per_key"], "%.2f"), fmt(r["flips_per_key"], "%.2f"),
                          fmt(r["publish_ms"], "%.2f"), fmt(r["fpr"], "%.3f")))
    out.append("")
    out.append("1 % of the n keys change (0.5 % leave, as many arrive) between two publications; "
               "the delta is encoded, decoded and applied by a receiver, whose filter must then "
               "equal the sender's; median of 5 rounds (summary_bench).")
    out.append("")
    return out


ADD_MEDIAN_MAX = 1.0  # gossip intervals until an add is visible at every live node
ADD_MAX_MAX = 3.0
BUSIEST_OVER_MEDIAN_MAX = 2.0


def section_gossip(small, large):
    out = ["## 6. Gossip convergence and bytes (simulated cluster)", ""]
    if not small and not large:
        warn("gossip_sim_bench: no cluster found")
    for g in small:
        expect("gossip_sim_bench, %d nodes" % g["nodes"], g)
    out.append("| nodes | keys/node | join (s simulated) | bytes/s per node: median / mean / max "
               "| of which deltas / digests / full | add visible everywhere: median / max "
               "(gossip intervals) | false negatives | wall s |")
    out.append("|---:|---:|---:|---|---|---|---:|---:|")
    for g in small:
        out.append("| %d | %d | %s | %s / %s / %s | %s / %s / %s | %s / %s | %s | %s |"
                   % (g["nodes"], g["keys"], fmt(g["join_s"]), fmt(g["bytes_median"], "%.0f"),
                      fmt(g["bytes_mean"], "%.0f"), fmt(g["bytes_max"], "%.0f"),
                      fmt(g["deltas"], "%.0f"), fmt(g["digests"], "%.0f"),
                      fmt(g["full"], "%.0f"), fmt(g["conv_median"], "%.2f"),
                      fmt(g["conv_max"], "%.2f"), fmt(g["false_neg"], "%.0f"),
                      fmt(g["wall_s"])))
    out.append("")
    out.append("gossip_sim_bench: GossipEngines on an in-memory network (2 ms latency, fake "
               "clock, 1 s gossip interval, fanout 4), 1 % churn per minute per node.")
    out.append("")
    if not large:
        warn("gossip_sim_bench: no large cluster under churn and loss found")
        return out + ["Large cluster under churn and loss: not measured", ""]
    for g in large:
        expect("gossip_sim_bench, large cluster of %d nodes" % g["nodes"], g)
    out.append("| large cluster: nodes (seeds) | keys/node | frames lost | churn: failures / "
               "restarts / joins | join (s simulated) | bytes/s per node: median / p99 / max | "
               "busiest / median: node, seed | of which deltas / digests / full / prune+graft | "
               "add visible at every live node: median / p90 / max (gossip intervals) | adds "
               "converged | settled | false negatives / checks | wall s |")
    out.append("|---:|---:|---:|---|---:|---|---|---|---|---|---|---|---:|")
    for g in large:
        out.append("| %d (%d) | %s | %s %% | %s / %s / %s | %s | %s / %s / %s | %s (%s), %s | "
                   "%s / %s / %s / %s | %s / %s / %s | %s of %s | %s | %s / %s | %s |"
                   % (g["nodes"], g["seeds"], fmt(g["keys"], "%.0f"), fmt(g["loss_pct"], "%.0f"),
                      fmt(g["failures"], "%d"), fmt(g["restarts"], "%d"), fmt(g["joins"], "%d"),
                      fmt(g["join_s"]), fmt(g["bytes_median"], "%.0f"),
                      fmt(g["bytes_p99"], "%.0f"), fmt(g["bytes_max"], "%.0f"),
                      fmt(g["busiest_over_median"], "%.2f"), g["busiest"] or "n/a",
                      fmt(g["seed_over_median"], "%.2f"), fmt(g["deltas"], "%.0f"),
                      fmt(g["digests"], "%.0f"), fmt(g["full"], "%.0f"),
                      fmt(g["prune_graft"], "%.0f"), fmt(g["add_median"], "%.2f"),
                      fmt(g["add_p90"], "%.2f"), fmt(g["add_max"], "%.2f"),
                      fmt(g["adds_converged"], "%d"), fmt(g["adds"], "%d"),
                      g["settled"] or "n/a", fmt(g["false_neg"], "%d"), fmt(g["checks"], "%d"),
                      fmt(g["wall_s"])))
    out.append("")
    out += ["| target (large cluster) | measured | met |", "|---|---|---|"]
    for g in large:
        med, top, busy = g["add_median"], g["add_max"], g["busiest_over_median"]
        out.append("| %d nodes: an add visible at every live node within a median of %.0f "
                   "gossip interval | median %s | %s |"
                   % (g["nodes"], ADD_MEDIAN_MAX, fmt(med, "%.2f"),
                      met(None if med is None else med <= ADD_MEDIAN_MAX)))
        out.append("| %d nodes: ... and at most %.0f gossip intervals | max %s | %s |"
                   % (g["nodes"], ADD_MAX_MAX, fmt(top, "%.2f"),
                      met(None if top is None else top <= ADD_MAX_MAX)))
        out.append("| %d nodes: the busiest node's bytes/s (seeds included) <= %.0f x the "
                   "median node's | %s x (%s; median %s bytes/s) | %s |"
                   % (g["nodes"], BUSIEST_OVER_MEDIAN_MAX, fmt(busy, "%.2f"),
                      g["busiest"] or "n/a", fmt(g["bytes_median"], "%.0f"),
                      met(None if busy is None else busy <= BUSIEST_OVER_MEDIAN_MAX)))
    out.append("")
    g = large[0]
    out.append("The large cluster (tests/support/large_sim.h): %d nodes in all (those "
               "that join under churn included), every one listing the same %d seeds; %s %% of "
               "frames lost; a failure, a restart in a new epoch or a join every %s s; one key "
               "replaced per node every %s s. bytes/s per node over %s s: median, p99 and max "
               "of the %s non-seed nodes up throughout (seeds apart: median %s, max %s); the "
               "busiest node, seeds included, over that median. An add is timed until every "
               "node live when it was published (and still live) lists it. The benchmark "
               "fails when the cluster does not settle, an add does not converge or a false "
               "negative is found (%s live nodes at the end)."
               % (g["nodes"], g["seeds"], fmt(g["loss_pct"], "%.0f"),
                  fmt(g["churn_every_s"]), fmt(g["replace_every_s"], "%.0f"),
                  fmt(g["measure_s"], "%.0f"), fmt(g["steady_nodes"], "%.0f"),
                  fmt(g["seed_median"], "%.0f"), fmt(g["seed_max"], "%.0f"),
                  fmt(g["live"], "%d")))
    out.append("")
    return out


def section_classic(cl, out_dir):
    out = ["## 7. Classic string hashes against peerbloom's keyed hash: measured FPR", ""]
    if not cl:
        warn("classic_hash_fpr_bench: no row found")
        return out + ["not measured", ""]
    sizes = sorted({r["m"] for r in cl}, reverse=True)
    names = [r["hash"] for r in cl if r["m"] == sizes[0]]
    by = {(r["hash"], r["m"]): r for r in cl}
    head = "| hash |"
    sep = "|---|"
    for m in sizes:
        head += " FPR %% at m=%d | x theory | ns/URL |" % m
        sep += "---:|---:|---:|"
    out += [head, sep]
    for h in names:
        s = "| %s |" % h
        for m in sizes:
            r = by.get((h, m))
            s += (" %.3f +- %.3f | %.2f | %.0f |" % (100 * r["fpr"], 100 * r["stderr"],
                                                     r["fpr"] / r["theory"], r["ns"])
                  if r else " n/a | | |")
        out.append(s)
    theory = ", ".join("%.3f %% at m=%d" % (100 * by[(names[0], m)]["theory"], m) for m in sizes)
    out.append("| theory (1 - e^(-kn/m))^k | %s |" % theory + " |" * (3 * len(sizes) - 1))
    out.append("")
    r0 = cl[0]
    # The probes, from a row's standard error sqrt(p (1 - p) / probes), to two digits.
    r1 = max(cl, key=lambda r: r["fpr"])
    probes = r1["fpr"] * (1 - r1["fpr"]) / r1["stderr"] ** 2 if r1["stderr"] else None
    if probes:
        e = int(math.floor(math.log10(probes)))
        probes = "%ge%d" % (round(probes / 10 ** (e - 1)) / 10, e)
    out.append("n = %d URLs added, k = %d, the same for every hash; FPR over %s never-added URLs "
               "(+- one standard error). String hashes: position i = H(salt_i || URL) mod m; "
               "CRC32+draws: CRC-32 seeds a Park-Miller generator, k draws mod m; CRC32+double: "
               "its first two draws drive double hashing; peerbloom: SipHash-1-3-128 keyed, "
               "double hashing (lib/hash, bloom_probe.h). ns/URL: computing the k positions "
               "(the string hashes hash the URL k times; peerbloom: the one 128-bit hash). URLs: "
               "numbered objects on one origin, CDN assets, dated article pages "
               "(bench/classic_hash_fpr_bench.cc)."
               % (r0["n"], r0["k"], probes or "?"))
    out.append("")
    out.append("![classic hashes FPR](bench-classic-hash-fpr.png)")
    out.append("")
    fig, ax = plt.subplots(figsize=(7.6, 4.2))
    width = 0.8 / len(sizes)
    for j, m in enumerate(sizes):
        xs = [i + (j - (len(sizes) - 1) / 2) * width for i in range(len(names))]
        ys = [100 * by[(h, m)]["fpr"] for h in names]
        es = [100 * by[(h, m)]["stderr"] for h in names]
        ax.bar(xs, ys, width, yerr=es, color="C%d" % j, label="m = %d" % m)
        ax.hlines(100 * by[(names[0], m)]["theory"], -0.5, len(names) - 0.5, colors="C%d" % j,
                  linestyles=":", label="theory at m = %d" % m)
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("measured false-positive rate (%)")
    ax.set_title("Same URLs, n = %d, k = %d: classic string hashes and peerbloom"
                 % (r0["n"], r0["k"]))
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "bench-classic-hash-fpr.png"), dpi=110)
    plt.close(fig)
    return out


def plot_ops(core, dram, huge, out_dir):
    ops = [("cbf_add", "add"), ("cbf_remove", "remove"), ("cbf_may_contain_present", "has (held)"),
           ("cbf_may_contain_absent", "has (absent)"),
           ("cbf_may_contain_batch_absent", "has, batch")]
    ns_list = sorted({n for (k, p, n) in core if p in PROFILES})
    if not ns_list:
        return
    fig, ax = plt.subplots(figsize=(7.6, 4.2))
    groups = [(p, n) for n in ns_list for p in PROFILES]
    width = 0.8 / len(ops)
    for j, (key, label) in enumerate(ops):
        xs = [i + (j - (len(ops) - 1) / 2) * width for i in range(len(groups))]
        ax.bar(xs, [core.get((key, p, n), 0) for p, n in groups], width, label=label)
    if dram:
        ax.axhline(dram, color="k", lw=1, label="one DRAM access (4 KiB pages)")
        ax.axhline(DRAM_FACTOR * dram, color="k", lw=1, ls="--",
                   label="%.1f x DRAM access" % DRAM_FACTOR)
    if huge:
        ax.axhline(huge, color="0.5", lw=1, ls=":", label="one DRAM access (huge pages)")
    ax.set_xticks(range(len(groups)),
                  ["%s\nn=1e%d" % (p, len(str(n)) - 1) for p, n in groups], fontsize=7)
    ax.set_ylabel("ns per key (median)")
    ax.set_title("Counting filter operations against one random DRAM access")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "bench-filter-ops.png"), dpi=110)
    plt.close(fig)


def guarded(title, section, *args):
    """section(*args), or when it raises, its traceback on stderr and a line saying so in the
    report: one broken parser or section does not cost the others."""
    try:
        return section(*args)
    except Exception:  # noqa: BLE001 - any failure of one section
        traceback.print_exc()
        FAILED.append(title)
        return ["## " + title, "", "not reported: scripts/bench_report.py failed on this section "
                "(its traceback went to stderr)", ""]


def parsed(what, parser, text, empty):
    """parser(text), or `empty` with its traceback on stderr when it raises."""
    try:
        return parser(text)
    except Exception:  # noqa: BLE001 - any failure of one parser
        traceback.print_exc()
        FAILED.append(what)
        return empty


def check_core(core):
    ns_list = sorted({n for (k, p, n) in core if p in PROFILES})
    for key in ("dram_load_4k_pages", "dram_load_huge_pages", "hash16"):
        if not any(k == key for (k, _, _) in core):
            warn("core_ops_bench: '%s' not found (n/a)" % key)
    if not ns_list:
        warn("core_ops_bench: no filter operation found")
    for n in ns_list:
        for p in PROFILES:
            for key in ("cbf_add", "cbf_remove", "cbf_may_contain_present",
                        "cbf_may_contain_absent", "cbf_may_contain_batch_absent",
                        "summary_build", "summary_fold", "summary_encode", "summary_decode"):
                if (key, p, n) not in core:
                    warn("core_ops_bench: '%s' for %s n=%d not found (n/a)" % (key, p, n))


def check_summary(profiles, sweeps):
    for p in PROFILES:
        if p not in profiles:
            warn("summary_bench: profile %s not found" % p)
        else:
            expect("summary_bench, %s" % p, profiles[p])
    for p in ("wire-lean", "balanced"):
        if not sweeps.get(p):
            warn("summary_bench: the %s sweep not found" % p)


def ops_section(core, out_dir):
    ops, dram, huge = section_ops(core)
    plot_ops(core, dram, huge, out_dir)
    return ops + ["", "![filter operations](bench-filter-ops.png)", ""]


def who_has_section(wh, pi):
    expect("who_has_bench", wh)
    if not pi:
        warn("peer_index_bench: no profile found")
    for name, r in pi.items():
        expect("peer_index_bench, %s" % name, r)
    return section_who_has(wh, pi)


def guard(title, section):
    return lambda *args: guarded(title, section, *args)


section_sweep = guard("4. Wire bits per key", section_sweep)


def main():
    raw, out_dir, elapsed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    core = parsed("core_ops_bench", parse_core, read(raw, "core_ops"), {})
    check_core(core)
    profiles, sweeps = parsed("summary_bench", parse_summary, read(raw, "summary"), ({}, {}))
    check_summary(profiles, sweeps)
    build_type = cmake_cache(raw, "CMAKE_BUILD_TYPE")
    compiler = sh("'%s' --version | head -1" % cmake_cache(raw, "CMAKE_CXX_COMPILER"))
    lines = ["# Benchmark report", ""]
    lines.append("Written by `make bench` (scripts/bench.sh, scripts/bench_report.py); "
                 "docs/benchmarks.md says how to run it and what each figure means. All figures "
                 "come from one run on one machine; times are medians. The machine is a shared "
                 "2-core virtual machine on which other people build and test at the same "
                 "time, so latencies, tails above all, carry that noise: compare figures within "
                 "this report rather than with another machine's.")
    lines.append("")
    lines += ["- " + m for m in machine(raw, build_type, compiler)]
    steps = [("build", "build"), ("core_ops", "filter ops"), ("who_has", "who-has"),
             ("peer_index", "peer index"), ("control", "control endpoint"), ("redis", "Redis"),
             ("summary", "summaries and sweeps"), ("gossip", "gossip"),
             ("classic_hash", "classic hashes"), ("rest_cost", "real daemons at rest")]
    lines.append("- wall time: %d s in all (install excluded): %s"
                 % (elapsed, ", ".join("%s %s s" % (label, fmt(seconds(raw, s), "%d"))
                                       for s, label in steps)))
    lines.append("")
    lines += guarded("1. Counting filter and summary operations", ops_section, core, out_dir)
    lines += guarded("2. who-has in-process",
                     lambda: who_has_section(parse_who_has(read(raw, "who_has")),
                                             parse_peer_index(read(raw, "peer_index"))))
    lines += guarded("3. who-has through the who-has socket and the control endpoint",
                     lambda: section_control(parse_control(read(raw, "control")),
                                             parse_redis(read(raw, "redis"))))
    absent = next((p[0]["absent"] for p in sweeps.values() if p and p[0]["absent"]), None)
    if absent is None:  # an older summary_bench: its per-profile count
        absent = num(r"over (\d+) absent keys", read(raw, "summary"))
    lines += section_sweep(sweeps, int(absent) if absent else None, out_dir)
    lines += guarded("5. Delta bytes per changed key", section_delta, profiles)
    lines += guarded("6. Gossip convergence and bytes",
                     lambda: section_gossip(*parse_gossip(read(raw, "gossip"))))
    lines += guarded("7. Classic string hashes",
                     lambda: section_classic(parse_classic(read(raw, "classic_hash")), out_dir))
    lines += guarded("8. Staying in sync at rest, real daemons",
                     lambda: section_rest_cost(parse_rest_cost(read(raw, "rest_cost"))))
    text = "\n".join(lines).rstrip() + "\n"
    with open(os.path.join(out_dir, "bench.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    if WARNINGS:
        sys.stderr.write("bench_report: %d warnings above: those figures show as n/a\n"
                         % len(WARNINGS))
    if FAILED:
        sys.stderr.write("bench_report: error: not reported (tracebacks above): %s\n"
                         % "; ".join(FAILED))
        sys.exit(1)


if __name__ == "__main__":
    main()
