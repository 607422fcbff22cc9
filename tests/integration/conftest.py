"""One Spark JVM per pytest process: dbt runs in-process (dbtRunner) and every test shares the
SparkSession dbt-spark created from integration_tests/profiles.yml; each test gets its own schemas."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbt_common.tests import enable_test_caching

from tests.helpers.lakehouse import session_env
from tests.helpers.landing import FORMATS, DbtProject, fresh_landing

ROOT = Path(__file__).resolve().parents[2]
PROJECT_DIR = ROOT / "integration_tests"

# dbt's own test fixtures do this (dbt.tests.fixtures.project): within one process, dbt keeps what it
# parsed from a macro or model file's text (Jinja's parse tree, the macro calls it found, the file's
# blocks), keyed by that text, and reuses it for the same text. A full parse (each test's first build
# under its own --vars or environment) read every one of the package's and dbt's macros again.
enable_test_caching()


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DbtProject]:
    home = os.environ.get("SPARK_CDC_TEST_HOME") or str(tmp_path_factory.mktemp("spark_cdc_home"))
    os.environ["SPARK_CDC_HOME"] = home
    # dbt's target/ and logs/ per pytest process, so concurrent runs never share partial-parse state.
    os.environ.setdefault("DBT_TARGET_PATH", os.path.join(home, "target"))
    os.environ.setdefault("DBT_LOG_PATH", os.path.join(home, "logs"))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    # Each test builds a fresh schema, often only part of the project. The target contract tests
    # (scd1_*, scd2_*) also depend on cdc_changes, so dbt's default (eager) test selection would run
    # them for every build that selects cdc_changes, on targets that were never built. `buildable`
    # keeps a test only when all its parents are selected or upstream of the selection.
    os.environ.setdefault("DBT_INDIRECT_SELECTION", "buildable")
    # dbt writes manifest.json, graph.gpickle and run_results.json after every command: 9 % of
    # the Python side's CPU in test_debezium_storage.py (py-spy). No test reads them but the docs
    # test, which asks for them (--write-json). And no usage events from tests.
    os.environ.setdefault("DBT_WRITE_JSON", "false")
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    os.environ["SPARK_CDC_SCHEMA"] = "it_setup"
    # SPARK_CDC_TABLE_FORMAT=delta|iceberg: this process's session loads that format (the lakehouse
    # lanes of `make test`); the jars are resolved first if they are not in the project's cache.
    os.environ.update(session_env())
    proj = DbtProject(str(PROJECT_DIR))
    # pytest-xdist workers share integration_tests/dbt_packages: one `dbt deps` at a time (a second
    # one running while the first links the package refuses the link as outside the install path).
    digest = hashlib.sha256(str(PROJECT_DIR).encode()).hexdigest()[:12]
    with open(os.path.join(tempfile.gettempdir(), f"spark_cdc_deps_{digest}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proj.dbt("deps", "--quiet")
    _ = proj.spark
    yield proj


# Modules that run with Spark's code generation on (its default, and what users run): every format
# end to end (the examples and the benchmark workloads: staging, SCD1, SCD2, partitioned targets),
# type decoding, the SQL decimal decoder and UDFs on workers. The rest of the suite runs Spark's
# interpreted expressions: the same results (Spark tests both paths against each other), and on the
# suite's inputs of a few rows, generating and compiling code for every statement cost more than the
# statement itself (measured: test_cockroachdb.py 4 min 35 s -> 3 min 35 s, with the JVM's
# compiler threads the largest single user of CPU).
CODEGEN_MODULES = {
    "test_examples",
    "test_benchmark_workloads",
    "test_debezium_types",
    "test_connect_decimal_sql",
    "test_udf_shipping",
    "test_reliability_cluster",
    "cluster_demo",
}


@pytest.fixture(autouse=True)
def spark_codegen(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Code generation on or off for this test's module (CODEGEN_MODULES), through the profile's
    SPARK_CDC_CODEGEN, so dbt runs in this process and in the processes a test starts agree."""
    codegen = request.path.stem in CODEGEN_MODULES
    monkeypatch.setenv("SPARK_CDC_CODEGEN", "true" if codegen else "false")
    # Projects with profiles of their own (the examples) leave the shared session's setting as the
    # previous module left it: set it on the session too, when there is one.
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        spark.conf.set("spark.sql.codegen.wholeStage", "true" if codegen else "false")
        spark.conf.set("spark.sql.codegen.factoryMode", "FALLBACK" if codegen else "NO_CODEGEN")


@pytest.fixture(autouse=True)
def only_module_format(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test module named after a format (test_ydb.py, test_debezium_types.py), or one that names
    its formats in IT_FORMATS (a module whose messages are all one format's), builds only those
    formats' models: SPARK_CDC_IT_FORMATS narrows the formats integration_tests enables."""
    module = request.path.stem
    matching = list(getattr(request.module, "IT_FORMATS", ()))
    matching = matching or [fmt for fmt in FORMATS if module.startswith(f"test_{fmt}")]
    if matching:
        monkeypatch.setenv("SPARK_CDC_IT_FORMATS", " ".join(matching))
    else:
        monkeypatch.delenv("SPARK_CDC_IT_FORMATS", raising=False)


@pytest.fixture
def schema(project: DbtProject, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh target schema (and its `<schema>_raw` landing schema) for one test.

    The same name for every test of a pytest process, dropped and created anew: the schema is in the
    profile, and a profile that changes between invocations makes each one a full dbt parse."""
    name = "it_" + re.sub(r"[^a-z0-9_]", "_", os.environ.get("PYTEST_XDIST_WORKER", "main").lower())
    monkeypatch.setenv("SPARK_CDC_SCHEMA", name)
    # Every enabled format's landing table exists (empty) so any test can build the whole project.
    fresh_landing(project.spark, name)
    return name
