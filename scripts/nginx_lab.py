#!/usr/bin/env python3
"""The request stream and the report of scripts/nginx-lab.sh.

  nginx_lab.py replay REQUESTS URLS ALPHA RATE NAME,TSV,HOST,PORT,ADDR1,ADDR2,ADDR3...
      send the stream to each cluster's fronts (ADDRn:PORT, one keep-alive connection per
      node; HOST is the Host header, its origin's ADDR:PORT), request by request, at RATE
      requests a second; write one line per request to each cluster's TSV; print the
      duration in ms
  nginx_lab.py wait-origin LOG TSV SECONDS
      wait until the origin's access log has a line per miss of the run in TSV (the origin
      logs a request after answering it) or SECONDS pass; print its count
  nginx_lab.py report OUT FACTS_JSON
      write the Markdown report from the facts the script gathered (see nginx-lab.sh)

The stream is fixed by SEED: URL i (/page/i, 0-based rank) drawn Zipf(ALPHA) over URLS ranks,
each request sent to a node chosen uniformly at random. Both runs replay the same stream.
"""
import http.client
import json
import os
import random
import re
import sys
import textwrap
import time

SEED = 20011
COLUMNS = ["i", "t_ms", "node", "url", "status", "cache", "source", "latency_ms"]


def stream(requests, urls, alpha, nodes):
    rng = random.Random(SEED)
    weights = [1.0 / (rank + 1) ** alpha for rank in range(urls)]
    picked = rng.choices(range(urls), weights=weights, k=requests)
    where = [rng.randrange(nodes) for _ in range(requests)]
    return list(zip(where, picked))


def replay(requests, urls, alpha, rate, specs):
    """Sends the stream to every cluster in SPECS ("NAME,TSV,HOST,PORT,ADDR,..."), request by
    request: request i goes to its node in each cluster in turn (the order alternating with
    i), so that the clusters' latencies are measured under the same load of the machine."""
    requests, urls, alpha, rate = int(requests), int(urls), float(alpha), float(rate)
    runs = []
    for spec in specs:
        name, tsv, host, port, *addrs = spec.split(",")
        runs.append({"name": name, "tsv": tsv, "host": host, "rows": [],
                     "conns": [http.client.HTTPConnection(a, int(port), timeout=30)
                               for a in addrs]})
    start = time.monotonic()
    for i, (node, url) in enumerate(stream(requests, urls, alpha, len(runs[0]["conns"]))):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        for run in (runs if i % 2 == 0 else runs[::-1]):
            t0 = time.monotonic()
            conn = run["conns"][node]
            conn.request("GET", "/page/%d" % url, headers={"Host": run["host"]})
            r = conn.getresponse()
            r.read()
            t1 = time.monotonic()
            run["rows"].append((i, "%.3f" % ((t0 - start) * 1000), node, url, r.status,
                                r.getheader("X-Cache-Status", "-"),
                                r.getheader("X-Peerbloom-Source", "-"),
                                "%.3f" % ((t1 - t0) * 1000)))
    elapsed = time.monotonic() - start
    bad = []
    for run in runs:
        with open(run["tsv"], "w") as f:
            f.write("\t".join(COLUMNS) + "\n")
            for row in run["rows"]:
                f.write("\t".join(str(x) for x in row) + "\n")
        failed = sum(1 for row in run["rows"] if row[4] != 200)
        if failed:
            bad.append("%s: %d requests were not answered 200 (see %s)"
                       % (run["name"], failed, run["tsv"]))
    if bad:
        sys.exit("nginx-lab: error: " + "; ".join(bad))
    print(int(elapsed * 1000))


def wait_origin(log, tsv, seconds):
    rows = read_run(tsv)
    expected = sum(1 for r in rows
                   if r["cache"] != "HIT" and r["source"] in ("origin", "origin-after-false-hit"))
    deadline = time.monotonic() + float(seconds)
    while True:
        with open(log) as f:
            count = sum(1 for _ in f)
        if count >= expected or time.monotonic() > deadline:
            print(count)
            return
        time.sleep(0.05)


def read_run(path):
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        rows = [dict(zip(header, line.rstrip("\n").split("\t"))) for line in f]
    for r in rows:
        r["node"], r["url"], r["status"] = int(r["node"]), int(r["url"]), int(r["status"])
        r["t_ms"], r["latency_ms"] = float(r["t_ms"]), float(r["latency_ms"])
    return rows


