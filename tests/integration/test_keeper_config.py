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
