"""A linearizability checker in the manner of Knossos' "wgl" algorithm.

A history is a list of `Op`s, each one client call: the process that made it, the
function (`f`) and its argument (`value`), what it returned (`output`), when it was
invoked and when it completed (monotonic seconds) and how it ended:

    ok    the server answered with success: the call took effect at one instant
          between its invocation and its completion;
    fail  the server answered with an error: the call had no effect, but the error
          may say something about the state at one instant of that interval (a
          compare-and-set refused with BadVersion: the version did not match);
    info  no answer (connection loss, time-out, expiry): the call may have taken
          effect at any instant after its invocation, or never. `complete` is None.

`check(model, history)` searches for one sequential order of the calls that respects
real time (a call that completed before another was invoked comes first) and that
the model accepts, with every ok and fail call in it and any subset of the info ones.
The search is Wing & Gong's, with Lowe's memoisation: a (set of calls linearized,
model state) configuration met once is never explored again. The calls sit in a
doubly linked list of invocation and completion entries in time order; the search
walks it, linearizing a call at its invocation entry when the model allows, and
backtracks when it meets the completion of a call it has not linearized. Its work is
bounded (`max_ops`, `budget` steps, `time_limit` seconds): past a bound the answer is
'unknown', never a hang.

Models (state must be hashable):

    VersionedRegister((value, version))  a znode's data as ZooKeeper shows it:
        read   output (value, version)
        write  value data, output the new version or None (setData, version -1)
        cas    value (expected version, data), output the new version or None;
               a fail cas (BadVersion) needs a state whose version is not the expected one
    GrowSet(initial)                     a parent's children:
        add    value the element (a create of a unique child)
        read   output the whole set (get_children)

The result (`Result`) says valid True / False / 'unknown' and, when False, which call
could not be linearized, the calls concurrent with it, the longest linearizable
prefix found and the model states at that point (`explain()`).
"""
import time

OK, FAIL, INFO = "ok", "fail", "info"


class Op:
    """One call in a history (see the module's docstring)."""
    __slots__ = ("process", "f", "value", "output", "invoke", "complete", "type", "error", "meta", "index")

    def __init__(self, process, f, value=None, output=None, invoke=0.0, complete=None, type=OK, error=None,
                 meta=None):
        assert type in (OK, FAIL, INFO), type
        assert (complete is None) == (type == INFO), "an info op has no completion, the others have one"
        self.process, self.f, self.value, self.output = process, f, value, output
        self.invoke, self.complete, self.type, self.error = invoke, complete, type, error
        self.meta = meta if meta is not None else {}
        self.index = None

    def __repr__(self):
        out = "" if self.output is None else " -> %s" % _short(self.output)
        err = " (%s)" % self.error if self.error else ""
        return "<p%s %s %s%s %s%s [%.3f..%s]>" % (self.process, self.f, _short(self.value), out, self.type, err,
                                                 self.invoke,
                                                 "?" if self.complete is None else "%.3f" % self.complete)


def _short(v, n=120):
    if isinstance(v, (set, frozenset)):
        v = "{%s}" % ", ".join(sorted(map(str, v)))
    s = str(v)
    return s if len(s) <= n else s[:n - 3] + "..."


# ---- models ---------------------------------------------------------------------------------
#
# A model has `init`, `prepare(ops)` (the calls the search needs, simplified: see each
# model), `step(state, op)` (the state after op, or None when op cannot happen in
# `state`), `key(linearized, state)` (what the memo keeps) and `describe(state, prefix)`.


def _informed(op, complete, output):
    """A copy of an unknown call that a later read proves happened: it must take effect
    before `complete` (that read's completion), producing `output`."""
    o = Op(op.process, op.f, op.value, output=output, invoke=op.invoke, complete=max(complete, op.invoke),
           type=OK, error="outcome unknown; seen by a read", meta=op.meta)
    return o


