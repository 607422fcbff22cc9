"""Distributed run: a Spark standalone master and two workers on loopback, from the installed pyspark.

The executors' Python is a wrapper that puts a poisoned ``dbt_spark_cdc`` first on the path (any
import of the package on an executor fails) and records where it ran, so the UDFs must reach the
executors by value, and the test can see that both workers ran Python tasks. The profile is the
integration project's, with only ``spark.master`` changed (SPARK_CDC_MASTER); the master, the
workers and the executors run with the -XX: flags it gives the driver (driver_jvm_flags).

One pytest session runs on the cluster, in a subprocess (one driver, one set of executors):
1. the demo (the real Debezium corpus, `dbt build` of the integration project's Debezium models and
   their contract tests; cluster_demo.py): every table and view it builds must equal the same build
   run locally in this process;
2. in the long form, conformance tests, unchanged: the assertions that pass locally must pass there.

Short form (`make test`): the demo's three targets (SCD1, SCD2 and SCD2 on a column subset, fed by the
Debezium staging: type-decoding UDFs on the executors) with the package's models and every contract
test on them. SPARK_CDC_CLUSTER_TESTS=all (`make test-long`) builds every Debezium model of the
demo project with its contract tests (the UDF smoke models aside) and runs all five formats'
conformance modules on the cluster (the CRC32C, reassembly and mask UDFs on the
executors too). Until 2026-11-27 the short form also ran one DSQL conformance test there (the
session on the cluster took 332 s with it, 217 s without it); every UDF reaches the executors the
same way (README, Reliability).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from tests.helpers.demo import DEMO_TARGETS, LONG, build_demo
from tests.helpers.landing import DbtProject
from tests.helpers.snapshots import stable

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SHORT: list[str] = []  # the demo only (cluster_demo.py)
ALL = [
    "test_debezium_types.py",
    "test_aurora_dsql.py",
    "test_qlik_replicate.py",
    "test_ydb.py",
    "test_cockroachdb.py",
]
WORKERS = 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def driver_jvm_flags() -> str:
    """The -XX: flags of the integration profile's spark.driver.extraJavaOptions."""
    profile = yaml.safe_load((ROOT / "integration_tests" / "profiles.yml").read_text())
    parameters = profile["spark_cdc_integration_tests"]["outputs"]["embedded"]["server_side_parameters"]
    flags = [f for f in str(parameters["spark.driver.extraJavaOptions"]).split() if f.startswith("-XX:")]
    assert flags, "integration_tests/profiles.yml: no -XX: flag in spark.driver.extraJavaOptions"
    return " ".join(flags)


@contextlib.contextmanager
def standalone_cluster(path: Path) -> Iterator[str]:
    """A master and WORKERS workers (1 core, 2 GiB each); yields the master URL."""
    import pyspark

    home = Path(pyspark.__file__).parent
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
    # The master, the workers and the executors the workers start (they inherit the workers'
    # environment) run with the JIT and GC flags the profile gives the driver. Alone, the session on
    # the cluster took 72 s without them and 60 s with them, the whole test 210 s of the machine's
    # CPU and 180 s (measured 2026-11-28).
    inherited = os.environ.get("JAVA_TOOL_OPTIONS")
    env["JAVA_TOOL_OPTIONS"] = " ".join(filter(None, [inherited, driver_jvm_flags()]))
    port, ui = free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    cls = str(home / "bin" / "spark-class")
    commands = [[cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port)]]
    commands[0] += ["--webui-port", str(ui)]
    for n in range(WORKERS):
        work = path / f"worker{n}"
        work.mkdir(parents=True)
        worker = [cls, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1"]
        worker += ["--memory", "2g", "--work-dir", str(work), "--webui-port", str(free_port()), url]
        commands.append(worker)
    procs = []
    try:
        for i, command in enumerate(commands):
            log = open(path / f"daemon{i}.log", "w")  # noqa: SIM115 (closed with the process)
            procs.append(
                (
                    subprocess.Popen(
                        command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                    ),
                    log,
                )
            )
        deadline = time.monotonic() + 120
        while True:
            with contextlib.suppress(OSError, ValueError):
                state = json.load(urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5))
                if state.get("aliveworkers") == WORKERS:
                    break
            assert time.monotonic() < deadline, (path / "daemon0.log").read_text()[-3000:]
            time.sleep(1)
        yield url
    finally:
        for proc, log in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            log.close()


