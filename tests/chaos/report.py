"""The fault suite's report: one table row per run, and a plot per run of the
acknowledgements and errors per second with the faults shaded, so a person
can see where each fault hit (PNG, matplotlib from Debian's python3-matplotlib).
"""
import os

COLUMNS = ("schedule", "coordinator", "seed", "attempted", "acked", "failed", "unknown", "lost",
           "dirty reads", "stale", "longest unavailable (s)", "after heal (s)")


KEEPER_COLUMNS = ("schedule", "keepers", "seed", "calls", "ok", "failed", "unknown", "linearizable",
                  "ephemerals", "watches", "violations", "longest unavailable (s)", "after heal (s)")


def keeper_row(schedule, keepers, seed, result, faults, t0):
    """A keeper run's row: result is keeper_workload's KeeperResult (t0: its start)."""
    events = [(t0 + t, status == "ok", "keeper") for t, status in result.timeline]
    gap, after = unavailability(events, faults)
    lin = "/".join("yes" if r is not None and r.valid is True else ("NO" if r is not None and r.valid is False
                                                                     else "undecided")
                   for r in (result.register, result.set))
    return {
        "schedule": schedule, "keepers": keepers, "seed": seed, "calls": result.counts["attempted"],
        "ok": result.counts["ok"], "failed": result.counts["failed"], "unknown": result.counts["unknown"],
        "linearizable": lin,
        "ephemerals": "%d created" % result.ephemerals.get("created ok", 0),
        "watches": "%d fired" % result.watches.get("notifications", 0),
        "violations": len(result.violations), "longest unavailable (s)": "%.1f" % gap,
        "after heal (s)": "%.1f" % after,
    }


def unavailability(events, faults, horizon=30.0):
    """The worst, over the faults and the partitions written, of (the longest
    stretch without an acknowledgement from the fault's start to the partition's
    first one after the heal, the time from the heal to that first one).
    events: [(t, ok, partition key)] sorted; faults: [(label, start, end)]."""
    oks = {}
    for t, ok, key in events:
        if ok:
            oks.setdefault(key, []).append(t)
    worst_gap = worst_after = 0.0
    for times in oks.values():
        for _, start, end in faults:
            after = next((t for t in times if t >= end), None)
            stop = after if after is not None else end + horizon
            points = [start] + [t for t in times if start <= t <= stop] + [stop]
            worst_gap = max(worst_gap, max(b - a for a, b in zip(points, points[1:])))
            worst_after = max(worst_after, stop - end)
    return worst_gap, worst_after


def plot(path, title, events, faults, t0, bin_s=0.5):
    """Successes and errors per second over the run, faults shaded."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    end = max([e[0] for e in events] + [f[2] for f in faults] + [t0 + 1])
    nbins = int((end - t0) / bin_s) + 1
    ok = [0] * nbins
    bad = [0] * nbins
    for t, good, _ in events:
        k = min(nbins - 1, max(0, int((t - t0) / bin_s)))
        (ok if good else bad)[k] += 1 / bin_s
    xs = [k * bin_s for k in range(nbins)]
    fig, ax = plt.subplots(figsize=(9, 3.2), dpi=100)
    ax.plot(xs, ok, color="tab:blue", linewidth=1, label="acknowledged/s")
    ax.plot(xs, bad, color="tab:red", linewidth=1, label="errors/s")
    for i, (label, start, stop) in enumerate(faults):
        ax.axvspan(start - t0, stop - t0, color="tab:orange", alpha=0.25)
        ax.text(start - t0, ax.get_ylim()[1] * (0.92 - 0.08 * (i % 4)), label, fontsize=7)
    ax.set_xlabel("seconds")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def row(schedule, coordinator, seed, result, faults):
    gap, after = unavailability(result.events, faults)
    return {
        "schedule": schedule, "coordinator": coordinator, "seed": seed,
        "attempted": result.attempted, "acked": result.acked, "failed": result.failed,
        "unknown": result.unknown, "lost": result.lost, "dirty reads": result.dirty,
        "stale": result.stale, "longest unavailable (s)": "%.1f" % gap, "after heal (s)": "%.1f" % after,
    }


def table(rows, columns=COLUMNS):
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        lines.append("| " + " | ".join(str(r[c]) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def append_row(path, r, columns=COLUMNS):
    """Add a run's row to the table at `path` (written with its header when new)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write(table([], columns))
        f.write("| " + " | ".join(str(r[c]) for c in columns) + " |\n")
