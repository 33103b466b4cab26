#!/usr/bin/python3
"""The Python half of tests/package/deploy_guide_test.sh: reads the guide's run markers,
serves the origin, replays the request stream, watches the daemons and tallies the logs.

  blocks GUIDE DIR                 the guide's run blocks: DIR/NNN.sh, one line per block
  origin ADDR PORT LOG             an origin answering every path with a cacheable page
  stream OUT PREFIX PROXY...       replays the Zipf stream through the proxies in turn
  tally STREAM ORIGIN_LOG ADDR=LOG...  classifies the stream's requests from Squid's logs
  watch-peer NODE alive|dead       (on an observer) the time NODE shows in that state
  watch-who-has URL NODE           (on an observer) the time who-has lists NODE for URL
  heard SECONDS                    (on a node) HEARD of the live members, sampled
  routing                          (on a node) this daemon's routing counters as one JSON line
  helper-latency URLS N            (as proxy) round trips of the Squid helper, one at a time
  figures A ROUTING_BEFORE ROUTING_AFTER B DETECT PROPAGATE HELPER READY HEARD...
                                   checks and prints the figures of a run
"""
import http.client
import http.server
import json
import os
import random
import re
import socketserver
import statistics
import subprocess
import sys
import time

# The stream: requests over distinct URLs chosen Zipf(ALPHA), paced at RATE a second,
# sent to the proxies in turn. Both runs replay the same choices under their own prefix.
REQUESTS, URLS, ALPHA, RATE, SEED = 2000, 1000, 0.8, 100.0, 20240611
# A URL its holder fetched this long before is in the summary the requester holds: the holder
# publishes within publish_max_delay (2 s) of the fetch, plus a second for store.log and the
# delta.
LATE_S = 3.0


def cmd_blocks(guide, out_dir):
    """Each `<!-- run: HOST... [until=N] [id=NAME] -->` and the fenced block after it."""
    lines = open(guide).read().split("\n")
    os.makedirs(out_dir, exist_ok=True)
    n, i = 0, 0
    while i < len(lines):
        m = re.fullmatch(r"<!-- run: (.*) -->", lines[i].strip())
        i += 1
        if not m:
            continue
        hosts, until, name = [], 0, "-"
        for word in m.group(1).split():
            if word.startswith("until="):
                until = int(word[6:])
            elif word.startswith("id="):
                name = word[3:]
            else:
                hosts.append(word)
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i >= len(lines) or not lines[i].startswith("```"):
            sys.exit("%s:%d: a run marker without a fenced block after it" % (guide, i))
        start = i + 1
        i = start
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        n += 1
        open(os.path.join(out_dir, "%03d.sh" % n), "w").write("\n".join(lines[start:i]) + "\n")
        print("%03d %s %d %s %d" % (n, ",".join(hosts), until, name, start))
        i += 1


class Origin(http.server.BaseHTTPRequestHandler):
    log = None

    def do_GET(self):
        body = (("<html><head><title>%s</title></head><body><p>%s</p>" % (self.path, self.path))
                + "<p>" + "cacheable page " * 120 + "</p></body></html>\n").encode()
        Origin.log.write("%.3f %s %s\n" % (time.time(), self.client_address[0], self.path))
        Origin.log.flush()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "public, max-age=86400")
        self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_HEAD = do_GET
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass


def cmd_origin(addr, port, log):
    Origin.log = open(log, "a")
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    socketserver.ThreadingTCPServer.daemon_threads = True
    socketserver.ThreadingTCPServer((addr, int(port)), Origin).serve_forever()


def stream_choices():
    rng = random.Random(SEED)
    weights = [1.0 / (i + 1) ** ALPHA for i in range(URLS)]
    return rng.choices(range(URLS), weights=weights, k=REQUESTS)


