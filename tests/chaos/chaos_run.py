"""Runs of the fault suite: the workloads a schedule names (nemesis.SCHEDULES), the
faults, recovery, the checkers, report rows and plots.

`make test` runs each schedule once, short (test_chaos.py); `make chaos` runs
this file as a program for the long version:

    chaos_run.py [--seeds N] [--seed-base S] [--scale X] [--only NAME ...] [--coordinator kipper zookeeper]

which prints every run's seed before it starts (--seed-base and --only replay
one), and the report tables at the end (also build/chaos/report.md and
keeper-report.md, plots beside them). With the zookeeper coordinator only the
schedules that run the broker workload are run: the keeper workload is for
kipper's keepers.
"""
import argparse
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)

import report  # noqa: E402
from broker_workload import BrokerWorkload  # noqa: E402
from cluster import ChaosCluster  # noqa: E402
from harness import wait_until  # noqa: E402
from keeper_workload import KeeperWorkload  # noqa: E402
from nemesis import RECONFIG_SCHEDULES, SCHEDULES, Nemesis  # noqa: E402
from repl_cluster import LAG_MS, SESSION_MS  # noqa: E402

OUT = os.path.join(HERE, "..", "..", "build", "chaos")


class Run:
    """What one run found: rows for the report tables and the problems (empty:
    it passed)."""

    def __init__(self, name, seed):
        self.name = name
        self.seed = seed
        self.broker_row = self.keeper_row = None
        self.broker = self.keeper = None        # broker_workload.Result, keeper_workload.KeeperResult
        self.problems = []


def run_schedule(cluster, name, seed, scale=1.0, rate=300, out=OUT, keeper=True):
    """One run of schedule `name` on a started ChaosCluster, with the workloads it names
    (keeper=False leaves the keeper workload out). Returns a Run."""
    schedule, workloads = SCHEDULES[name]
    run = Run(name, seed)
    print("chaos: %s on %s, seed %d" % (name, cluster.target, seed), flush=True)
    bw = kw = None
    if "broker" in workloads:
        bw = BrokerWorkload(cluster, "%s-%d" % (name, seed), rate=rate).start()
    if "keeper" in workloads and keeper:
        # max_ops: room for the long runs' faults (each client stops at its share)
        kw = KeeperWorkload(cluster.ens, seed=seed, session_timeout=SESSION_MS / 1000, max_ops=200000).start()
    t0 = min(w for w in (bw and bw.started, kw and kw.t0) if w)
    nem = Nemesis(cluster, seed, SESSION_MS / 1000, LAG_MS / 1000, scale=scale)
    try:
        progress(bw, kw, t0)
        schedule(nem, (bw.topics[0], 0) if bw else None)
        cluster.recover(bw.topic_partitions() if bw else {})
        progress(bw, kw, time.monotonic())           # the workloads go on after the faults
        if kw:
            kw.stop()
            run.keeper = kw.check()
        if bw:
            run.broker = bw.stop_and_check()
    finally:
        if kw:
            kw.close()
    label = "%s-%s-%d" % (name, cluster.target, seed)
    if run.broker:
        run.broker_row = report.row(name, cluster.target, seed, run.broker, nem.faults)
        report.append_row(os.path.join(out, "report.md"), run.broker_row)
        report.plot(os.path.join(out, label + ".png"), "%s (%s coordinator, seed %d)" % (name, cluster.target, seed),
                    run.broker.events, nem.faults, t0)
        run.problems += run.broker.problems
    if run.keeper:
        run.keeper_row = report.keeper_row(name, cluster.target, seed, run.keeper, nem.faults, kw.t0)
        report.append_row(os.path.join(out, "keeper-report.md"), run.keeper_row, report.KEEPER_COLUMNS)
        events = [(kw.t0 + t, st == "ok", "keeper") for t, st in run.keeper.timeline]
        report.plot(os.path.join(out, "keeper-" + label + ".png"), "keeper clients: %s (%s, seed %d)"
                    % (name, cluster.target, seed), events, nem.faults, kw.t0)
        run.problems += ["keeper: " + v for v in run.keeper.violations]
    return run


def progress(bw, kw, since):
    """Until each workload has made progress after `since`."""
    if bw:
        bw.wait_progress(50)
    if kw:
        wait_until(lambda: kw.ok_since(since) >= 200, timeout=60, what="keeper calls answered")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3, help="runs per schedule and coordinator")
    ap.add_argument("--seed-base", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--scale", type=float, default=3.0, help="how many times longer each fault lasts")
    ap.add_argument("--only", nargs="*", default=None, help="schedules to run (default: all)")
    ap.add_argument("--coordinator", nargs="*", default=["kipper", "zookeeper"])
    args = ap.parse_args(argv)
    names = args.only or sorted(SCHEDULES)
    broker_rows, keeper_rows, failed = [], [], []
    for target in args.coordinator:
        for k in range(args.seeds):
            seed = args.seed_base + k
            for name in names:
                if target != "kipper" and "broker" not in SCHEDULES[name][1]:
                    continue
                c = ChaosCluster(seed=seed, target=target, reconfig=name in RECONFIG_SCHEDULES).start()
                try:
                    run = run_schedule(c, name, seed, scale=args.scale, keeper=target == "kipper")
                except Exception as exc:        # this run failed; the others still run
                    run = Run(name, seed)
                    run.problems.append("the run stopped: %r" % (exc,))
                    os.makedirs(OUT, exist_ok=True)
                    with open(os.path.join(OUT, "%s-%s-%d.log" % (name, target, seed)), "w") as f:
                        f.write(traceback.format_exc() + "\n" + c.logs())
                finally:
                    errors = c.close()
                broker_rows += [run.broker_row] if run.broker_row else []
                keeper_rows += [run.keeper_row] if run.keeper_row else []
                for p in run.problems + errors:
                    failed.append("%s/%s/seed %d: %s" % (name, target, seed, p))
    print(report.table(broker_rows))
    print(report.table(keeper_rows, report.KEEPER_COLUMNS))
    for f in failed:
        print("FAILED", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