def expected_state(rows):
    """Per request: 'local' (this node fetched the URL before), 'servable' (another node did,
    this one not: a peer-servable miss) or 'cold' (nobody did). Nothing is evicted in the lab
    (max_size and inactive far above what the stream stores), so fetched before = held. Also,
    per request, when (ms into the replay) another node's first fetch of the URL was answered:
    the age of the copy a late miss could have had."""
    first = {}  # url -> {node: ms when its first request for the URL was answered}
    kinds, first_other = [], []
    for r in rows:
        holders = first.setdefault(r["url"], {})
        others = [t for q, t in holders.items() if q != r["node"]]
        if r["node"] in holders:
            kinds.append("local")
        elif others:
            kinds.append("servable")
        else:
            kinds.append("cold")
        first_other.append(min(others) if others else None)
        holders.setdefault(r["node"], r["t_ms"] + r["latency_ms"])
    return kinds, first_other


def pct(values, q):
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def fmt_ms(v):
    return "-" if v is None else "%.2f" % v


def share(a, b):
    return "-" if b == 0 else "%.1f %%" % (100.0 * a / b)


def classify(rows):
    """Splits a run's requests by what the front and the router said."""
    out = {"hit": [], "origin": [], "peer": [], "false": [], "other": []}
    for i, r in enumerate(rows):
        if r["cache"] == "HIT":
            out["hit"].append(i)
        elif r["cache"] == "MISS" and r["source"] == "origin":
            out["origin"].append(i)
        elif r["cache"] == "MISS" and r["source"] == "origin-after-false-hit":
            out["false"].append(i)
        elif r["cache"] == "MISS" and r["source"] not in ("-", ""):
            out["peer"].append(i)
        else:
            out["other"].append(i)
    return out


def run_figures(rows, kinds, origin_fetches):
    c = classify(rows)
    n = len(rows)
    servable = [i for i, k in enumerate(kinds) if k == "servable"]
    servable_set = set(servable)
    lat = lambda idx: [rows[i]["latency_ms"] for i in idx]
    misses = n - len(c["hit"])
    routed = len(c["peer"]) + len(c["false"])
    return {
        "requests": n,
        "hits": len(c["hit"]),
        "hit_ratio": share(len(c["hit"]), n),
        "misses": misses,
        "peer": len(c["peer"]),
        "servable": len(servable),
        "servable_by_peer": len([i for i in c["peer"] if i in servable_set]),
        "false": len(c["false"]),
        "false_servable": len([i for i in c["false"] if i in servable_set]),
        "routed": routed,
        "false_rate": share(len(c["false"]), routed),
        "to_origin": len(c["origin"]) + len(c["false"]),
        "origin_fetches": origin_fetches,
        "cluster_hit_ratio": share(n - origin_fetches, n),
        "other": len(c["other"]),
        "expected_local": kinds.count("local"),
        "lat": {k: (len(v), pct(lat(v), 0.5), pct(lat(v), 0.9))
                for k, v in (("hit", c["hit"]), ("origin", c["origin"]), ("peer", c["peer"]),
                             ("false", c["false"]))},
        "classes": c,
    }


def late_misses(rows, kinds, first_other, classes):
    """Peer-servable misses the router sent to the origin: the holder's summary (or the
    change in it) had not reached the asking daemon yet. Ages in ms since the first other
    node's fetch of the URL completed."""
    ages = [rows[i]["t_ms"] - first_other[i] for i in classes["origin"] if kinds[i] == "servable"]
    return ages


def route_rows(stats):
    """The route sockets' counters per node, and the node's published summary: what its
    peers test a key against (its size and false-positive rate bound a false hit's odds)."""
    lines = []
    total = {}
    keys = ["requests", "to_peer", "no_holder", "no_sibling", "bad_requests"]
    for node, s in stats.items():
        r, m = s.get("nginx_routes", {}), s.get("summary", {})
        lines.append("| %s | %s | %s | %s | %.2f %% |" % (
            node, " | ".join(str(r.get(k, "-")) for k in keys),
            s.get("filter", {}).get("items", "-"), m.get("set_bits", "-"),
            100.0 * float(m.get("estimated_fpr", 0))))
        for k in keys:
            total[k] = total.get(k, 0) + int(r.get(k, 0))
    lines.append("| all | %s | | | |" % " | ".join(str(total[k]) for k in keys))
    return lines, total


