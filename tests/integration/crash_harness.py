"""Run one dbt command in a process that SIGKILLs itself, and its Spark JVM, at a chosen point.

Used by test_reliability_crash.py as ``python crash_harness.py spec.json``. The process runs in
its own process group (the caller starts it with ``start_new_session``); killing the group takes the
dbt process and the JVM it launched down at once, as a machine crash or the OOM killer would. The
kill point is the N-th statement dbt sends to Spark in this process (every SQL statement through
dbt-spark's cursor and every Python model), either before it starts (``delay`` 0) or ``delay``
seconds after it started (mid-write when the statement takes that long).

The spec (JSON): project_dir, profiles_dir and ``steps``, a list of steps run in order in this
process (a step that fails ends the process). A step has args (the dbt command) and optionally
- land: {"schema": ..., "tables": {table: [message, ...]}}: appended first, before any kill point
  can fire (landing is the connector's job, not the run under test);
- kill_at, delay: the kill point, counted from the start of this step's command (0 or absent: never);
- kill_when: a path; the kill fires as soon as it exists (a write's ``_temporary`` directory: killed
  mid-write, whatever the statement's number and timing);
- kill_on_new_file: a Delta Lake or Iceberg table's directory; the kill fires as soon as a data file
  appears there that was not there when the step began (a MERGE has begun writing; its commit, in
  ``_delta_log`` or ``metadata``, has not happened);
- dump: {name: sql}: queries run after a successful command, results written to ``dump_path``;
- stats_path: where the number of statements and the outcome are written.
Several steps in one process spare a JVM start: a completing run and the next batch's killed run
share one process, as a scheduler that re-runs a job and then runs the next would.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.helpers.snapshots import rows


def _kill_group() -> None:
    os.killpg(os.getpgrp(), signal.SIGKILL)


class KillPoint:
    """Counts statements; fires the kill at the chosen one."""

    def __init__(self) -> None:
        self.kill_at = 0
        self.delay = 0.0
        self.count = 0
        self.active = False
        self.timer: threading.Timer | None = None
        self.watch: str | None = None

    def arm(
        self, kill_at: int, delay: float, kill_when: str | None = None, kill_on_new_file: str | None = None
    ) -> None:
        """Count from zero, and fire at statement ``kill_at`` (0: never), or as soon as the path
        ``kill_when`` exists. A delayed kill of an earlier step that has not fired yet is called off:
        it belongs to that step."""
        if self.timer is not None:
            self.timer.cancel()
        self.kill_at, self.delay, self.count, self.active = kill_at, delay, 0, True
        self.watch = kill_when or kill_on_new_file
        if kill_when:
            self._start_watch(kill_when, lambda: os.path.exists(kill_when))
        if kill_on_new_file:
            before = _data_files(kill_on_new_file)
            self._start_watch(kill_on_new_file, lambda: bool(_data_files(kill_on_new_file) - before))

    def disarm(self) -> None:
        self.active, self.watch = False, None

    def _start_watch(self, path: str, fired: Callable[[], bool]) -> None:
        """Kill as soon as ``fired()`` holds, polled while ``path`` is watched (until disarm)."""

        def watch() -> None:
            while self.watch == path:
                if fired():
                    _kill_group()
                time.sleep(0.002)

        threading.Thread(target=watch, daemon=True).start()

    def step(self) -> None:
        if not self.active:
            return
        self.count += 1
        if self.count != self.kill_at:
            return
        if self.delay <= 0:
            _kill_group()
        self.timer = threading.Timer(self.delay, _kill_group)
        self.timer.daemon = True
        self.timer.start()


def _data_files(table_dir: str) -> set[str]:
    """Files under a lakehouse table's directory, outside its log (Delta's ``_delta_log``, Iceberg's
    ``metadata``)."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(table_dir):
        dirs[:] = [d for d in dirs if d not in ("_delta_log", "metadata")]
        found.update(os.path.join(folder, f) for f in files)
    return found


def install(point: KillPoint) -> None:
    """Count every statement dbt-spark's session cursor runs and every Python model it submits."""
    from dbt.adapters.spark.session import Cursor
    from dbt_spark_cdc.session import SessionPythonJobHelper

    execute = Cursor.execute
    submit = SessionPythonJobHelper.submit

    def counted_execute(self: Any, sql: str, *parameters: Any) -> None:
        point.step()
        execute(self, sql, *parameters)

    def counted_submit(self: Any, compiled_code: str) -> None:
        point.step()
        submit(self, compiled_code)

    Cursor.execute = counted_execute  # type: ignore[method-assign]
    SessionPythonJobHelper.submit = counted_submit  # type: ignore[method-assign]


def run_step(runner: Any, common: list[str], point: KillPoint, step: dict[str, Any]) -> bool:
    """One step of the spec: land, run the command (with its kill point armed), write stats and dump."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from tests.helpers.landing import land_messages

    if step.get("land"):
        if SparkContext._active_spark_context is None:
            debug = runner.invoke(["debug", *common])
            if not debug.success:
                print(f"crash_harness: dbt debug failed: {debug.exception}", file=sys.stderr)
                return False
        spark = SparkSession.builder.getOrCreate()
        for table, messages in step["land"]["tables"].items():
            land_messages(spark, step["land"]["schema"], table, messages)
    point.arm(
        int(step.get("kill_at") or 0),
        float(step.get("delay") or 0),
        step.get("kill_when"),
        step.get("kill_on_new_file"),
    )
    result = runner.invoke([*step["args"], *common])
    point.disarm()
    outcome = {"statements": point.count, "success": bool(result.success)}
    if not result.success:
        messages = [str(r.message) for r in getattr(result.result, "results", None) or []]
        outcome["messages"] = messages or [str(result.exception)]
    if step.get("stats_path"):
        Path(step["stats_path"]).write_text(json.dumps(outcome))
    if result.success and step.get("dump"):
        spark = SparkSession.builder.getOrCreate()
        dump = {name: rows(spark, sql) for name, sql in step["dump"].items()}
        Path(step["dump_path"]).write_text(json.dumps(dump))
    return bool(result.success)


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    from dbt.cli.main import dbtRunner

    point = KillPoint()
    install(point)
    common = ["--project-dir", spec["project_dir"], "--profiles-dir", spec["profiles_dir"]]
    runner = dbtRunner()
    for step in spec["steps"]:
        if not run_step(runner, common, point, step):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
