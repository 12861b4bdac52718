#!/usr/bin/env python3
"""check_layers.py -- the include rules that keep src/ layered.

Each folder under src/ may include only the folders its rule names (its own
always). The lower layers -- wire codecs, partition logs, coordinator
documents, pure state machines, the keeper's data tree and disk formats --
name only base/ and each other, so they never see a process-wide header
(broker/core/broker_impl.h, keeper/server/keeper_impl.h). The broker and the
keeper never include each other. A few files inside an upper folder are pure
state machines held to a lower rule (LOWER_FILES).

Prints one line per broken rule and exits 1 if there is any; run it with
`python3 tests/check_layers.py` from the top of the tree (make test does).
"""
import os
import re
import sys

# folder -> folders (or single headers) it may include besides itself.
RULES = {
    "base": [],
    "keeper/data": ["base"],
    "keeper/disk": ["base", "keeper/data"],
    "keeper/zab": ["base", "keeper/data", "keeper/disk", "keeper/server"],
    "keeper/server": ["base", "keeper/data", "keeper/disk", "keeper/zab", "keeper/keeper.h"],
    "keeper": ["base", "keeper/server"],
    "broker/wire": ["base"],
    "broker/log": ["base", "broker/wire/kafka_errors.h"],      # producer state answers with Kafka's codes
    "broker/coord": ["base", "broker/wire/kafka_errors.h"],    # topic admin answers with Kafka's codes
    "broker/group": ["base", "broker/wire", "broker/coord", "broker/core"],
    "broker/repl": ["base", "broker/wire", "broker/log", "broker/coord", "broker/core"],
    "broker/core": ["base", "broker/wire", "broker/log", "broker/coord", "broker/group", "broker/repl",
                    "broker/api/api.h", "broker/broker.h"],
    "broker/api": ["base", "broker/wire", "broker/log", "broker/coord", "broker/group", "broker/repl",
                   "broker/core"],
    "broker": ["base"],
    # cli speaks Kafka's protocol itself for `kipper reassign --verify`'s progress (log_dirs_client.c):
    # broker/wire is a lower layer naming only base, so the tool sees no broker process header.
    # The console tools build and read record batches with broker/log's record_batch.h and
    # compression.h (console_records.c): a lower layer too, naming only base and kafka_errors.h.
    "cli": ["base", "broker/broker.h", "broker/coord", "broker/log", "broker/wire", "keeper/keeper.h"],
}

# Pure state machines living beside their service: held to a lower rule.
LOWER_FILES = {
    "broker/group/group.c": ["base", "broker/wire"],
    "broker/group/group.h": ["base", "broker/wire"],
}
for _name in ("isr", "commitq", "truncation"):
    for _ext in (".c", ".h"):
        LOWER_FILES[f"broker/repl/{_name}{_ext}"] = ["base", "broker/wire", "broker/log", "broker/coord"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel):
    """The rule that governs a file: its deepest folder that has one."""
    d = os.path.dirname(rel)
    while d and d not in RULES:
        d = os.path.dirname(d)
    return d


def allowed(target, own, names):
    if os.path.dirname(target) == own:
        return True
    for n in names:
        if target == n or target.startswith(n + "/"):
            return True
    return False


def main():
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    problems = []
    for root, _, files in os.walk(top):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, top)
            own = folder_of(rel)
            if own is None or own not in RULES:
                problems.append(f"src/{rel}: no layering rule covers its folder")
                continue
            names = LOWER_FILES.get(rel, RULES[own])
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for inc in INCLUDE.findall(text):
                if "/" not in inc:
                    target = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
                else:
                    target = os.path.normpath(inc)
                if not os.path.exists(os.path.join(top, target)):
                    problems.append(f"src/{rel}: includes \"{inc}\", which is not a file under src/")
                elif not allowed(target, own, names):
                    problems.append(f"src/{rel}: includes \"{inc}\" ({own} may include only "
                                    f"{', '.join(names) or 'base'})")
    for p in problems:
        print(p)
    print(f"layers: {'ok' if not problems else str(len(problems)) + ' rule(s) broken'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
