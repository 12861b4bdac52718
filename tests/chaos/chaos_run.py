"""Runs of the fault suite: a workload, a nemesis schedule, recovery, the checker,
a report row and a plot.

`make test` runs each schedule once, short (test_broker_chaos.py); `make chaos`
runs this file as a program for the long version:

    chaos_run.py [--seeds N] [--scale S] [--only NAME ...] [--coordinator kipper|zookeeper ...]

which prints every run's seed before it starts (pass --seed-base to replay),
and the report table at the end (also in build/chaos/report.md, plots beside it).
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)

import report  # noqa: E402
from broker_workload import BrokerWorkload  # noqa: E402
from cluster import ChaosCluster  # noqa: E402
from nemesis import SCHEDULES, Nemesis  # noqa: E402
from repl_cluster import LAG_MS, SESSION_MS  # noqa: E402

OUT = os.path.join(HERE, "..", "..", "build", "chaos")


def run_broker_schedule(cluster, name, seed, scale=1.0, rate=300, out=OUT):
    """One run of schedule `name` on a started ChaosCluster: returns (row, result).
    The result's problems list is empty when nothing was lost or misread."""
    topic = "%s-%d" % (name, seed)
    print("chaos: %s on %s, seed %d" % (name, cluster.target, seed), flush=True)
    w = BrokerWorkload(cluster, topic, rate=rate).start()
    t0 = w.started
    nem = Nemesis(cluster, seed, SESSION_MS / 1000, LAG_MS / 1000, scale=scale)
    w.wait_progress(50)
    SCHEDULES[name](nem, (w.topics[0], 0))
    cluster.recover(w.topic_partitions())
    w.wait_progress(50)                          # writes go on after the faults
    result = w.stop_and_check()
    row = report.row(name, cluster.target, seed, result, nem.faults)
    report.append_row(os.path.join(out, "report.md"), row)
    report.plot(os.path.join(out, "%s-%s-%d.png" % (name, cluster.target, seed)),
                "%s (%s coordinator, seed %d)" % (name, cluster.target, seed), result.events, nem.faults, t0)
    return row, result


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3, help="runs per schedule and coordinator")
    ap.add_argument("--seed-base", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--scale", type=float, default=3.0, help="how many times longer each fault lasts")
    ap.add_argument("--only", nargs="*", default=None, help="schedules to run (default: all)")
    ap.add_argument("--coordinator", nargs="*", default=["kipper", "zookeeper"])
    args = ap.parse_args(argv)
    names = args.only or sorted(SCHEDULES)
    rows, failed = [], []
    for target in args.coordinator:
        for k in range(args.seeds):
            for name in names:
                seed = args.seed_base + k
                c = ChaosCluster(seed=seed, target=target).start()
                try:
                    row, result = run_broker_schedule(c, name, seed, scale=args.scale)
                finally:
                    errors = c.close()
                rows.append(row)
                for p in result.problems + errors:
                    failed.append("%s/%s/seed %d: %s" % (name, target, seed, p))
    print(report.table(rows))
    for f in failed:
        print("FAILED", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