def poisoned_python(path: Path) -> tuple[Path, Path]:
    """A Python for executors on which `import dbt_spark_cdc` fails; each start logs its directory."""
    poison = path / "poison" / "dbt_spark_cdc"
    poison.mkdir(parents=True)
    (poison / "__init__.py").write_text("raise ImportError('dbt_spark_cdc imported on an executor')\n")
    marks = path / "executor_pythons.log"
    wrapper = path / "executor_python"
    wrapper.write_text(
        f'#!/bin/sh\necho "$PWD" >> "{marks}"\n'
        f'PYTHONPATH="{poison.parent}:$PYTHONPATH" exec "{sys.executable}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper, marks


def test_demo_and_conformance_on_a_standalone_cluster_equal_the_local_run(
    project: DbtProject,
    schema: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    record_property: Callable[[str, object], None],
) -> None:
    # The local run, in this process.
    started = clock = time.monotonic()
    took: dict[str, float] = {}
    local = stable(build_demo(project, schema, monkeypatch))
    assert local["cdc_changes"] and all(local[t] for t in DEMO_TARGETS)
    took["local demo"] = time.monotonic() - clock

    clock = time.monotonic()
    wrapper, marks = poisoned_python(tmp_path)
    with standalone_cluster(tmp_path / "cluster") as url:
        took["cluster start"] = time.monotonic() - clock
        # One pytest session on the cluster: the demo's build (cluster_demo.py), then the
        # conformance tests, unchanged.
        clock = time.monotonic()
        session_home = tmp_path / "cluster_home"
        dump = tmp_path / "demo.json"
        env = {
            **os.environ,
            "SPARK_CDC_MASTER": url,
            "PYSPARK_PYTHON": str(wrapper),
            "SPARK_CDC_TEST_HOME": str(session_home),
            "DBT_TARGET_PATH": str(session_home / "target"),
            "DBT_LOG_PATH": str(session_home / "logs"),
            "SPARK_CDC_CLUSTER_DEMO_DUMP": str(dump),
            "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        }
        env.pop("SPARK_CDC_IT_FORMATS", None)
        selected = ["cluster_demo.py::test_demo_build", *(ALL if LONG else SHORT)]
        tests = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            + [str(HERE / t) for t in selected],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        assert tests.returncode == 0, tests.stdout[-6000:] + tests.stderr[-2000:]
        summary = tests.stdout.strip().splitlines()[-1]
        took["session on the cluster"] = time.monotonic() - clock

    demo = json.loads(dump.read_text())
    took["of which the demo's build"] = demo["seconds"]
    remote = stable(demo["tables"])
    assert remote.keys() == local.keys()
    for name in local:
        assert remote[name] == local[name], name
    # Both workers ran Python tasks, none of them with the package.
    ran = {line.split("/worker")[1].split("/")[0] for line in marks.read_text().split() if "/worker" in line}
    assert ran == {str(n) for n in range(WORKERS)}, marks.read_text()
    times = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in took.items())
    record_property(
        "reliability",
        f"cluster: a master and {WORKERS} workers, both ran Python tasks without the package;"
        f" the demo's {len(local)} tables equal the local run's; on the cluster: {summary}",
    )
    print(
        f"\ncluster: {WORKERS} workers; on the cluster: {summary}; {times};"
        f" {time.monotonic() - started:.0f} s in all"
    )
