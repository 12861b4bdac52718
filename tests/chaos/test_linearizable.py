"""The linearizability checker (linearizable.py) on hand-made histories: valid
concurrent ones accepted, each kind of anomaly rejected with an explanation, unknown
calls taken both ways, and the bounds answering 'unknown' instead of searching on."""
import random

import pytest

from linearizable import FAIL, INFO, OK, GrowSet, Op, VersionedRegister, check

INIT = ("init", 0)


def reg(*ops, init=INIT):
    return check(VersionedRegister(init), list(ops))


def read(p, t0, t1, value, version):
    return Op(p, "read", output=(value, version), invoke=t0, complete=t1)


def write(p, t0, t1, value, version=None, type=OK):
    return Op(p, "write", value, output=version, invoke=t0, complete=None if type == INFO else t1, type=type)


def cas(p, t0, t1, expect, value, type=OK, version=None):
    return Op(p, "cas", (expect, value), output=version, invoke=t0, complete=None if type == INFO else t1,
              type=type, error="BadVersion" if type == FAIL else None)


def add(p, t0, t1, e, type=OK):
    return Op(p, "add", e, invoke=t0, complete=None if type == INFO else t1, type=type)


def sread(p, t0, t1, *elems):
    return Op(p, "read", output=frozenset(elems), invoke=t0, complete=t1)


# ---- register: accepted -----------------------------------------------------------------------


def test_sequential_register_history():
    r = reg(read(1, 0, 1, "init", 0), write(1, 2, 3, "a", 1), read(2, 4, 5, "a", 1),
            cas(2, 6, 7, 1, "b", version=2), read(1, 8, 9, "b", 2), cas(1, 10, 11, 1, "c", type=FAIL))
    assert r.valid is True, r.explain()


def test_concurrent_writes_and_reads_in_either_order():
    # Two overlapping writes; readers during and after see an order that exists.
    h = [write(1, 0, 10, "a", 2), write(2, 1, 9, "b"), read(3, 2, 3, "init", 0), read(3, 4, 5, "b", 1),
         read(4, 6, 12, "a", 2), read(3, 13, 14, "a", 2)]
    assert reg(*h).valid is True
    # The other order works too when the reads say so.
    h2 = [write(1, 0, 10, "a"), write(2, 1, 9, "b"), read(3, 11, 12, "b", 2)]
    assert reg(*h2).valid is True


def test_cas_race_one_wins_one_fails():
    h = [read(1, 0, 1, "init", 0), read(2, 0, 1, "init", 0),
         cas(1, 2, 6, 0, "a", version=1), cas(2, 3, 5, 0, "b", type=FAIL), read(3, 7, 8, "a", 1)]
    assert reg(*h).valid is True


def test_failed_cas_must_see_another_version():
    # p2's CAS from version 0 was refused: something moved the version first, so the
    # concurrent write must be linearized before it, which the read allows.
    h = [write(1, 0, 5, "a", 1), cas(2, 1, 4, 0, "b", type=FAIL), read(3, 6, 7, "a", 1)]
    assert reg(*h).valid is True


def test_unconditional_write_returns_its_version():
    h = [write(1, 0, 1, "a", 1), write(2, 2, 3, "b", 2), read(1, 4, 5, "b", 2)]
    assert reg(*h).valid is True
    bad = reg(write(1, 0, 1, "a", 1), write(2, 2, 3, "b", 1))
    assert bad.valid is False


# ---- register: rejected --------------------------------------------------------------------------


def test_stale_read_after_acknowledged_write():
    r = reg(write(1, 0, 1, "a", 1), read(2, 2, 3, "init", 0))
    assert r.valid is False
    assert r.op.f == "read" and r.op.output == ("init", 0)
    text = r.explain()
    assert "cannot linearize" in text and "longest linearizable prefix: 1" in text, text


def test_lost_acknowledged_write():
    # a then b acknowledged; the final read shows a again: b is lost.
    r = reg(write(1, 0, 1, "a", 1), cas(2, 2, 3, 1, "b", version=2), read(3, 10, 11, "a", 1))
    assert r.valid is False
    assert r.op.output == ("a", 1)
    assert [o.value for o in r.prefix] == ["a", (1, "b")]


def test_two_successful_cas_from_the_same_version():
    r = reg(read(1, 0, 1, "init", 0), read(2, 0, 1, "init", 0),
            cas(1, 2, 5, 0, "a", version=1), cas(2, 3, 6, 0, "b", version=1))
    assert r.valid is False
    assert r.op.f == "cas"
    assert "NOT linearizable" in r.explain()


