"""A 3-member keeper ensemble under hostile or careless load (issue 11): a flood of
pipelined writes to a leader that cannot commit (its followers are stopped):
globalOutstandingLimit holds, and everything is answered once they return.

These test kipper's own bounds, so kipper only."""
import os

import pytest

import conftest
from ensemble import Ensemble
from harness import wait_until
from zkwire import OP, Writer, WireClient, enc_set_data, frame

GLOBAL_OUTSTANDING = 50


@pytest.fixture(scope="module")
def ensemble3(request):
    # syncLimit 50 ticks (10 s): a leader whose followers are stopped keeps its role
    # long enough to watch its outstanding requests pile up (see the last test).
    e = Ensemble(3, sync_limit=50, extra={"globalOutstandingLimit": GLOBAL_OUTSTANDING})
    try:
        e.start()
        yield e
    finally:
        rcs = e.close()
        if request.module.__name__ in conftest._FAILED_MODULES or os.environ.get("KIPPER_TEST_KEEP"):
            print("kept %s" % e.workdir)
        else:
            e.cleanup()
        bad = {sid: rc for sid, rc in rcs.items() if rc not in (0, -15, None)}
        assert not bad, "members exited with %s" % bad


@pytest.fixture
def ens(ensemble3):
    ensemble3.heal()
    ensemble3.close_clients()
    try:
        yield ensemble3
    finally:
        ensemble3.close_clients()


@pytest.mark.kipper_only(reason="issue 11: globalOutstandingLimit counts the writes waiting for the quorum")
def test_global_outstanding_limit_holds_while_the_quorum_is_away(ens):
    """Eight connections pipeline 100 writes each to a leader whose followers are
    stopped: nothing can commit, and the leader takes no more than
    globalOutstandingLimit (plus one per connection) of them; once the followers are
    back every write is answered, in order."""
    leader = ens.leader()
    conns = []
    try:
        for i in range(8):
            w = WireClient(leader.port, timeout=60)
            conns.append(w)
            w.connect(timeout_ms=30000)
            w.create("/gol-%d" % i, b"")
        for f in ens.followers():
            ens.pause(f)
        for i, w in enumerate(conns):
            w.sock.sendall(b"".join(
                frame(Writer().int(xid).int(OP.SET_DATA).raw(enc_set_data("/gol-%d" % i, b"x")).bytes())
                for xid in range(100, 200)))

        def outstanding():
            return int(ens.mntr(leader)["zk_outstanding_requests"])
        wait_until(lambda: outstanding() >= GLOBAL_OUTSTANDING, timeout=5, what="the leader to fill up")
        seen = max(outstanding() for _ in range(10))
        assert seen <= GLOBAL_OUTSTANDING + len(conns), "%d requests outstanding" % seen
    finally:
        for f in ens:
            if f.paused:
                ens.resume(f)
    for w in conns:
        for xid in range(100, 200):
            hdr, _ = w.read_reply(xid, timeout=60)
            assert hdr.err == 0
        w.close()