def cmd_stream(out, prefix, *proxies):
    """Replays the stream; one JSON record per request. A request is peer-servable when another
    proxy fetched its URL before and this one did not (nothing is evicted at these sizes);
    `since` is the time since the first such fetch ended."""
    conns = [http.client.HTTPConnection(p, 3128, timeout=30) for p in proxies]
    first_done = {}  # (proxy, url) -> time its first request ended
    records = []
    start = time.monotonic()
    for i, url in enumerate(stream_choices()):
        delay = start + i / RATE - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        p = i % len(proxies)
        others = [t for (q, u), t in first_done.items() if u == url and q != p]
        servable = (p, url) not in first_done and bool(others)
        full = "http://10.0.0.1%s%d.html" % (prefix, url)
        t0 = time.monotonic()
        try:
            conns[p].request("GET", full)
            r = conns[p].getresponse()
            r.read()
            status, xcache = r.status, r.getheader("X-Cache", "")
        except (OSError, http.client.HTTPException) as e:
            conns[p] = http.client.HTTPConnection(proxies[p], 3128, timeout=30)
            status, xcache = 0, "error: %s" % e
        t1 = time.monotonic()
        first_done.setdefault((p, url), t1)
        records.append({"i": i, "url": full, "proxy": proxies[p], "status": status,
                        "xcache": xcache, "ms": (t1 - t0) * 1000, "servable": servable,
                        "since": (t0 - min(others)) if servable else None})
    json.dump({"prefix": prefix, "seconds": time.monotonic() - start, "records": records},
              open(out, "w"))


def access_lines(path):
    try:
        for line in open(path):
            f = line.split()
            if len(f) >= 10:
                yield f
    except FileNotFoundError:
        return


def cmd_tally(stream_file, origin_log, *addr_logs):
    """Classifies every request of the stream from the access logs (waiting until Squid has
    logged all of them), and counts the origin's fetches of the stream's URLs."""
    run = json.load(open(stream_file))
    prefix, records = "http://10.0.0.1" + run["prefix"], run["records"]
    nodes = {"10.0.0.11", "10.0.0.12", "10.0.0.13"}
    deadline = time.time() + 60
    while True:
        t = dict(client=0, local=0, routed=0, direct=0, other=0, peer_requests=0, peer_hits=0,
                 peer_resets=0)
        servable_routed = 0
        routed_urls = set()
        for addr_log in addr_logs:
            addr, log = addr_log.split("=", 1)
            for f in access_lines(log):
                if not f[6].startswith(prefix):
                    continue
                code, status = f[3].split("/")[0], f[3].split("/")[-1]
                hier = f[8].split("/")[0]
                if f[2] in nodes:  # a request routed here by another node
                    t["peer_requests"] += 1
                    t["peer_hits"] += "HIT" in code and status == "200"
                    t["peer_resets"] += status in ("000", "503", "504")
                    continue
                t["client"] += 1
                if hier == "HIER_NONE" and "HIT" in code:
                    t["local"] += 1
                elif "PARENT" in hier or "SIBLING" in hier:
                    t["routed"] += 1
                    routed_urls.add((addr, f[6]))
                elif "DIRECT" in hier:
                    t["direct"] += 1
                else:
                    t["other"] += 1
        if t["client"] >= len(records) or time.time() > deadline:
            break
        time.sleep(0.2)
    fetched = 0
    for line in open(origin_log):
        f = line.split()
        if len(f) == 3 and f[2].startswith(run["prefix"]):
            fetched += 1
    t["origin_fetches"] = fetched
    t["requests"] = len(records)
    t["errors"] = sum(r["status"] != 200 for r in records)
    t["servable"] = sum(r["servable"] for r in records)
    t["servable_late"] = sum(r["servable"] and r["since"] > LATE_S for r in records)
    t["seconds"] = run["seconds"]
    t["stream"] = stream_file
    late = {(r["proxy"], r["url"]) for r in records if r["servable"] and r["since"] > LATE_S}
    servable = {(r["proxy"], r["url"]) for r in records if r["servable"]}
    t["routed_servable"] = len(routed_urls & servable)
    t["routed_servable_late"] = len(routed_urls & late)
    print(json.dumps(t))


