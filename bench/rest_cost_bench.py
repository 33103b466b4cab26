#!/usr/bin/env python3
"""What staying in sync costs a cluster at rest, measured on real daemons.

For each cluster size N: N peerbloomd processes on 127.0.0.1 with the default gossip settings
(gossip_interval 1 s, failure_timeout 10 s, anti-entropy 5 s), CURVE on, signed, every node
seeding from node 0; each node is given ITEMS URLs, then nothing changes. After SETTLE
seconds the gossip counters of every node are read, and again WINDOW seconds later. Prints,
per node and second: frames and bytes sent (median and max over the nodes), split by kind
(digests, deltas, full summaries, the rest), as one table row per N.

Usage: bench/rest_cost_bench.py BUILD_DIR [--nodes 4,8,16,32] [--items 1000]
                                [--settle 25] [--window 40] [--set 'key = value' ...]
(--set adds a config line to every node, e.g. --set 'failure_detector = "probe"'.)
Prints figures; asserts nothing. Every daemon started here is stopped on exit.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


class Cluster:
    def __init__(self, build, n, work, extra=()):
        self.cli = os.path.join(build, "cli", "peerbloom")
        self.daemon = os.path.join(build, "daemon", "peerbloomd")
        self.n = n
        self.work = work
        self.extra = list(extra)  # config lines added to every node's
        self.procs = {}
        self.auth = os.path.join(work, "authorized_keys")

    def ctl(self, i, *args, stdin=None):
        cmd = [self.cli, "--control", "ipc://%s/n%d/control.sock" % (self.work, i), *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=30)

    def json(self, i, *args):
        r = self.ctl(i, "--json", *args)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def start(self):
        with open(self.auth, "w") as f:
            for i in range(self.n):
                key = os.path.join(self.work, "n%d.key" % i)
                subprocess.run([self.cli, "keygen", "-o", key], check=True, capture_output=True)
                line = subprocess.run([self.cli, "keygen", "--authorized-line", key, "n%d" % i],
                                      check=True, capture_output=True, text=True).stdout
                f.write(line)
        for i in range(self.n):
            self.start_node(i)

    def start_node(self, i):
        d = os.path.join(self.work, "n%d" % i)
        os.makedirs(d, exist_ok=True)
        lines = ['node_id = "n%d"' % i, 'listen = "tcp://127.0.0.1:0"', 'data_dir = "%s"' % d,
                 'key_file = "%s/n%d.key"' % (self.work, i), 'authorized_keys = "%s"' % self.auth,
                 'cluster_secret = "rest-cost"', "snapshot_interval = 0", 'log_level = "warn"']
        lines += self.extra
        if i > 0:
            with open(os.path.join(self.work, "n0", "peer.endpoint")) as f:
                endpoint = f.read().strip()
            with open(os.path.join(self.work, "n0.key.pub")) as f:
                public = f.read().strip()
            lines += ["[[seeds]]", 'endpoint = "%s"' % endpoint, 'public_key = "%s"' % public]
        config = os.path.join(self.work, "n%d.toml" % i)
        with open(config, "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(self.work, "n%d.log" % i), "a") as log:
            self.procs[i] = subprocess.Popen([self.daemon, "--config", config, "--foreground"],
                                             stdout=log, stderr=log)
        poll(lambda: self.json(i, "stats") is not None, 10, "n%d did not start" % i)

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()

    def all_alive(self):
        for i in range(self.n):
            peers = self.json(i, "peers") or []
            if sum(1 for p in peers if p.get("alive")) != self.n - 1:
                return False
        return True

    def lists_dead(self, observer, node):
        """Whether `observer` lists `node` dead (None when it did not answer)."""
        peers = self.json(observer, "peers")
        if peers is None:
            return None
        return any(p["node_id"] == "n%d" % node and not p["alive"] for p in peers)

    def counters(self):
        out = []
        for i in range(self.n):
            s = self.json(i, "stats")
            g, t = s["gossip"], s["transport"]
            out.append({"frames": t["messages_out"], "bytes": t["bytes_out"],
                        "digests": g["digests_out"], "deltas": g["deltas_out"],
                        "full": g["full_summaries_out"], "gossip_frames": g["messages_out"]})
        return out


def poll(cond, seconds, what):
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            sys.exit("rest_cost_bench: " + what)
        time.sleep(0.2)


def measure(build, n, items, settle, window, extra=()):
    work = tempfile.mkdtemp(prefix="peerbloom-rest.")
    c = Cluster(build, n, work, extra)
    try:
        c.start()
        poll(c.all_alive, 120, "membership of %d nodes did not converge" % n)
        for i in range(n):
            urls = "".join("http://rest.example/n%d/%d\n" % (i, k) for k in range(items))
            c.ctl(i, "add", "-", stdin=urls)
        time.sleep(settle)  # the measured window must start at rest, not at a wait condition
        before, t0 = c.counters(), time.monotonic()
        time.sleep(window)
        after, t1 = c.counters(), time.monotonic()
        alive = c.all_alive()
    finally:
        c.stop()
        shutil.rmtree(work, ignore_errors=True)
    secs = t1 - t0
    rate = {k: [(a[k] - b[k]) / secs for a, b in zip(after, before)] for k in before[0]}
    return rate, alive, secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--nodes", default="4,8,16,32")
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--settle", type=float, default=25)
    ap.add_argument("--window", type=float, default=40)
    ap.add_argument("--set", action="append", default=[], help="a config line for every node")
    a = ap.parse_args()
    print("At rest: %s, CURVE on, %d URLs per node, nothing changing; "
          "%g s measured after %g s settled. Per node and second (median / max over nodes):"
          % ("settings " + "; ".join(a.set) if a.set else "default gossip settings", a.items,
             a.window, a.settle))
    print("| N | frames/s | bytes/s | digests/s | deltas/s | full summaries/s | other frames/s |"
          " all alive |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    for n in [int(x) for x in a.nodes.split(",")]:
        r, alive, _ = measure(a.build, n, a.items, a.settle, a.window, a.set)
        other = [f - d - e - s for f, d, e, s in
                 zip(r["gossip_frames"], r["digests"], r["deltas"], r["full"])]
        med = statistics.median
        print("| %d | %.2f / %.2f | %.0f / %.0f | %.2f | %.2f | %.3f | %.2f | %s |" % (
            n, med(r["frames"]), max(r["frames"]), med(r["bytes"]), max(r["bytes"]),
            med(r["digests"]), med(r["deltas"]), med(r["full"]), med(other),
            "yes" if alive else "no"), flush=True)


if __name__ == "__main__":
    main()
