"""One process at a time on an embedded (Derby) Hive metastore, with a message users can act on.

Embedded Derby lets one JVM open a database. Without this lock, a second ``dbt build`` started
while the first runs would get Spark's Hive client error deep in its first query (or, worse, a
half-started catalog). Before dbt-spark's session starts, the plugin takes an exclusive lock on a
file next to the metastore database. The kernel drops the lock when its process ends, however it
ends (a SIGKILLed run leaves no stale lock). The second run waits up to
``SPARK_CDC_LOCK_TIMEOUT`` seconds (default 0) and then fails, naming the holder and the fix.

A shared metastore (``jdbc:derby://`` network server, MySQL, PostgreSQL, a Hive metastore service)
is not locked here: concurrent runs on it must be serialised by the scheduler (see README).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import sys
import time
from typing import IO, Any

#: Environment variable: seconds a run waits for the metastore held by another process.
TIMEOUT_ENV = "SPARK_CDC_LOCK_TIMEOUT"
_URL_KEY = "spark.hadoop.javax.jdo.option.ConnectionURL"
_POLL_SECONDS = 0.5

_held: IO[str] | None = None
_failed = False


class MetastoreBusyError(RuntimeError):
    """Another process holds the embedded metastore."""


def embedded_metastore_path(params: dict[str, Any], cwd: str | None = None) -> str | None:
    """The embedded Derby database directory the session will open, or None when not embedded.

    Mirrors Spark's defaults: without a ConnectionURL, Hive opens ``metastore_db`` in
    ``derby.system.home`` (from ``spark.driver.extraJavaOptions``) or the working directory.
    """
    url = str(params.get(_URL_KEY) or "jdbc:derby:;databaseName=metastore_db;create=true")
    if not url.startswith("jdbc:derby:") or url.startswith("jdbc:derby://"):
        return None
    match = re.search(r"(?:^jdbc:derby:|;databaseName=)([^;]+)", url)
    if match is None:
        return None
    name = match.group(1)
    if name.startswith("memory:"):
        return None
    if os.path.isabs(name):
        return os.path.normpath(name)
    home = re.search(r"-Dderby\.system\.home=(\S+)", str(params.get("spark.driver.extraJavaOptions") or ""))
    base = home.group(1) if home else (cwd or os.getcwd())
    return os.path.normpath(os.path.join(base, name))


def _timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV, "0")
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise MetastoreBusyError(
            f"spark_cdc: {TIMEOUT_ENV}={raw!r} is not a number of seconds. "
            "Fix: set it to the seconds to wait (e.g. 600), or unset it."
        ) from None


def _holder(handle: IO[str]) -> str:
    handle.seek(0)
    try:
        info = json.loads(handle.read() or "{}")
    except ValueError:
        return "another process"
    if not isinstance(info, dict):
        return "another process"
    return f"process {info.get('pid')} (`{info.get('command', '?')}`, since {info.get('since', '?')})"


def acquire(params: dict[str, Any]) -> str | None:
    """Lock the embedded metastore ``params`` point at for the rest of this process.

    Returns the lock file's path (None when the metastore is not embedded). Idempotent.
    """
    global _held, _failed
    path = embedded_metastore_path(params)
    if path is None:
        return None
    lock_path = path + ".spark_cdc.lock"
    if _held is not None:
        return lock_path
    # Wait once per process: after a timeout, later queries of the same run fail at once.
    deadline = time.monotonic() + (0.0 if _failed else _timeout())
    os.makedirs(os.path.dirname(lock_path) or ".", exist_ok=True)
    handle = open(lock_path, "a+", encoding="utf-8")  # noqa: SIM115 (held for the process's lifetime)
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                holder = _holder(handle)
                handle.close()
                _failed = True
                raise MetastoreBusyError(
                    f"spark_cdc: the embedded Hive metastore {path} is in use by {holder}; embedded "
                    "Derby lets one process open it at a time, so this run stopped before reading or "
                    f"writing anything. Fix: wait for that run to finish and run again, or set "
                    f"{TIMEOUT_ENV}=<seconds> to wait for it; for concurrent runs use a shared metastore "
                    "(spark.hadoop.javax.jdo.option.ConnectionURL in the profile's server_side_parameters)."
                ) from None
            time.sleep(_POLL_SECONDS)
    handle.seek(0)
    handle.truncate()
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:200]
    handle.write(json.dumps({"pid": os.getpid(), "command": command, "since": since}))
    handle.flush()
    _held = handle
    return lock_path