def live_rows(facts):
    lines, all_equal = [], True
    for node, v in facts["live_set"].items():
        equal = v["daemon"] == v["disk"]
        all_equal = all_equal and equal
        lines.append("| %s | `%s` | `%s` | %s |" % (node, v["daemon"], v["disk"],
                                                     "yes" if equal else "**no**"))
    return lines, all_equal


def reflow(text, width=96):
    """Rewraps the prose of a Markdown text (paragraphs and "- " items) to `width`; leaves
    headings, tables and indented code as they are."""
    blocks = []
    for block in text.split("\n\n"):
        if block.startswith(("#", "|", "    ")):
            blocks.append(block)
            continue
        items, current = [], []
        for line in block.split("\n"):
            if line.startswith("- ") and current:
                items.append(current)
                current = []
            current.append(line.strip())
        items.append(current)
        out = []
        for item in items:
            joined = " ".join(item)
            indent = "  " if joined.startswith("- ") else ""
            out.append(textwrap.fill(joined, width, subsequent_indent=indent,
                                     break_long_words=False, break_on_hyphens=False))
        blocks.append("\n".join(out))
    return "\n\n".join(blocks)


def route_errors(path):
    """nginx's error-log lines about failed route subrequests, counted by their cause."""
    causes = {}
    with open(path) as f:
        for line in f:
            m = re.search(r"\*\d+ (.*?)(?: while |, client:)", line)
            cause = m.group(1) if m else line.strip()[:80]
            causes[cause] = causes.get(cause, 0) + 1
    return causes


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")][0]
    except (OSError, IndexError):
        pass
    return "%s, %d cores" % (cpu, os.cpu_count() or 0)


def verdicts(none, pb, route_total, errors, errors_text, live_equal, ages):
    """Checks (invariants of the lab: a failure makes the script fail) and notes (what a
    loaded machine can do, e.g. to the route subrequest's 200 ms timeout)."""
    checks, notes = [], []
    for name, f in (("none", none), ("peerbloom", pb)):
        if f["hits"] != f["expected_local"]:
            checks.append("run %s: %d local hits, the stream gives %d (an eviction, or a miss "
                          "that was not stored)" % (name, f["hits"], f["expected_local"]))
        if f["other"]:
            checks.append("run %s: %d requests with another X-Cache-Status or no source"
                          % (name, f["other"]))
        if f["origin_fetches"] != f["to_origin"]:
            checks.append("run %s: the origin logged %d requests, the answers say %d reached it"
                          % (name, f["origin_fetches"], f["to_origin"]))
    if not live_equal:
        checks.append("a daemon's live set differs from its cache directory (table above)")
    n_errors = sum(errors.values())
    lost = route_total.get("to_peer", 0) - pb["routed"]
    if lost:
        # A peer named by the daemon whose answer nginx did not get: only a failed subrequest.
        (notes if 0 < lost <= n_errors else checks).append(
            "the route sockets sent %d misses to a peer, the answers show %d (failed route "
            "subrequests: %s)" % (route_total.get("to_peer", 0), pb["routed"], errors_text))
    if n_errors:
        notes.append("%d route subrequests failed in run peerbloom (nginx's error log); their "
                     "misses went to the origin" % n_errors)
    slow = len([a for a in ages if a > 3000])
    if slow:
        notes.append("%d late misses came more than 3 s after another node fetched the URL: "
                     "more than publication and gossip take (failed route subrequests: %s)"
                     % (slow, errors_text))
    if not notes:
        notes.append("the route sockets' `to_peer` equals the misses answered by a peer or "
                     "after a false hit, no route subrequest failed, and every late miss came "
                     "within 3 s of the URL's first fetch by another node")
    return checks, notes


def when(times, end):
    """When (s into the replay) events happened: each of a few, or halves of many."""
    if not times:
        return "at no time: there were none"
    if len(times) <= 20:
        return "%s s into the replay" % ", ".join("%.1f" % t for t in times)
    return "%d in the first half of the replay, %d in the second" % (
        sum(1 for t in times if t < end / 2), sum(1 for t in times if t >= end / 2))


