"""Print what Apache ZooKeeper 3.8 does on dynamic reconfiguration, for the record
(the facts test_keeper_reconfig.py asserts). Not a test; run by hand:

    KIPPER_TEST_TARGET=zookeeper /usr/bin/python3 tests/integration/zk_reconfig_facts.py

(or with the default target, to see what kipper does). Starts a 3-member ensemble
with reconfigEnabled=true and the super digest (ensemble.py), and prints every
member's config files at each step, /zookeeper/config's bytes and Stat, reconfig
answers and errors.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ensemble  # noqa: E402
from kazoo import exceptions as ke  # noqa: E402


def files(ens, what):
    print("=== config files %s" % what)
    for m in ens.members:
        for name, text in m.config_files().items():
            print("--- m%d %s (%s)\n%s" % (m.sid, name, m.kind, text))


def try_(label, fn):
    try:
        r = fn()
        print("### %s -> OK %r" % (label, r))
        return r
    except Exception as exc:
        print("### %s -> %s %r (code %s)" % (label, type(exc).__name__, exc, getattr(exc, "code", None)))
        return None


def main():
    ens = ensemble.Ensemble(3, reconfig_enabled=True)
    try:
        ens.start()
        print("leader", ens.leader().sid)
        files(ens, "after start")
        su = ens.super_client(ens.leader())
        c = ens.client(ens.leader())
        data, st = c.get("/zookeeper/config")
        print("/zookeeper/config %r\n  stat %r" % (data, st))
        print("children /zookeeper", c.get_children("/zookeeper"))
        print("acl", c.get_acls("/zookeeper/config"))
        try_("no auth", lambda: c.reconfig(joining="server.9=127.0.0.1:1:2;3", leaving=None, new_members=None))
        for bad in ("some thing", "server.9=127.0.0.1", "server.x=127.0.0.1:1:2", "server.9=127.0.0.1:1:2:bogus",
                    "server.9=127.0.0.1:1:2;", "server.9=127.0.0.1:1:2;abc"):
            try_("bad joining %r" % bad, lambda: su.reconfig(joining=bad, leaving=None, new_members=None))
        try_("bad leaving 'abc'", lambda: su.reconfig(joining=None, leaving="abc", new_members=None))
        try_("leaving 99 (not a member)", lambda: su.reconfig(joining=None, leaving="99", new_members=None))
        try_("nothing", lambda: su.reconfig(joining=None, leaving=None, new_members=None))
        ver = int(data.decode().split("version=")[1], 16)
        try_("from_config +1", lambda: su.reconfig(joining=None, leaving="99", new_members=None,
                                                  from_config=ver + 1))
        try_("participant not running", lambda: su.reconfig(
            joining="server.9=127.0.0.1:%d:%d:participant;127.0.0.1:%d" % tuple(ensemble._free_ports(3)),
            leaving=None, new_members=None))
        r = try_("observer not running", lambda: su.reconfig(
            joining="server.9=127.0.0.1:%d:%d:observer;127.0.0.1:%d" % tuple(ensemble._free_ports(3)),
            leaving=None, new_members=None))
        if r:
            print("reply data %r\n reply stat %r" % r)
            files(ens, "after adding observer 9 (not running)")
            time.sleep(0.5)
            files(ens, "0.5 s later")
            data, st = c.get("/zookeeper/config")
            print("/zookeeper/config %r\n  stat %r" % (data, st))
            r = try_("remove observer 9", lambda: su.reconfig(joining=None, leaving="9", new_members=None))
        # a 4th participant
        m4 = ens.add_member()
        files(ens, "m4 started (zoo.cfg: current + itself)")
        time.sleep(1.0)
        print("m4 srvr:", ens.srvr(m4, timeout=2.0))
        r = try_("add participant 4", lambda: su.reconfig(joining=ens.joining(m4), leaving=None, new_members=None))
        if r:
            print("reply data %r\n reply stat %r" % r)
            ens.mark_config(r[0].decode())
            ens.wait_ready()
            files(ens, "after adding 4")
        # two reconfigs at once
        a = su.reconfig_async(joining=None, leaving="4", new_members=None, from_config=-1)
        b = su.reconfig_async(joining=ens.joining(m4), leaving=None, new_members=None, from_config=-1)
        for lbl, ar in (("concurrent remove 4", a), ("concurrent add 4", b)):
            try_(lbl, lambda: ar.get(timeout=10))
        data, st = su.get("/zookeeper/config")
        print("/zookeeper/config %r\n  stat %r" % (data, st))
        ens.mark_config(data.decode())
        if 4 in ens.config_ids:
            r = try_("remove 4", lambda: su.reconfig(joining=None, leaving="4", new_members=None))
            if r:
                ens.mark_config(r[0].decode())
        time.sleep(1.0)
        print("m4 after removal: running=%s srvr=%r" % (m4.running(), _srvr(ens, m4)))
        files(ens, "after removing 4")
        leader = ens.leader()
        r = try_("remove the leader %d" % leader.sid,
                 lambda: su.reconfig(joining=None, leaving=str(leader.sid), new_members=None))
        if r:
            print("reply data %r\n reply stat %r" % r)
            ens.mark_config(r[0].decode())
            time.sleep(2.0)
            print("modes", {m.sid: ens.mode(m) for m in ens.members})
            print("old leader srvr", _srvr(ens, leader))
            files(ens, "after removing the leader")
            nl = ens.wait_ready(timeout=30)
            su2 = ens.super_client(nl)
            r = try_("re-add %d" % leader.sid, lambda: su2.reconfig(joining=ens.joining(leader), leaving=None,
                                                                     new_members=None))
            if r:
                ens.mark_config(r[0].decode())
                time.sleep(2.0)
                print("modes", {m.sid: ens.mode(m) for m in ens.members})
        # restart every member on its own files
        for m in ens.in_config():
            ens.stop(m)
        ens.start(wait=False)
        for m in ens.in_config():
            if not m.running():
                m.launch()
        ens.wait_ready(timeout=60)
        files(ens, "after a restart of all")
        c = ens.client(ens.leader())
        data, st = c.get("/zookeeper/config")
        print("/zookeeper/config %r\n  stat %r" % (data, st))
        print("conf 4lw of leader:\n" + ensemble.four_letter_word(ens.leader().port, "conf"))
        su = ens.super_client(ens.leader())
        lines = [l for l in data.decode().splitlines() if l.startswith("server.")]
        r = try_("new_members = the same members, listed again",
                 lambda: su.reconfig(joining=None, leaving=None, new_members=",".join(lines)))
        r = try_("joining and new_members both (joining an observer not running)",
                 lambda: su.reconfig(joining="server.9=127.0.0.1:%d:%d:observer;127.0.0.1:%d"
                                     % tuple(ensemble._free_ports(3)), leaving=None, new_members=",".join(lines)))
    finally:
        ens.close()
        print("workdir", ens.workdir)
    ens = ensemble.Ensemble(3, reconfig_enabled=False)
    try:
        ens.start()
        files(ens, "reconfigEnabled=false, after start")
        c = ens.client(ens.leader())
        data, st = c.get("/zookeeper/config")
        print("/zookeeper/config %r\n  stat %r" % (data, st))
        su = ens.client(ens.leader(), auth_data=[ensemble.SUPER_AUTH])
        ar = su.reconfig_async(joining=None, leaving="3", new_members=None, from_config=-1)
        try_("reconfigEnabled=false (super)", lambda: ar.get(timeout=5))
    finally:
        ens.close()
        print("workdir", ens.workdir)


def _srvr(ens, m):
    try:
        return ens.srvr(m, timeout=1.0)
    except Exception as exc:
        return repr(exc)


if __name__ == "__main__":
    main()
