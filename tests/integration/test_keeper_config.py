"""kipper's own promises about zoo.cfg (src/base/config.h): unknown keys are
warned about, never silently ignored; a bad value is a clear start-up error
naming the key.  ZooKeeper behaves differently here, so these are kipper-only."""
import shutil
import subprocess

import pytest

from harness import KIPPER, Keeper, free_port, wait_until


@pytest.mark.kipper_only(reason="kipper's promise: unknown zoo.cfg keys are warned about")
def test_unknown_key_is_warned_about(make_keeper):
    """An unknown zoo.cfg key is named in a warning and the keeper still serves."""
    server = make_keeper(extra={"noSuchSetting.forTesting": "1"})
    wait_until(lambda: "noSuchSetting.forTesting" in server.log(), timeout=5,
               what="a log line naming the unknown key")


@pytest.mark.kipper_only(reason="kipper's promise: a bad value is a clear error at start-up with the key named")
@pytest.mark.parametrize("key,value", [("tickTime", "abc"), ("maxClientCnxns", "-3"),
                                       ("clientPort", "99999"), ("readonlymode.enabled", "sometimes"),
                                       ("zookeeper.readonlymode.enabled", "2")])
def test_bad_value_stops_startup_naming_the_key(key, value):
    """A bad value for a known key makes the keeper exit non-zero at once, naming the key."""
    k = Keeper(extra={key: value})
    k.write_config()
    run = subprocess.run([KIPPER, "keeper", k.cfg_path], cwd=k.workdir, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    output = run.stdout.decode(errors="replace")
    assert run.returncode != 0, output
    assert key in output
    shutil.rmtree(k.workdir, ignore_errors=True)


def start_and_fail(extra):
    """Run `kipper keeper` on a zoo.cfg with extra keys: (exit status, output)."""
    k = Keeper(extra=extra)
    k.write_config()
    try:
        run = subprocess.run([KIPPER, "keeper", k.cfg_path], cwd=k.workdir, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
        return run.returncode, run.stdout.decode(errors="replace")
    finally:
        shutil.rmtree(k.workdir, ignore_errors=True)


@pytest.mark.kipper_only(reason="kipper does not implement quorum SASL or TLS yet (issue 14)")
@pytest.mark.parametrize("key,value", [("sslQuorum", "true"), ("quorum.auth.enableSasl", "true"),
                                       ("quorum.auth.serverRequireSasl", "true"), ("portUnification", "true"),
                                       ("secureClientPort", "2281")])
def test_security_a_migrated_ensemble_asks_for_is_refused_naming_the_key(key, value):
    """A zoo.cfg that turns on quorum SASL or TLS, or a TLS client port, stops the
    keeper at start-up with a line naming the key: it never runs an ensemble
    without the protection its configuration asks for."""
    rc, output = start_and_fail({key: value})
    assert rc != 0, output
    assert key in output and "kipper does not" in output, output


@pytest.mark.kipper_only(reason="kipper does not implement quorum SASL or TLS yet (issue 14)")
def test_security_tuning_keys_with_the_feature_off_are_accepted(make_keeper):
    """The keys that only tune quorum SASL or TLS (key stores, login contexts) and
    the switches set to false are accepted -- named in an info line, not warned
    about as unknown -- and the keeper serves."""
    tuning = {"sslQuorum": "false", "quorum.auth.enableSasl": "false",
              "ssl.quorum.keyStore.location": "/etc/zk/quorum.jks", "ssl.quorum.hostnameVerification": "false",
              "quorum.auth.learner.saslLoginContext": "QuorumLearner"}
    server = make_keeper(extra=tuning)
    from kazoo.client import KazooClient
    c = KazooClient(hosts="127.0.0.1:%d" % server.port)
    c.start(timeout=10)
    try:
        c.create("/served", b"x")
        assert c.get("/served")[0] == b"x"
    finally:
        c.stop()
        c.close()
    log = server.log()
    for key in tuning:
        assert key in log, (key, log[-3000:])
        assert "unknown key '%s'" % key not in log, log[-3000:]


@pytest.mark.kipper_only(reason="kipper's own wording of an unreadable dynamicConfigFile")
def test_unreadable_dynamic_config_file_stops_startup_naming_it():
    """dynamicConfigFile holds the server.N lines (ZooKeeper moves them there with reconfigEnabled);
    one that cannot be read stops the keeper at once with a message naming the key, rather than
    leaving a standalone server on an ensemble's data (docs/migrating-from-zookeeper.md)."""
    rc, output = start_and_fail({"dynamicConfigFile": "/nonexistent/zoo.cfg.dynamic.100000000"})
    assert rc != 0, output
    assert "dynamicConfigFile cannot be read" in output and "No such file" in output, output


@pytest.mark.kipper_only(reason="kipper's own wording of a bad peerType")
def test_bad_peer_type_or_observers_only_stop_startup():
    """peerType is observer or participant, as QuorumPeerConfig has it; an ensemble whose
    server.N lines are all observers has nobody to vote, and does not start."""
    rc, output = start_and_fail({"peerType": "watcher"})
    assert rc != 0 and "peerType must be observer or participant" in output, output
    rc, output = start_and_fail({"server.1": "127.0.0.1:%d:%d:observer" % (free_port(), free_port())})
    assert rc != 0 and "every server.N line is an observer" in output, output