def report(out, facts_path):
    with open(facts_path) as f:
        facts = json.load(f)
    p = facts["params"]
    none_rows, pb_rows = read_run(facts["none"]["tsv"]), read_run(facts["peerbloom"]["tsv"])
    if [(r["node"], r["url"]) for r in none_rows] != [(r["node"], r["url"]) for r in pb_rows]:
        sys.exit("nginx-lab: error: the two runs did not replay the same stream")
    kinds, _ = expected_state(none_rows)
    _, first_other = expected_state(pb_rows)  # the same kinds, the peerbloom run's times
    none = run_figures(none_rows, kinds, facts["none"]["origin_fetches"])
    pb = run_figures(pb_rows, kinds, facts["peerbloom"]["origin_fetches"])
    ages = late_misses(pb_rows, kinds, first_other, pb["classes"])
    routes, route_total = route_rows(facts["peerbloom"]["stats"])
    live, live_equal = live_rows(facts)
    added = None
    if pb["lat"]["origin"][1] is not None and none["lat"]["origin"][1] is not None:
        added = pb["lat"]["origin"][1] - none["lat"]["origin"][1]
    gossip = facts["peerbloom"]["gossip"]

    def row(name, f):
        return ("| %s | %d | %d (%s) | %d | %d | %d of %d (%s) | %d (%s) | %d | %s |"
                % (name, f["requests"], f["hits"], f["hit_ratio"], f["misses"], f["peer"],
                   f["servable_by_peer"], f["servable"], share(f["servable_by_peer"], f["servable"]),
                   f["false"], f["false_rate"], f["origin_fetches"], f["cluster_hit_ratio"]))

    def lat_row(name, f):
        cells = []
        for k in ("hit", "origin", "peer", "false"):
            count, med, p90 = f["lat"][k]
            cells.append("%s / %s (%d)" % (fmt_ms(med), fmt_ms(p90), count))
        return "| %s | %s |" % (name, " | ".join(cells))

    errors = route_errors(facts["peerbloom"]["route_errors"])
    errors_text = ("none" if not errors else "%d (%s)" % (sum(errors.values()), "; ".join(
        "%s: %d" % (k, v) for k, v in sorted(errors.items(), key=lambda kv: -kv[1]))))
    checks, notes = verdicts(none, pb, route_total, errors, errors_text, live_equal, ages)
    check_text = "\n".join(["- failed: " + c for c in checks] or [
        "- passed: local hits are what the stream predicts in both runs, the origin's log "
        "agrees with the answers' sources, and every live set equals its cache directory."])
    check_text += "\n" + "\n".join("- note: " + n for n in notes)
    false_times = when(sorted(pb_rows[i]["t_ms"] / 1000 for i in pb["classes"]["false"]),
                       pb_rows[-1]["t_ms"] / 1000)
    late_text = ("none" if not ages else
                 "%d of the %d (%s); they came a median %.2f s after another node had fetched "
                 "the URL, %.2f s at most" % (len(ages), pb["servable"], share(len(ages), pb["servable"]),
                                              pct(ages, 0.5) / 1000, max(ages) / 1000))

    text = f"""# nginx cooperative caching through peerbloom: lab run

Written by `scripts/nginx-lab.sh`; reproduce with

    sudo scripts/nginx-lab.sh {p["build_arg"]} {p["requests"]} {p["urls"]} {p["alpha"]}

(`RATE={p["rate"]:g}`, `CAPACITY={p["capacity"]}`). Machine: {machine()}, shared with other
work; {p["nginx"]}; peerbloomd {p["version"]}; everything on loopback (127.0.8.x). The run took
{p["wall_s"]} s up to this report.

Two clusters of three nginx caches (`configs/nginx/peerbloom-nginx.conf.in` through
`scripts/nginx-testbed.sh`, {p["workers"]} workers each, `max_size` {p["max_size"]}, `inactive`
{p["inactive"]}), each with its own nginx origin (every object fresh for an hour), both
starting from empty caches:

- **none** (127.0.8.11-13): the nodes' `ROUTE_SOCKET` is a path nobody listens on, as when
  peerbloomd is down: each miss's route subrequest fails to connect (nginx logs it) and the
  miss goes to the origin.
- **peerbloom** (127.0.8.1-3): a peerbloomd beside each node (running as `nobody` with group
  `www-data` and `CAP_DAC_READ_SEARCH`, as the package runs it; `key_scheme = "nginx-md5"`, an
  `nginx-cache` feed on the node's cache directory, `nginx_route_socket`, `nginx_siblings` for
  all three; `gossip_interval` {p["gossip_interval"]}, `capacity` {p["capacity"]},
  `curve = false`).

One stream of {p["requests"]} requests for {p["urls"]} URLs `/page/N` (Zipf, alpha
{p["alpha"]}, fixed seed), each for one of the three nodes chosen at random, {p["rate"]:g}
requests a second for each cluster, over one keep-alive connection per node. Both clusters get
the stream side by side: request i goes to its node in one cluster, then in the other (the
order alternating), so that their latencies are compared under the same load of the machine
(run one after the other, the medians of the two runs moved by a millisecond from run to run
on this shared machine, more than the routing costs).

Each request's figures come from its answer: `X-Cache-Status` (HIT: the node's own cache) and,
for a miss, `X-Peerbloom-Source` (a peer's address, `origin`, or `origin-after-false-hit`).
Origin fetches are the lines of the origin's access log.

## Requests

| run | requests | local hits | misses | misses served by a peer | peer-servable misses served by a peer | false hits (rate) | origin fetches | cluster hit ratio |
|---|---|---|---|---|---|---|---|---|
{row("none", none)}
{row("peerbloom", pb)}

The replay took {facts["peerbloom"]["replay_ms"] / 1000:.1f} s.

- A **peer-servable miss** is a request whose URL another node had fetched before and this
  node had not ({pb["servable"]} in this stream), counted from the stream itself: the caches are
  far larger than what the stream stores and every object is fresh for an hour, so nothing
  is evicted or expires, and "fetched before by another node" means "held by it".
- **False hits**: misses the router sent to a peer whose sibling did not hold the key (504),
  then fetched from the origin (`origin-after-false-hit`); the rate is per miss sent to a peer
  ({pb["routed"]}). Peer-servable among them (a false positive named a node that did not
  hold the URL, though another did): {pb["false_servable"]}.
- **Late** misses: peer-servable misses the router sent to the origin because no summary it
  had listed a holder yet (a new object reaches the peers when the holder's batch is
  published, within `publish_max_delay`, 2 x `gossip_interval`, then the gossip hop): {late_text}.
- The cluster hit ratio is the share of requests that did not reach the origin. Local hits are
  the same in both runs: every node stores what it serves, from the origin or from a peer.

## Latency (ms, at the client, median / p90 (count))

| run | local hits | misses to the origin | misses served by a peer | false hits |
|---|---|---|---|---|
{lat_row("none", none)}
{lat_row("peerbloom", pb)}

- What routing adds to a miss: the median miss to the origin takes {fmt_ms(added)} ms more with
  peerbloomd answering the route subrequest than with the subrequest failing to connect (run
  none). A miss served by a peer takes one loopback hop to the peer's sibling server instead
  of one to the origin, on a new connection each time (nginx keeps no keep-alive pool for an
  address given in a variable, as the shipped configuration says; the origin's upstream has
  one); the origin here is a local nginx as fast as a peer, so the table shows the cost of the
  hop, not what a distant origin would cost.

## The route sockets (`peerbloom stats`, nginx_routes, after the peerbloom run)

| node | requests | to_peer | no_holder | no_sibling | bad_requests | keys held | its summary: bits set | estimated FPR |
|---|---|---|---|---|---|---|---|---|
{chr(10).join(routes)}

The last three columns are the node's own filter and published summary (`stats` filter.items,
summary.set_bits, summary.estimated_fpr) at the end. A node's peers test a key against its
summary, which is sized for the keys the node holds (at most `target_fpr`, 1 %, and made
larger as the cache grows), not for `capacity`: a key no peer holds has about that chance per
peer to be sent to one anyway (a false hit). The false hits came {false_times}.

Route subrequests that failed in run peerbloom (nginx's error log; the miss then went to the
origin, whatever the daemon answered): {errors_text}.

Gossip during the peerbloom replay: {gossip["messages"]} messages, {gossip["bytes"] // 1024} KiB
sent by the three daemons (probes included).

## Live sets at the end (`stats` nginx_feeds[0] against `scripts/nginx-cache-xor CACHE_DIR`)

| node | daemon: files names_xor | directory: files names_xor | equal |
|---|---|---|---|
{chr(10).join(live)}

## Checks

{check_text}
"""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    text = reflow(text).rstrip("\n") + "\n"
    with open(out, "w") as f:
        f.write(text)
    print(text)
    return 1 if checks else 0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "replay" and len(args) >= 5:
        replay(args[0], args[1], args[2], args[3], args[4:])
    elif cmd == "wait-origin" and len(args) == 3:
        wait_origin(*args)
    elif cmd == "report" and len(args) == 2:
        sys.exit(report(*args))
    else:
        sys.exit("usage: nginx_lab.py replay|wait-origin|report ... (see its docstring)")


if __name__ == "__main__":
    main()