class VersionedRegister:
    """A znode's (data, version); see the module's docstring.

    prepare() relies on every write writing a value of its own (the workload's values are
    unique; without that it leaves the history as it is): an unknown write whose value a
    read shows happened, before that read completed, and produced the version the read
    shows, so it becomes a call with that deadline and output; an unknown write whose
    value no read shows can only have made a version that no read and no acknowledgement
    shows (a gap): it goes when there is none, and may be linearized only there otherwise.
    Unknown reads and failed calls other than a refused CAS say nothing and go too."""
    name = "versioned register"

    def __init__(self, initial=(None, 0)):
        self.init = tuple(initial)
        self.gaps = None              # after prepare(): the versions no known write produced

    def prepare(self, ops):
        self.gaps = None
        ops = [o for o in ops if not (o.type == INFO and o.f == "read") and not (o.type == FAIL and o.f != "cas")]
        writes = [o for o in ops if o.f in ("write", "cas")]
        values = [self._data(o) for o in writes]
        if len(set(values)) != len(values) or self.init[0] in values:
            return ops
        seen = {}                     # value -> (earliest completion of a read showing it, its version)
        versions = set()
        for o in ops:
            if o.f == "read" and o.type == OK:
                v, ver = o.output
                versions.add(ver)
                if v not in seen or o.complete < seen[v][0]:
                    seen[v] = (o.complete, ver)
            elif o.f in ("write", "cas") and o.type == OK:
                if o.output is None:
                    return ops        # an acknowledged write of unknown version: keep it simple
                versions.add(o.output)
        out, unseen = [], []
        for o in ops:
            if o.type == INFO and o.f in ("write", "cas"):
                if self._data(o) in seen:
                    t, ver = seen[self._data(o)]
                    o = _informed(o, t, ver)
                    versions.add(ver)
                else:
                    unseen.append(o)
                    continue
            out.append(o)
        top = max(versions | {self.init[1]})
        self.gaps = set(range(self.init[1] + 1, top + 1)) - versions
        if self.gaps:
            # They may fill the gaps: let the search place them (only there); a CAS only
            # where its expected version is one below a gap.
            out += [o for o in unseen if o.f != "cas" or o.value[0] + 1 in self.gaps]
        return out

    @staticmethod
    def _data(op):
        return op.value[1] if op.f == "cas" else op.value

    def step(self, state, op):
        value, version = state
        if op.f == "read":
            return state if op.type != OK or tuple(op.output) == state else None
        if op.type == INFO and self.gaps is not None and version + 1 not in self.gaps:
            return None               # an unknown write nobody saw can only make a version nobody saw
        if op.f == "write":
            if op.type == FAIL:
                return state
            if op.type == OK and op.output is not None and op.output != version + 1:
                return None
            return (op.value, version + 1)
        if op.f == "cas":
            expect, data = op.value
            if op.type == FAIL:
                return state if version != expect else None
            if version != expect:
                return None
            if op.type == OK and op.output is not None and op.output != version + 1:
                return None
            return (data, version + 1)
        raise ValueError("register: unknown function %r" % op.f)

    def key(self, linearized, state):
        return (linearized, state)

    def describe(self, state, prefix=()):
        return "value %r version %d" % state