def test_failed_cas_when_the_version_matched():
    # Nothing else wrote: a BadVersion answer for the current version is impossible.
    r = reg(read(1, 0, 1, "init", 0), cas(1, 2, 3, 0, "a", type=FAIL))
    assert r.valid is False and r.op.type == FAIL


def test_read_of_a_value_never_written():
    r = reg(write(1, 0, 1, "a", 1), read(2, 0.5, 2, "ghost", 1))
    assert r.valid is False
    assert r.op.output == ("ghost", 1)


def test_read_of_a_failed_write():
    r = reg(cas(1, 0, 1, 7, "a", type=FAIL), read(2, 2, 3, "a", 1))
    assert r.valid is False


def test_reads_going_back_in_time():
    # Two reads in sequence during a long write: new then old is not possible.
    r = reg(write(1, 0, 10, "a"), read(2, 1, 2, "a", 1), read(2, 3, 4, "init", 0))
    assert r.valid is False


# ---- unknown calls -------------------------------------------------------------------------------


def test_unknown_write_that_happened():
    h = [write(1, 0, None, "a", type=INFO), read(2, 5, 6, "a", 1), read(3, 7, 8, "a", 1)]
    assert reg(*h).valid is True


def test_unknown_write_that_never_happened():
    h = [write(1, 0, None, "a", type=INFO), read(2, 5, 6, "init", 0), write(2, 7, 8, "b", 1),
         read(3, 9, 10, "b", 1)]
    assert reg(*h).valid is True


def test_unknown_write_taking_effect_long_after_it_was_sent():
    # An unknown write may land after later calls of the same process.
    h = [cas(1, 0, None, 1, "late", type=INFO), write(1, 1, 2, "a", 1), read(2, 3, 4, "a", 1),
         read(2, 5, 6, "late", 2)]
    assert reg(*h).valid is True


def test_unknown_write_cannot_happen_before_its_invocation():
    h = [read(1, 0, 1, "late", 1), write(2, 2, None, "late", type=INFO)]
    assert reg(*h).valid is False


def test_unknown_write_cannot_come_back():
    # Seen, then overwritten, then seen again: it took effect only once.
    h = [write(1, 0, None, "a", type=INFO), read(2, 1, 2, "a", 1), write(2, 3, 4, "b", 2),
         read(2, 5, 6, "a", 1)]
    assert reg(*h).valid is False


def test_unseen_unknown_write_fills_a_version_gap():
    # Nobody read "a", but the acknowledged write got version 2: "a" made version 1.
    h = [write(1, 0, None, "a", type=INFO), write(2, 1, 2, "b", 2), read(3, 3, 4, "b", 2)]
    assert reg(*h).valid is True
    assert reg(*h[1:]).valid is False
    # Two unknown writes, one gap: one happened, the other not (or after everything).
    h = [write(1, 0, None, "a", type=INFO), cas(4, 0, None, 0, "c", type=INFO), write(2, 1, 2, "b", 2)]
    assert reg(*h).valid is True


def test_many_unknown_writes_stay_cheap():
    # Unknown writes that nobody saw and that no version gap needs cost the search nothing.
    h = [write(100 + i, 0.01 * i, None, "lost%d" % i, type=INFO) for i in range(40)]
    version = 0
    for i in range(400):
        version += 1
        h.append(cas(i % 5, 1 + i, 1.5 + i, version - 1, "v%d" % i, version=version))
        h.append(read(5, 1.6 + i, 1.9 + i, "v%d" % i, version))
    r = reg(*h)
    assert r.valid is True and r.steps < 2000, (r.valid, r.steps)


def test_unknown_read_is_ignored():
    h = [write(1, 0, 1, "a", 1), Op(2, "read", invoke=2, type=INFO), read(3, 3, 4, "a", 1)]
    assert reg(*h).valid is True


# ---- set ----------------------------------------------------------------------------------------


def test_set_concurrent_adds_and_reads():
    h = [add(1, 0, 5, "a"), add(2, 1, 6, "b"), sread(3, 2, 3, "b"), sread(4, 2, 4), sread(3, 7, 8, "a", "b"),
         add(1, 9, None, "c", type=INFO), sread(2, 10, 11, "a", "b")]
    r = check(GrowSet(), h)
    assert r.valid is True, r.explain()


