"""metastore_lock.py without a JVM: which metastore is embedded, and one process at a time on it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dbt_spark_cdc import metastore_lock

URL = "spark.hadoop.javax.jdo.option.ConnectionURL"


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, "/work/metastore_db"),
        ({URL: "jdbc:derby:;databaseName=/data/ms;create=true"}, "/data/ms"),
        ({URL: "jdbc:derby:/data/ms2;create=true"}, "/data/ms2"),
        ({URL: "jdbc:derby:;databaseName=rel/ms;create=true"}, "/work/rel/ms"),
        (
            {
                URL: "jdbc:derby:;databaseName=ms;create=true",
                "spark.driver.extraJavaOptions": "-Dderby.system.home=/h -Xss4m",
            },
            "/h/ms",
        ),
        ({URL: "jdbc:derby://db:1527/ms;create=true"}, None),  # network server: shared
        ({URL: "jdbc:derby:memory:ms;create=true"}, None),
        ({URL: "jdbc:postgresql://db/hive"}, None),
    ],
)
def test_embedded_metastore_path(params: dict[str, str], expected: str | None) -> None:
    assert metastore_lock.embedded_metastore_path(params, cwd="/work") == expected


HOLD = f"""
import sys, time
from dbt_spark_cdc import metastore_lock
metastore_lock.acquire({{"{URL}": "jdbc:derby:;databaseName=" + sys.argv[1]}})
print("held", flush=True)
time.sleep(60)
"""


@pytest.fixture
def fresh_lock_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metastore_lock, "_held", None)
    monkeypatch.setattr(metastore_lock, "_failed", False)


def test_second_process_fails_naming_the_holder_then_succeeds_once_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_lock_state: None
) -> None:
    db = str(tmp_path / "ms")
    params = {URL: f"jdbc:derby:;databaseName={db};create=true"}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, db], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setenv(metastore_lock.TIMEOUT_ENV, "1")
        started = time.monotonic()
        with pytest.raises(metastore_lock.MetastoreBusyError) as caught:
            metastore_lock.acquire(params)
        assert time.monotonic() - started >= 1  # it waited for the holder
        message = str(caught.value)
        assert db in message and f"process {holder.pid}" in message
        assert metastore_lock.TIMEOUT_ENV in message and "Fix:" in message
        # The same run does not wait again.
        started = time.monotonic()
        with pytest.raises(metastore_lock.MetastoreBusyError):
            metastore_lock.acquire(params)
        assert time.monotonic() - started < 1
    finally:
        holder.kill()  # SIGKILL: the kernel releases the lock, nothing is left to clean up
        holder.wait()
    assert metastore_lock.acquire(params) == db + ".spark_cdc.lock"
    assert str(os.getpid()) in Path(db + ".spark_cdc.lock").read_text()


def test_waits_for_a_holder_that_finishes_within_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_lock_state: None
) -> None:
    db = str(tmp_path / "ms")
    short = HOLD.replace("time.sleep(60)", "time.sleep(1)")
    holder = subprocess.Popen([sys.executable, "-c", short, db], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setenv(metastore_lock.TIMEOUT_ENV, "30")
        assert metastore_lock.acquire({URL: f"jdbc:derby:;databaseName={db}"}) == db + ".spark_cdc.lock"
    finally:
        holder.kill()
        holder.wait()


def test_not_a_number_names_the_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_lock_state: None
) -> None:
    monkeypatch.setenv(metastore_lock.TIMEOUT_ENV, "ten minutes")
    with pytest.raises(metastore_lock.MetastoreBusyError, match=metastore_lock.TIMEOUT_ENV):
        metastore_lock.acquire({URL: f"jdbc:derby:;databaseName={tmp_path / 'ms'}"})