class GrowSet:
    """A set that only grows; see the module's docstring.

    With every add adding an element of its own (the workload's are unique), the state is
    (size, XOR of 64-bit hashes of the elements): one step costs O(1) whatever the set's
    size, and the memo keeps only which calls are linearized (the state follows from
    them). prepare(): an unknown add that a read shows happened before that read
    completed; one that no read shows happened after everything or never, and goes. Reads
    carry their (size, hash). Without unique elements it works on frozensets."""
    name = "set"

    def __init__(self, initial=()):
        self.initial = frozenset(initial)
        self.init = self.initial
        self.hashed = False

    @staticmethod
    def _h(e):
        return hash(("GrowSet", e)) & 0xFFFFFFFFFFFFFFFF

    def prepare(self, ops):
        ops = [o for o in ops if not (o.type == INFO and o.f == "read") and o.type != FAIL]
        adds = [o.value for o in ops if o.f == "add"]
        self.hashed = len(set(adds)) == len(adds) and not (set(adds) & self.initial)
        if not self.hashed:
            self.init = self.initial
            return ops
        h = 0
        for e in self.initial:
            h ^= self._h(e)
        self.init = (len(self.initial), h)
        first_seen = {}
        for o in ops:
            if o.f == "read" and o.type == OK:
                for e in o.output:
                    if e not in first_seen or o.complete < first_seen[e]:
                        first_seen[e] = o.complete
        out = []
        for o in ops:
            if o.f == "add" and o.type == INFO:
                if o.value not in first_seen:
                    continue
                o = _informed(o, first_seen[o.value], None)
            if o.f == "read":
                hh = 0
                for e in o.output:
                    hh ^= self._h(e)
                o.meta["_sethash"] = (len(o.output), hh)
            out.append(o)
        return out

    def step(self, state, op):
        if op.f == "read":
            if op.type != OK:
                return state
            if self.hashed:
                return state if op.meta["_sethash"] == state else None
            return state if frozenset(op.output) == state else None
        if op.f == "add":
            if self.hashed:
                return (state[0] + 1, state[1] ^ self._h(op.value))
            return state | {op.value}
        raise ValueError("set: unknown function %r" % op.f)

    def key(self, linearized, state):
        return linearized

    def diff(self, prefix, op):
        """What a read shows against the set the prefix builds."""
        have = set(self.initial) | {o.value for o in prefix if o.f == "add"}
        shown = set(op.output)
        return "the read lacks %s and has in excess %s" % (_short(have - shown), _short(shown - have))

    def describe(self, state, prefix=()):
        if self.hashed:
            elems = set(self.initial) | {o.value for o in prefix if o.f == "add"}
        else:
            elems = state
        return "%d elements %s" % (len(elems), _short(elems, 300))


# ---- the result ---------------------------------------------------------------------------------


class Result:
    """valid: True, False or 'unknown'. When False: op (the call that cannot be
    linearized), concurrent (calls pending at that point), prefix (the longest
    linearizable prefix found, in its linearization order), states (model states
    reached there). reason: why 'unknown' (or a one-line summary). steps: search steps."""

    def __init__(self, valid, model, reason="", op=None, concurrent=(), prefix=(), states=(), steps=0, ops=0,
                 seconds=0.0):
        self.valid, self.model, self.reason = valid, model, reason
        self.op, self.concurrent, self.prefix, self.states = op, list(concurrent), list(prefix), list(states)
        self.steps, self.ops, self.seconds = steps, ops, seconds

    def __bool__(self):
        return self.valid is True

    def __repr__(self):
        return "<linearizable %s: %s>" % (self.valid, self.reason)

    def explain(self, tail=8):
        lines = ["%s history of %d calls: %s (%s; %d search steps, %.2f s)"
                 % (self.model.name, self.ops, {True: "linearizable", False: "NOT linearizable"}.get(
                     self.valid, "unknown"), self.reason, self.steps, self.seconds)]
        if self.valid is False:
            lines.append("  cannot linearize: %r" % (self.op,))
            for o in self.concurrent[:tail]:
                lines.append("    concurrent with: %r" % (o,))
            lines.append("  longest linearizable prefix: %d calls%s" % (
                len(self.prefix), ", ending:" if self.prefix else ""))
            for o in self.prefix[-tail:]:
                lines.append("    %r" % (o,))
            for s in self.states[:tail]:
                lines.append("  a state reached there: %s" % self.model.describe(s, self.prefix))
            if self.op is not None and self.op.f == "read" and hasattr(self.model, "diff"):
                lines.append("  after the prefix, %s" % self.model.diff(self.prefix, self.op))
        return "\n".join(lines)


# ---- the search -----------------------------------------------------------------------------------