def test_set_read_missing_an_acknowledged_add():
    h = [add(1, 0, 1, "a"), add(2, 0, 1, "b"), sread(3, 2, 3, "a")]
    r = check(GrowSet(), h)
    assert r.valid is False
    assert r.op.output == frozenset({"a"})
    assert "NOT linearizable" in r.explain()
    assert "the read lacks {b}" in r.explain(), r.explain()


def test_set_with_repeated_elements():
    # Not the workload's case (its elements are unique), but a set all the same.
    h = [add(1, 0, 1, "a"), add(2, 0, 1, "a"), sread(3, 2, 3, "a"), add(1, 4, None, "a", type=INFO),
         sread(3, 5, 6, "a")]
    assert check(GrowSet(), h).valid is True
    assert check(GrowSet(), h + [sread(3, 7, 8)]).valid is False


def test_set_reads_disagreeing_on_order():
    # Two concurrent adds; concurrent readers that see each only one of them cannot both be right.
    h = [add(1, 0, 10, "a"), add(2, 0, 10, "b"), sread(3, 1, 5, "a"), sread(4, 1, 5, "b")]
    assert check(GrowSet(), h).valid is False


def test_set_element_never_added_and_failed_add():
    assert check(GrowSet(), [add(1, 0, 1, "a"), sread(2, 2, 3, "a", "z")]).valid is False
    assert check(GrowSet(), [add(1, 0, 1, "a", type=FAIL), sread(2, 2, 3, "a")]).valid is False


def test_set_unknown_add_both_ways():
    assert check(GrowSet(), [add(1, 0, None, "a", type=INFO), sread(2, 1, 2)]).valid is True
    assert check(GrowSet(), [add(1, 0, None, "a", type=INFO), sread(2, 1, 2, "a")]).valid is True
    # ...but once seen it stays.
    assert check(GrowSet(), [add(1, 0, None, "a", type=INFO), sread(2, 1, 2, "a"), sread(2, 3, 4)]).valid is False


# ---- bounds and scale ----------------------------------------------------------------------------


def _random_register_history(seed, procs=5, n=600, unknown=0.05):
    """A history from a simulated linearizable register: each call takes effect at a
    random instant inside its interval; some outcomes are lost (info)."""
    rnd = random.Random(seed)
    t = [0.0] * procs
    events = []
    for i in range(n):
        p = rnd.randrange(procs)
        start = t[p] + rnd.random()
        end = start + rnd.random() * 3
        at = rnd.uniform(start, end)
        t[p] = end
        events.append((at, p, start, end, i))
    events.sort()
    value, version = INIT
    h = []
    for at, p, start, end, i in events:
        kind = rnd.choice(["read", "read", "write", "cas", "cas"])
        if kind == "read":
            h.append(read(p, start, end, value, version))
        elif kind == "write":
            version += 1
            value = "v%d" % i
            h.append(write(p, start, end, value, version, type=INFO if rnd.random() < unknown else OK))
        else:
            expect = version if rnd.random() < 0.7 else version + 1
            if expect == version:
                version += 1
                value = "v%d" % i
                h.append(cas(p, start, end, expect, value, version=version,
                             type=INFO if rnd.random() < unknown else OK))
            else:
                h.append(cas(p, start, end, expect, "v%d" % i, type=FAIL))
    return h


def test_large_random_linearizable_history():
    h = _random_register_history(1)
    r = check(VersionedRegister(INIT), h)
    assert r.valid is True, r.explain()


def test_random_history_with_many_unknown_writes():
    # A fifth of the writes unknown: some seen by reads, some filling versions nobody saw.
    for seed in (4, 5, 6):
        h = _random_register_history(seed, n=1500, unknown=0.2)
        assert sum(1 for o in h if o.type == INFO) > 50
        r = check(VersionedRegister(INIT), h, budget=200000)
        assert r.valid is True, r.explain()


def test_large_random_history_with_one_stale_read():
    h = _random_register_history(2)
    # Make a late read return the initial state: stale.
    reads = [o for o in h if o.f == "read" and o.output[1] > 3]
    reads[len(reads) // 2].output = INIT
    r = check(VersionedRegister(INIT), h)
    assert r.valid is False
    assert r.op.output == INIT


def test_bounds_answer_unknown():
    h = _random_register_history(3, n=300)
    assert check(VersionedRegister(INIT), h, max_ops=10).valid == "unknown"
    r = check(VersionedRegister(INIT), h, budget=50)
    assert r.valid == "unknown" and "budget" in r.reason
    with pytest.raises(AssertionError):
        Op(1, "write", "a", invoke=0, complete=None, type=OK)
