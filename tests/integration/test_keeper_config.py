"""kipper's own promises about zoo.cfg (src/base/config.h): unknown keys are
warned about, never silently ignored; a bad value is a clear start-up error
naming the key.  ZooKeeper behaves differently here, so these are kipper-only."""
import shutil
import subprocess

import pytest

from harness import KIPPER, Keeper, wait_until


@pytest.mark.kipper_only(reason="kipper's promise: unknown zoo.cfg keys are warned about")
def test_unknown_key_is_warned_about(make_keeper):
    """An unknown zoo.cfg key is named in a warning and the keeper still serves."""
    server = make_keeper(extra={"noSuchSetting.forTesting": "1"})
    wait_until(lambda: "noSuchSetting.forTesting" in server.log(), timeout=5,
               what="a log line naming the unknown key")


@pytest.mark.kipper_only(reason="kipper's promise: a bad value is a clear error at start-up with the key named")
@pytest.mark.parametrize("key,value", [("tickTime", "abc"), ("maxClientCnxns", "-3"),
                                       ("clientPort", "99999")])
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


@pytest.mark.kipper_only(reason="issue 14: zoo.cfg keys whose silent absence would break a migrated ensemble")
@pytest.mark.parametrize("key,value", [("dynamicConfigFile", "/etc/zookeeper/zoo.cfg.dynamic.100000000"),
                                       ("peerType", "observer"), ("sslQuorum", "true"),
                                       ("quorum.auth.enableSasl", "true"), ("secureClientPort", "2281")])
def test_unsupported_ensemble_key_stops_startup_naming_it(key, value):
    """A key kipper cannot honour, where ignoring it would change what the member is (a
    standalone server on an ensemble's data, a voting observer, plaintext where TLS or SASL is
    required), stops the keeper at once with a message naming the key
    (docs/migrating-from-zookeeper.md); set to false, the security keys are accepted."""
    k = Keeper(extra={key: value})
    k.write_config()
    run = subprocess.run([KIPPER, "keeper", k.cfg_path], cwd=k.workdir, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    output = run.stdout.decode(errors="replace")
    shutil.rmtree(k.workdir, ignore_errors=True)
    assert run.returncode != 0, output
    assert key in output and "not supported by kipper" in output, output


@pytest.mark.kipper_only(reason="issue 14: quorum security keys set to false are accepted")
def test_security_keys_set_to_false_are_accepted(make_keeper):
    server = make_keeper(extra={"sslQuorum": "false", "quorum.auth.enableSasl": "false", "peerType": "participant"})
    assert "unknown key" not in server.log()
