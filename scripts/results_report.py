#!/usr/bin/env python3
"""Turns summary_cache_sim's rows (docs/results/*.tsv) into summary-cache.md and PNG plots.

Usage: results_report.py OUT_DIR "ZIPF FLAGS" ZIPF_SECONDS LOG_SECONDS   (scripts/results.sh)
"""
import csv
import datetime
import math
import os
import platform
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Tolerance of the false-hit check: the measured rate may exceed the target by at most
# Z standard errors of a binomial proportion over the (miss, non-holder) pairs measured
# (one-sided 99.9 %).
Z = 3.09


def rows(path):
    with open(path) as f:
        return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f, delimiter="\t")]


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def machine(zipf_s, log_s):
    cpu = sh("lscpu | sed -n 's/^Model name: *//p' | head -1") or platform.processor()
    mem = sh("free -g | awk '/^Mem:/ {print $2}'")
    osname = sh(". /etc/os-release && echo $PRETTY_NAME")
    cxx = sh("c++ --version | head -1")
    commit = sh("git -C '%s' rev-parse --short HEAD" % os.path.dirname(os.path.abspath(__file__)))
    return [
        "CPU: %s, %s cores online" % (cpu, os.cpu_count()),
        "memory: %s GiB" % mem,
        "OS: %s, kernel %s" % (osname, platform.release()),
        "compiler: %s (RelWithDebInfo)" % cxx,
        "source: commit %s; generated %s UTC"
        % (commit, datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")),
        "wall time of the simulations: %s s (Zipf) + %s s (access.log), one core each, "
        "load average %.1f at the end" % (zipf_s, log_s, os.getloadavg()[0]),
    ]


def pct(x):
    return "%.2f" % (100 * x)


def table(rs):
    head = (
        "| N | hit % ICP | hit % peerbloom | hit % oracle | remote hit % ICP | remote hit % "
        "peerbloom | delay misses % | false hits / req | false-hit rate measured | "
        "estimated FPR | msgs/req ICP | msgs/req peerbloom | ICP / peerbloom | bytes/req ICP | "
        "bytes/req peerbloom | summaries KiB/node | CBF KiB/node |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = ""
    for r in rs:
        body += (
            "| %d | %s | %s | %s | %s | %s | %s | %.4f | %.3f %% | %.3f %% | %.2f | %.3f | %.1fx "
            "| %.0f | %.0f | %.0f | %.0f |\n"
            % (r["nodes"], pct(r["icp_hit"]), pct(r["pb_hit"]), pct(r["oracle_hit"]),
               pct(r["icp_remote_hit"]), pct(r["pb_remote_hit"]), pct(r["delay_misses_per_req"]),
               r["false_hits_per_req"], 100 * r["measured_fpr"], 100 * r["estimated_fpr"],
               r["icp_msgs_per_req"], r["pb_msgs_per_req"], r["msg_ratio"],
               r["icp_bytes_per_req"], r["pb_bytes_per_req"], r["summary_kib_per_node"],
               r["cbf_kib_per_node"]))
    return head + body


def detail(rs):
    head = ("| N | requests counted | simulated s | summary bits (k) | update msgs/req | "
            "false-hit msgs/req | fetch msgs/req (both) | non-holder pairs | listed: Bloom | "
            "listed: stale |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    body = ""
    for r in rs:
        body += ("| %d | %d | %.0f | 2^%d (%d) | %.4f | %.4f | %.3f | %d | %d | %d |\n"
                 % (r["nodes"], r["requests"], r["sim_seconds"], r["summary_log2_bits"], r["k"],
                    r["pb_update_msgs_per_req"], r["pb_false_hit_msgs_per_req"],
                    r["fetch_msgs_per_req_icp"], r["nonholder_pairs"], r["listed_bloom"],
                    r["listed_stale"]))
    return head + body


def targets(rs):
    r = next((x for x in rs if x["nodes"] == 16), None)
    if r is None:
        return "no N = 16 row\n"
    fpr = r["target_fpr"]
    tol = Z * math.sqrt(fpr * (1 - fpr) / max(1, r["nonholder_pairs"]))
    checks = [
        ("inter-node messages per request: ICP / peerbloom >= 25",
         "%.1fx" % r["msg_ratio"], r["msg_ratio"] >= 25),
        ("total hit ratio within 1 point of ICP's",
         "%.2f %% vs %.2f %% (%+.2f points)" % (100 * r["pb_hit"], 100 * r["icp_hit"],
                                                100 * (r["pb_hit"] - r["icp_hit"])),
         abs(r["pb_hit"] - r["icp_hit"]) <= 0.01),
        ("measured false-hit rate <= target + %.2f standard errors (%.4f %% here)" % (Z, 100 * tol),
         "%.3f %% vs target %.2f %% (estimated %.3f %%)" % (100 * r["measured_fpr"], 100 * fpr,
                                                          100 * r["estimated_fpr"]),
         r["measured_fpr"] <= fpr + tol),
    ]
    out = "| target at N = 16 | measured | met |\n|---|---|---|\n"
    for name, value, ok in checks:
        out += "| %s | %s | %s |\n" % (name, value, "yes" if ok else "**no**")
    return out


def plots(out, zipf, log):
    def n(rs):
        return [r["nodes"] for r in rs]

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for rs, style, name in ((zipf, "-", "Zipf"), (log, "--", "access.log")):
        ax.plot(n(rs), [r["icp_msgs_per_req"] for r in rs], "o" + style, color="C3",
                label="ICP (%s)" % name)
        ax.plot(n(rs), [r["pb_msgs_per_req"] for r in rs], "s" + style, color="C0",
                label="peerbloom (%s)" % name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([4, 8, 16, 32, 64], ["4", "8", "16", "32", "64"])
    ax.set_xlabel("proxies (N)")
    ax.set_ylabel("inter-node protocol messages per request")
    ax.set_title("Messages per request: ICP against peerbloom summaries")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "messages-per-request.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for rs, style, name in ((zipf, "-", "Zipf"), (log, "--", "access.log")):
        ax.plot(n(rs), [100 * r["oracle_hit"] for r in rs], "o" + style, color="C2",
                label="ICP = oracle (%s)" % name)
        ax.plot(n(rs), [100 * r["pb_hit"] for r in rs], "s" + style, color="C0", mfc="none",
                label="peerbloom (%s)" % name)
        ax.plot(n(rs), [100 * r["oracle_remote_hit"] for r in rs], "^" + style, color="C7",
                label="remote share (%s)" % name)
    ax.set_xscale("log", base=2)
    ax.set_xticks([4, 8, 16, 32, 64], ["4", "8", "16", "32", "64"])
    ax.set_xlabel("proxies (N)")
    ax.set_ylabel("hit ratio (%)")
    ax.set_title("Total and remote hit ratio")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "hit-ratio.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for rs, style, name in ((zipf, "-", "Zipf"), (log, "--", "access.log")):
        ax.plot(n(rs), [100 * r["measured_fpr"] for r in rs], "o" + style, color="C0",
                label="measured false-hit rate (%s)" % name)
        ax.plot(n(rs), [100 * r["estimated_fpr"] for r in rs], "x" + style, color="C1",
                label="estimated FPR of summaries (%s)" % name)
    ax.axhline(100 * zipf[0]["target_fpr"], color="C3", lw=1, label="configured target_fpr")
    ax.set_xscale("log", base=2)
    ax.set_xticks([4, 8, 16, 32, 64], ["4", "8", "16", "32", "64"])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("proxies (N)")
    ax.set_ylabel("% of (miss, peer without the object) pairs")
    ax.set_title("False hits against the configured FPR")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "false-hits.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for rs, style, name in ((zipf, "-", "Zipf"), (log, "--", "access.log")):
        ax.plot(n(rs), [r["icp_bytes_per_req"] for r in rs], "o" + style, color="C3",
                label="ICP (%s)" % name)
        ax.plot(n(rs), [r["pb_bytes_per_req"] for r in rs], "s" + style, color="C0",
                label="peerbloom gossip (%s)" % name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([4, 8, 16, 32, 64], ["4", "8", "16", "32", "64"])
    ax.set_xlabel("proxies (N)")
    ax.set_ylabel("protocol bytes per request")
    ax.set_title("Protocol bytes per request")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "bytes-per-request.png"), dpi=110)
    plt.close(fig)


def crossover(rs, n):
    """The rate (requests/s per proxy) above which peerbloom sends fewer messages than ICP at
    N = n, interpolated on a log scale between the two swept rates around it; None if it never
    does, 0 if it always does."""
    pts = sorted((r["rate_per_proxy"], r["pb_msgs_per_req"] / r["icp_msgs_per_req"])
                 for r in rs if r["nodes"] == n)
    if not pts or pts[-1][1] >= 1:
        return None
    if pts[0][1] < 1:
        return 0
    for (r0, q0), (r1, q1) in zip(pts, pts[1:]):
        if q0 >= 1 > q1:
            a, b = math.log(r0), math.log(r1)
            t = (math.log(q0) - 0) / (math.log(q0) - math.log(q1))
            return math.exp(a + t * (b - a))
    return None


def sweep_table(rs):
    head = ("| N | requests/s per proxy | simulated s | msgs/req ICP | msgs/req peerbloom | ICP / "
            "peerbloom | bytes/req ICP | bytes/req peerbloom | ICP / peerbloom (bytes) | hit % ICP "
            "| hit % peerbloom | delay misses % |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    body = ""
    for r in sorted(rs, key=lambda r: (r["nodes"], r["rate_per_proxy"])):
        body += ("| %d | %.3g | %.0f | %.2f | %.3f | %s | %.0f | %.0f | %s | %s | %s | %s |\n"
                 % (r["nodes"], r["rate_per_proxy"], r["sim_seconds"], r["icp_msgs_per_req"],
                    r["pb_msgs_per_req"], ratio(r["msg_ratio"]), r["icp_bytes_per_req"],
                    r["pb_bytes_per_req"], ratio(r["byte_ratio"]), pct(r["icp_hit"]),
                    pct(r["pb_hit"]), pct(r["delay_misses_per_req"])))
    return head + body


def ratio(x):
    return "%.1fx" % x if x >= 1 else "**%.2fx**" % x


def crossovers(rs):
    out = ("| N | peerbloom sends fewer messages than ICP above (requests/s per proxy) |\n"
           "|---:|---:|\n")
    for n in sorted({int(r["nodes"]) for r in rs}):
        c = crossover(rs, n)
        out += "| %d | %s |\n" % (n, "never, in the swept range" if c is None else
                                   "every swept rate" if c == 0 else "%.2g" % c)
    return out


def sweep_plot(out, rs, name, title):
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, n in enumerate(sorted({int(r["nodes"]) for r in rs})):
        pts = sorted((r["rate_per_proxy"], r["pb_msgs_per_req"], r["icp_msgs_per_req"])
                     for r in rs if r["nodes"] == n)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "s-", color="C%d" % i,
                label="peerbloom, N = %d" % n)
        ax.plot([p[0] for p in pts], [p[2] for p in pts], "--", color="C%d" % i,
                label="ICP, N = %d" % n)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("requests per second per proxy")
    ax.set_ylabel("inter-node protocol messages per request")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=110)
    plt.close(fig)


def at(rs, n, rate):
    return min((r for r in rs if r["nodes"] == n),
               key=lambda r: abs(math.log(r["rate_per_proxy"] / rate)), default=None)


def headline(rs):
    out = ("| proxies | msgs/req ICP | msgs/req peerbloom | fewer | hit %% ICP | hit %% peerbloom | "
           "false-hit rate (target %g %%) |\n|---:|---:|---:|---:|---:|---:|---:|\n"
           % (100 * rs[0]["target_fpr"]))
    for r in rs:
        out += "| %d | %.2f | %.3f | %.0fx | %s | %s | %.2f %% |\n" % (
            r["nodes"], r["icp_msgs_per_req"], r["pb_msgs_per_req"], r["msg_ratio"],
            pct(r["icp_hit"]), pct(r["pb_hit"]), 100 * r["measured_fpr"])
    return out


# README.md shows the headline table between these markers; `make results` rewrites it.
BEGIN = "<!-- results:begin (generated by make results) -->"
END = "<!-- results:end -->"


def rates_sentence(sweep):
    if not sweep:
        return ""
    parts = []
    for n in sorted({int(r["nodes"]) for r in sweep}):
        c = crossover(sweep, n)
        parts.append("%s (N = %d)" % ("never" if c is None else "always" if c == 0 else
                                      "%.2g" % c, n))
    text = ("\nOver request rates from 0.01 to 1,000 per second per proxy ([rate sweep]"
            "(docs/results/summary-cache.md#rate-sweep)), peerbloom sends fewer messages than ICP "
            "above about %s requests/s per proxy, and more below: there each node still sends a "
            "ping and an ack every 2 s whatever the traffic (membership and versions ride on "
            "them), and a cache that changes sends a delta to its peers every 2 s at most "
            "(`publish_max_delay`), while ICP pays only per miss."
            % ", ".join(parts))
    gap = max(r["icp_hit"] - r["pb_hit"] for r in sweep)
    delay = max(r["delay_misses_per_req"] for r in sweep)
    text += (" At every swept rate and size its hit ratio is within %.2f points of ICP's, and "
             "delay misses (a peer held the object, no summary said so yet) are at most %.2f %% "
             "of requests." % (100 * gap, 100 * delay))
    r30, r1 = at(sweep, 16, 30), at(sweep, 16, 1)
    if r30 and r1:
        slower = ("%.1fx more" % (1 / r1["msg_ratio"]) if r1["msg_ratio"] < 1 else
                  "%.1fx fewer" % r1["msg_ratio"])
        text += (" At N = 16 it sends %.0fx fewer messages at 30 requests/s per proxy and %s at "
                 "1 request/s." % (r30["msg_ratio"], slower))
    return text + "\n"


def update_readme(readme, zipf, sweep):
    with open(readme) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        return
    a = text.index(BEGIN) + len(BEGIN)
    b = text.index(END)
    body = ("\nSynthetic Zipf stream, 5000-object LRU caches, 50 requests/s per proxy "
            "([all figures](docs/results/summary-cache.md)):\n\n" + headline(zipf) +
            rates_sentence(sweep) + "\n")
    with open(readme, "w") as f:
        f.write(text[:a] + body + text[b:])


def main():
    out, zipf_flags, zipf_s, log_s = sys.argv[1:5]
    zipf = rows(os.path.join(out, "zipf.tsv"))
    log = rows(os.path.join(out, "access-log.tsv"))
    sweep = rows(os.path.join(out, "rates.tsv"))
    sweep_log = rows(os.path.join(out, "rates-access-log.tsv"))
    plots(out, zipf, log)
    sweep_plot(out, sweep, "rates.png", "Messages per request against the request rate (Zipf)")
    sweep_plot(out, sweep_log, "rates-access-log.png",
               "Messages per request against the request rate (access.log)")
    with open(os.path.join(out, "access-log-head.txt")) as f:
        head = f.read()
    md = []
    md.append("# Summary Cache comparison: ICP, peerbloom summaries, exact directory\n")
    md.append("Generated by `make results` (scripts/results.sh); do not edit by hand. The method, "
              "the definitions of every column and the caveats are in [README.md](README.md).\n")
    md.append("## Machine\n")
    md.extend("- %s" % m for m in machine(zipf_s, log_s))
    md.append("")
    md.append("## Synthetic Zipf stream\n")
    md.append("`summary_cache_sim %s` (per N: one site per proxy, the stream regenerated from the "
              "same seed; the first 10 %% of requests warm the caches and are not counted).\n"
              % zipf_flags)
    md.append(table(zipf))
    md.append(targets(zipf))
    md.append("\nDetail:\n")
    md.append(detail(zipf))
    md.append("## Squid access.log replay\n")
    md.append("A Squid native-format access.log of 5x10^5 GET requests from 64 client networks "
              "(written by `summary_cache_sim --write-access-log`, Zipf(0.75) over 5x10^5 shared "
              "objects, 30 % network-local, 20 requests/s per network), replayed with network S "
              "served by proxy S mod N; LRU of 5000 objects. Its first lines:\n")
    md.append("```\n" + head + "```\n")
    md.append(table(log))
    md.append(targets(log))
    md.append("\nDetail:\n")
    md.append(detail(log))
    md.append("## Rate sweep\n")
    md.append("The same comparison over request rates from 0.01 to 1,000 per second per proxy, for "
              "N = 4 to 32. The warm-up keeps its own clock (50 requests/s per proxy); the counted "
              "requests that follow are re-timed to each rate, so what changes from row to row is "
              "what peerbloom's gossip costs per request, not what the caches hold. Synthetic "
              "stream: `summary_cache_sim %s --nodes=4,8,16,32 --rates=...`: per rate, the same "
              "10^5 requests of warm-up, then as many of the stream's next requests as fill 120 "
              "simulated seconds at that rate, at least 1,000 and at most 400,000 (so rows of "
              "different rates count different numbers of requests, and their hit ratios differ "
              "a little). The simulated engines use power-of-two summary sizes and the daemon's "
              "defaults: the probe failure detector with its 2 s probe interval (docs/gossip.md), "
              "and publication in batches (a batch of 256 summary positions at once, else the "
              "oldest change two gossip intervals, 2 s, at most: `publish_batch`, `publish_max_delay`, "
              "docs/config.md).\n" % zipf_flags)
    md.append(crossovers(sweep))
    md.append("")
    md.append(sweep_table(sweep))
    md.append("\nThe access.log above, its last 2 % of requests (10^4, the same at every rate) "
              "counted and re-timed: "
              "`summary_cache_sim --access-log=... --warmup=0.98 --nodes=4,8,16,32 --rates=...`. "
              "At high rates its counted part lasts only seconds (column simulated s), less than "
              "a few gossip intervals, so those rows understate peerbloom's cost; the synthetic "
              "rows above are the measure there.\n")
    md.append(crossovers(sweep_log))
    md.append("")
    md.append(sweep_table(sweep_log))
    md.append("![Messages per request against the request rate](rates.png)\n")
    md.append("![Messages per request against the request rate, access.log](rates-access-log.png)\n")
    md.append("## Plots\n")
    for name, title in (("messages-per-request", "Messages per request"),
                        ("hit-ratio", "Hit ratio"), ("false-hits", "False hits"),
                        ("bytes-per-request", "Bytes per request")):
        md.append("![%s](%s.png)\n" % (title, name))
    with open(os.path.join(out, "summary-cache.md"), "w") as f:
        f.write("\n".join(md))
    update_readme(os.path.join(out, "..", "..", "README.md"), zipf, sweep)


if __name__ == "__main__":
    main()