def peers():
    out = subprocess.run(["peerbloom", "--json", "peers"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return {p["node_id"]: p for p in json.loads(out.stdout)}


def cmd_watch_peer(node, state, timeout="60"):
    deadline = time.time() + float(timeout)
    want = state == "alive"
    while time.time() < deadline:
        now = time.time()
        known = peers()
        if known is not None and node in known and known[node]["alive"] == want:
            print("%.3f" % now)
            return
        time.sleep(0.05)
    sys.exit("%s was not %s within %s s" % (node, state, timeout))


def cmd_heard(seconds):
    """HEARD of every live member, sampled every 250 ms for SECONDS."""
    samples, deadline = [], time.time() + float(seconds)
    while time.time() < deadline:
        for p in (peers() or {}).values():
            if p["alive"]:
                samples.append(p["last_heard_ms_ago"])
        time.sleep(0.25)
    print(json.dumps(samples))


def cmd_watch_who_has(url, node, timeout="30"):
    deadline = time.time() + float(timeout)
    while time.time() < deadline:
        now = time.time()
        out = subprocess.run(["peerbloom", "who-has", url], capture_output=True, text=True)
        if out.returncode == 0 and re.search(r"\b%s\b" % re.escape(node), out.stdout):
            print("%.3f" % now)
            return
        time.sleep(0.05)
    sys.exit("who-has never listed %s for %s within %s s" % (node, url, timeout))


def cmd_routing():
    out = subprocess.run(["peerbloom", "--json", "stats"], capture_output=True, text=True,
                         check=True)
    r = json.loads(out.stdout)["routing"]
    print(json.dumps({k: r.get(k, 0) for k in ("routed", "hits", "false_hits", "unreachable",
                                                "pending")}))


def cmd_helper_latency(url_file, n):
    """Squid's side of the helper protocol, one request at a time: what a request waits."""
    urls = [u.strip() for u in open(url_file) if u.strip()][: int(n)]
    helper = subprocess.Popen(["peerbloom", "--config", "/etc/peerbloom/peerbloomd.toml",
                               "squid-helper"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, bufsize=1)
    times, peer = [], 0
    for i, url in enumerate(urls):
        t0 = time.monotonic()
        helper.stdin.write("%d %s\n" % (i, url))
        helper.stdin.flush()
        answer = helper.stdout.readline()
        times.append((time.monotonic() - t0) * 1000)
        if not answer.startswith("%d " % i):
            sys.exit("helper answered %r to request %d" % (answer, i))
        peer += "OK" in answer
    helper.stdin.close()
    helper.wait(timeout=10)
    times.sort()
    print(json.dumps({"lookups": len(times), "named_a_peer": peer,
                      "median_ms": statistics.median(times),
                      "p99_ms": times[int(len(times) * 0.99) - 1]}))


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def routing_sum(path):
    total = {}
    for line in open(path):
        for k, v in json.loads(line).items():
            total[k] = total.get(k, 0) + v
    return total


def cmd_figures(a_file, before, after, b_file, detect_file, propagate_file, helper_file,
                ready_file, peers_prefix, *heard_files):
    """Prints the figures of the run and fails on what must hold."""
    a, b = json.load(open(a_file)), json.load(open(b_file))
    r0, r1 = routing_sum(before), routing_sum(after)
    a["daemons"] = {k: r1[k] - r0.get(k, 0) for k in r1}
    stream_a = json.load(open(a["stream"]))["records"]
    stream_b = json.load(open(b["stream"]))["records"]
    detect = [float(x) for x in open(detect_file).read().split()]
    propagate = [float(x) for x in open(propagate_file).read().split()]
    helper = json.load(open(helper_file))
    ready = json.load(open(ready_file))
    fprs = [p["routing"]["estimated_fpr"] for h in ("cache-01", "cache-02", "cache-03")
            for p in json.load(open("%s.%s" % (peers_prefix, h)))]
    unservable = a["requests"] - a["local"] - a["servable"]
    heard = sorted(x / 1000.0 for f in heard_files for x in json.load(open(f)))
    problems = []

    def hit_lat(stream):
        return statistics.median(r["ms"] for r in stream if r["xcache"].startswith("HIT"))

    hr_a = pct(a["requests"] - a["origin_fetches"], a["requests"])
    hr_b = pct(b["requests"] - b["origin_fetches"], b["requests"])
    false_hits = a["daemons"]["false_hits"]
    routed = a["daemons"]["hits"] + false_hits
    lines = [
        "time from the guide's first command to a routed request: %.0f s "
        "(to every node listing the two others alive: %.0f s)" % (ready["routed"], ready["alive"]),
        "stream: %d requests over %d URLs, Zipf %.1f, %.0f a second through the three Squids in "
        "turn; with routing %.1f s, without %.1f s" % (REQUESTS, URLS, ALPHA, RATE,
                                                      a["seconds"], b["seconds"]),
        "peer-servable misses routed to the peer that held the URL: %d of %d (%.1f %%); of those "
        "whose first holder had fetched the URL more than %.0f s before: %d of %d (%.1f %%)" % (
            a["routed_servable"], a["servable"], pct(a["routed_servable"], a["servable"]), LATE_S,
            a["routed_servable_late"], a["servable_late"],
            pct(a["routed_servable_late"], a["servable_late"])),
        "false hits: %d, as the daemons count them (resets at the peers: %d): %.2f %% of the "
        "%d routed requests (the daemons' false_hit_rate), %.2f %% of the %d misses no peer "
        "could serve, each asking 2 summaries of estimated FPR %.2f-%.2f %%" % (
            false_hits, a["peer_resets"], pct(false_hits, routed), routed,
            pct(false_hits, unservable), unservable, 100 * min(fprs), 100 * max(fprs)),
        "hit ratio (requests answered without the origin): %.1f %% with routing "
        "(%d local hits, %d from a peer), %.1f %% without (%d local hits); origin fetches %d "
        "against %d" % (hr_a, a["local"], a["routed"], hr_b, b["local"], a["origin_fetches"],
                        b["origin_fetches"]),
        "helper round trip (Squid's side, one lookup at a time, %d lookups): median %.2f ms, "
        "p99 %.2f ms; median latency of a local hit at the client: %.2f ms with routing, "
        "%.2f ms without" % (helper["lookups"], helper["median_ms"], helper["p99_ms"],
                             hit_lat(stream_a), hit_lat(stream_b)),
        "failure detection (`systemctl stop peerbloomd` to `dead` at an observer, %d "
        "observations): "
        "median %.1f s, %.1f-%.1f s" % (len(detect), statistics.median(detect), min(detect),
                                        max(detect)),
        "a URL fetched at one node listed by who-has at another (%d pairs): median %.2f s, "
        "max %.2f s" % (len(propagate), statistics.median(propagate), max(propagate)),
        "HEARD of live members during the stream (%d samples at the three nodes): median "
        "%.2f s, max %.2f s" % (len(heard), statistics.median(heard), max(heard)),
    ]
    for line in lines:
        print("figure: " + line)
    if a["errors"] or b["errors"]:
        problems.append("requests not answered 200: %d with routing, %d without" % (
            a["errors"], b["errors"]))
    if a["client"] != a["requests"] or b["client"] != b["requests"]:
        problems.append("access logs hold %d and %d of %d client requests" % (
            a["client"], b["client"], a["requests"]))
    if a["routed"] == 0 or pct(a["routed_servable_late"], a["servable_late"]) < 90:
        problems.append("too few peer-servable misses routed")
    if b["routed"] != 0 or b["peer_requests"] != 0:
        problems.append("requests went to a peer without the routing file")
    if hr_a < hr_b + 5:
        problems.append("routing does not raise the hit ratio by 5 points")
    if a["local"] < b["local"] * 0.99:
        problems.append("routing cost local hits: %d against %d" % (a["local"], b["local"]))
    if a["daemons"]["hits"] != a["routed"]:
        problems.append("the daemons count %d routed hits, the access logs %d" % (
            a["daemons"]["hits"], a["routed"]))
    # Each miss no peer can serve asks two summaries: false hits near 2 x their FPR.
    if false_hits > 2 * (2 * max(fprs) * unservable) + 5:
        problems.append("false hits well above what the summaries' FPR explains")
    if false_hits != a["peer_resets"]:
        problems.append("the daemons count %d false hits, the peers reset %d requests" % (
            false_hits, a["peer_resets"]))
    if helper["median_ms"] > 5:
        problems.append("the helper's median round trip is above 5 ms")
    # What the guide states: dead once a probe went unanswered (a 2 s probe period) and the
    # suspicion (5 s) ran out: from 7 s after the daemon stops (a probe sent just then) to
    # about 13 s (each neighbour probes it within three periods), and about a second more for
    # the stop itself; HEARD below 6.5 s (a neighbour's ping or ack every 2 to 6 s); a new
    # summary reaches the others within publish_max_delay (2 s) and a second.
    if min(detect) < 7.0 or max(detect) > 14.0:
        problems.append("failure detection outside 7-14 s: %s" % detect)
    if max(heard) > 6.5:
        problems.append("HEARD above 6.5 s: %.2f s" % max(heard))
    if statistics.median(propagate) > 3 or max(propagate) > 3.5:
        problems.append("summaries took longer than the guide says: %s" % propagate)
    for p in problems:
        print("FAIL: " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    commands = {"blocks": cmd_blocks, "origin": cmd_origin, "stream": cmd_stream,
                "tally": cmd_tally, "watch-peer": cmd_watch_peer,
                "watch-who-has": cmd_watch_who_has, "heard": cmd_heard, "routing": cmd_routing,
                "helper-latency": cmd_helper_latency, "figures": cmd_figures}
    commands[sys.argv[1].replace("_", "-")](*sys.argv[2:])