def check(model, history, max_ops=20000, budget=2000000, time_limit=20.0):
    """Is `history` (Ops) linearizable for `model`? Returns a Result."""
    t0 = time.monotonic()
    ops = model.prepare(list(history))
    n = len(ops)
    if n > max_ops:
        return Result("unknown", model, "%d calls, more than max_ops=%d" % (n, max_ops), ops=n)
    for i, o in enumerate(ops):
        o.index = i
    required = sum(1 for o in ops if o.type != INFO)

    # Entries: 2i is op i's invocation, 2i+1 its completion (absent for info ops);
    # HEAD and TAIL are sentinels. At equal times invocations come first, so calls
    # that touch are concurrent (the lenient reading).
    events = []
    for o in ops:
        events.append((o.invoke, 0, 2 * o.index))
        if o.complete is not None:
            if o.complete < o.invoke:
                raise ValueError("%r completes before it is invoked" % (o,))
            events.append((o.complete, 1, 2 * o.index + 1))
    events.sort()
    HEAD, TAIL = 2 * n, 2 * n + 1
    nxt = [None] * (2 * n + 2)
    prv = [None] * (2 * n + 2)
    pos = [0] * (2 * n + 2)            # rank in time order, for "how far the search got"
    last = HEAD
    for rank, (_, _, e) in enumerate(events):
        nxt[last], prv[e] = e, last
        pos[e] = rank
        last = e
    nxt[last], prv[TAIL] = TAIL, last
    pos[TAIL] = len(events)

    def lift(e):
        nxt[prv[e]], prv[nxt[e]] = nxt[e], prv[e]
        r = e + 1
        if ops[e // 2].complete is not None:
            nxt[prv[r]], prv[nxt[r]] = nxt[r], prv[r]

    def unlift(e):
        r = e + 1
        if ops[e // 2].complete is not None:
            nxt[prv[r]] = r
            prv[nxt[r]] = r
        nxt[prv[e]] = e
        prv[nxt[e]] = e

    state = model.init
    linearized = 0
    stack = []                     # (invocation entry, state before)
    cache = set()
    left = required
    entry = nxt[HEAD]
    steps = 0
    best = None                    # (rank, entry, prefix, states)

    while True:
        if left == 0:
            return Result(True, model, "linearizable", steps=steps, ops=n, seconds=time.monotonic() - t0)
        steps += 1
        if steps > budget or (steps & 1023 == 0 and time.monotonic() - t0 > time_limit):
            why = ("search budget of %d steps spent" % budget if steps > budget
                   else "time limit of %.0f s spent" % time_limit)
            res = Result("unknown", model, why, steps=steps, ops=n, seconds=time.monotonic() - t0)
            if best is not None:
                res.op, res.prefix, res.states = ops[best[1] // 2], best[2], best[3]
            return res
        if entry != TAIL and entry % 2 == 0:               # an invocation: try to linearize it here
            op = ops[entry // 2]
            new = model.step(state, op)
            if new is not None:
                lin = linearized | (1 << op.index)
                k = model.key(lin, new)
                if k not in cache:
                    cache.add(k)
                    stack.append((entry, state))
                    state, linearized = new, lin
                    if op.type != INFO:
                        left -= 1
                    lift(entry)
                    entry = nxt[HEAD]
                    continue
            entry = nxt[entry]
            continue
        # A completion of a call not linearized yet (or the end): undo the last choice.
        if best is None or pos[entry] > best[0]:
            best = (pos[entry], entry, [ops[e // 2] for e, _ in stack], [state])
        elif pos[entry] == best[0] and len(best[3]) < 8 and state not in best[3]:
            best[3].append(state)
        if not stack:
            break
        e, state = stack.pop()
        op = ops[e // 2]
        linearized &= ~(1 << op.index)
        if op.type != INFO:
            left += 1
        unlift(e)
        entry = nxt[e]

    rank, entry, prefix, states = best
    bad = ops[entry // 2] if entry != TAIL else None
    # The calls pending when `bad` completed: invoked before its completion, not done before its invocation.
    concurrent = []
    if bad is not None:
        concurrent = [o for o in ops if o is not bad and o.invoke <= bad.complete
                      and (o.complete is None or o.complete >= bad.invoke)]
        concurrent.sort(key=lambda o: o.invoke)
    return Result(False, model, "no linearization past the completion of %r" % (bad,), op=bad,
                  concurrent=concurrent, prefix=prefix, states=states, steps=steps, ops=n,
                  seconds=time.monotonic() - t0)
