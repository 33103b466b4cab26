#!/usr/bin/env python3
"""Failure detection on real daemons: how long until a killed node is listed dead, and
whether a node that only stalls is.

N peerbloomd on 127.0.0.1 (bench/rest_cost_bench.py's cluster: CURVE on, every node seeding
from node 0), with the default gossip settings or those given by --set. Then, K times: a
random node other than the seed is killed (SIGKILL); every other node's `peers` is polled
until it lists the node dead, and each (observer, time from the kill) is one detection; the
node is started again and the cluster waits until every node lists every other alive. Then,
S times: a random node is stopped (SIGSTOP) for --stall seconds and continued; every other
node is polled for 3 failure timeouts, and any observer that lists it dead meanwhile is a
false death.

Usage: bench/detect_bench.py BUILD_DIR [--nodes 16] [--kills 10] [--stalls 10] [--stall 1]
                             [--set 'failure_timeout = "3s"' --set ...]
Prints figures: detection time median, p99 and max over every observation, with the polling
resolution (one sweep of every observer's `peers`); false deaths. Asserts nothing.
"""
import argparse
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rest_cost_bench import Cluster, poll  # noqa: E402


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def detections(c, victim, timeout_s):
    """Seconds from now until each other node lists `victim` dead; kills it first."""
    c.procs[victim].kill()
    t0 = time.monotonic()
    c.procs[victim].wait()
    pending = set(range(c.n)) - {victim}
    out, sweeps = [], []
    while pending and time.monotonic() - t0 < timeout_s:
        s0 = time.monotonic()
        for o in sorted(pending):
            if c.lists_dead(o, victim):
                out.append(time.monotonic() - t0)
                pending.discard(o)
        sweeps.append(time.monotonic() - s0)
    return out, len(pending), statistics.median(sweeps) if sweeps else 0


def false_deaths(c, victim, stall_s, watch_s):
    """Observers that list `victim` dead within `watch_s` of a `stall_s` SIGSTOP."""
    os.kill(c.procs[victim].pid, signal.SIGSTOP)
    time.sleep(stall_s)  # the stall itself, not a wait for a condition
    os.kill(c.procs[victim].pid, signal.SIGCONT)
    seen = set()
    t0 = time.monotonic()
    while time.monotonic() - t0 < watch_s:
        for o in range(c.n):
            if o != victim and o not in seen and c.lists_dead(o, victim):
                seen.add(o)
    return len(seen)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--stalls", type=int, default=10)
    ap.add_argument("--stall", type=float, default=1.0)
    ap.add_argument("--failure-timeout", type=float, default=10.0,
                    help="the failure_timeout in force, in seconds (for the watch windows)")
    ap.add_argument("--set", action="append", default=[], help="a config line for every node")
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="peerbloom-detect.")
    c = Cluster(a.build, a.nodes, work, a.set)
    try:
        c.start()
        poll(c.all_alive, 120, "membership did not converge")
        times, missed, sweep = [], 0, []
        for _ in range(a.kills):
            victim = rng.randrange(1, a.nodes)
            t, m, s = detections(c, victim, 6 * a.failure_timeout)
            times += t
            missed += m
            sweep.append(s)
            c.start_node(victim)
            poll(c.all_alive, 120, "n%d did not come back alive everywhere" % victim)
        dead = 0
        for _ in range(a.stalls):
            dead += false_deaths(c, rng.randrange(1, a.nodes), a.stall, 3 * a.failure_timeout)
            poll(c.all_alive, 120, "the cluster did not return to all alive after a stall")
    finally:
        c.stop()
        shutil.rmtree(work, ignore_errors=True)
    settings = ", ".join(a.set) if a.set else "default gossip settings"
    print("%d nodes, %s, seed %d" % (a.nodes, settings, seed))
    if times:
        print("kill -9 -> listed dead: median %.1f s, p99 %.1f s, max %.1f s over %d observations "
              "(%d kills; %d observers never listed it dead within %.0f s; polling resolution "
              "%.2f s)" % (statistics.median(times), percentile(times, 0.99), max(times),
                           len(times), a.kills, missed, 6 * a.failure_timeout,
                           statistics.median(sweep)))
    print("SIGSTOP for %.1f s -> listed dead: %d false deaths over %d stalls x %d observers"
          % (a.stall, dead, a.stalls, a.nodes - 1))


if __name__ == "__main__":
    main()
