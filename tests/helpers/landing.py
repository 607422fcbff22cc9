"""Helpers for tests and demos: land CDC messages in a raw table the way a Kafka sink would, and run
dbt in-process (DbtProject).

Message text is passed to Spark as DataFrame data, never spliced into SQL.

Not part of the dbt-spark-cdc wheel (it was ``dbt_spark_cdc.testing`` until 0.2.0): the tests, the
demo (integration_tests/scripts/demo.py) and the benchmarks import it from the repository root.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The envelope formats spark_cdc reads, by their names in var('spark_cdc').formats.
FORMATS = ("debezium", "aurora_dsql", "qlik_replicate", "ydb", "cockroachdb")

RAW_TABLE_DDL = "(`partition` int, `offset` bigint, `key` string, `value` string, `ingested_at` timestamp)"


@dataclass(frozen=True)
class RawMessage:
    """One landed message: Kafka-style value and optional key."""

    value: str | None
    key: str | None = None


def _quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def qualified(schema: str, table: str) -> str:
    """A backtick-quoted ``schema.table`` name."""
    return f"{_quote(schema)}.{_quote(table)}"


def read_jsonl_messages(path: str) -> list[str]:
    """Non-blank lines of a JSON-lines file (one message per line), unparsed and unaltered.

    Only LF (or CR LF) ends a line: a lone CR inside a message is message content, which
    universal-newline reading would turn into a line break, splitting the message in two.
    """
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line.removesuffix("\n").removesuffix("\r") for line in handle if line.strip()]


def fresh_landing(spark: Any, schema: str) -> None:
    """Drop ``schema`` and its landing schema ``<schema>_raw``, then create every format's (empty)
    raw table, so any build of the whole project finds its landing tables."""
    for db in (schema, f"{schema}_raw"):
        spark.sql(f"drop database if exists {_quote(db)} cascade")
    for fmt in FORMATS:
        land_messages(spark, f"{schema}_raw", fmt, [])


def land_messages(
    spark: Any,
    schema: str,
    table: str,
    messages: Iterable[RawMessage | str | None],
    *,
    partition: int = 0,
) -> int:
    """Append ``messages`` to raw table ``schema.table`` (created if missing); returns rows landed.

    Offsets continue after the highest offset already landed in ``partition``, as Kafka's would.
    """
    from pyspark.sql.types import (
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    name = qualified(schema, table)
    spark.sql(f"create database if not exists {_quote(schema)}")
    spark.sql(f"create table if not exists {name} {RAW_TABLE_DDL} using parquet")
    batch = [msg if isinstance(msg, RawMessage) else RawMessage(value=msg) for msg in messages]
    if not batch:
        # Creating the (empty) table is all there is to do: no Spark job for the offset.
        return 0
    last = spark.sql(f"select max(`offset`) from {name} where `partition` = {int(partition)}").first()[0]
    next_offset = 0 if last is None else int(last) + 1
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    rows: list[Sequence[Any]] = [
        (int(partition), next_offset + i, raw.key, raw.value, now) for i, raw in enumerate(batch)
    ]
    schema_type = StructType(
        [
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("key", StringType()),
            StructField("value", StringType()),
            StructField("ingested_at", TimestampType()),
        ]
    )
    spark.createDataFrame(rows, schema_type).write.insertInto(name)
    return len(rows)


def build_only(command: Sequence[str], targets: Iterable[str], *keep: str) -> tuple[str, ...]:
    """`command`, a dbt command whose arguments end with its --exclude list, leaving out as well the
    `targets` not in `keep`. Each target a build makes is a few seconds of statements, even one whose
    table stays empty, so a test builds the targets it reads."""
    flags = [a for a in command if a.startswith("--")]
    if not flags or flags[-1] != "--exclude":
        raise ValueError(f"build_only: {command!r} does not end with its --exclude list")
    return (*command, *(t for t in targets if t not in keep))


class DbtProject:
    """A dbt project driven in-process through ``dbtRunner``, sharing one SparkSession.

    dbt-spark's session method creates the SparkSession from the profile on its first query; this
    class lets dbt do that (``dbt debug`` runs ``select 1``) and then works on the same session, so
    Spark settings live in one place, the profile.
    """

    def __init__(self, project_dir: str, profiles_dir: str | None = None) -> None:
        self.project_dir = project_dir
        self.profiles_dir = profiles_dir or project_dir
        self._spark: Any = None

    def dbt(self, *args: str, expect_success: bool = True) -> Any:
        """Run one dbt command; raises AssertionError when its success differs from expected."""
        from dbt.artifacts.schemas.run import RunExecutionResult
        from dbt.cli.main import dbtRunner

        argv = [*args, "--project-dir", self.project_dir, "--profiles-dir", self.profiles_dir]
        # One target path (and so one partial-parse state) per project and parse configuration
        # under DBT_TARGET_PATH: invocations taking turns on a shared one would make each a full
        # parse (dbt starts over whenever the project, its --vars or its profile differ).
        base = os.environ.get("DBT_TARGET_PATH")
        if base and "--target-path" not in args:
            os.environ["DBT_TARGET_PATH"] = os.path.join(base, self._parse_key(args))
        try:
            result = dbtRunner().invoke(argv)
        finally:
            if base is not None:
                os.environ["DBT_TARGET_PATH"] = base
        if result.success != expect_success:
            # Only node-running commands return per-node results; debug returns a bool, parse a
            # Manifest, docs generate a CatalogArtifact (none of which are iterable).
            outcome = result.result
            node_results = outcome.results if isinstance(outcome, RunExecutionResult) else []
            detail = result.exception or [(r.node.name, r.status, r.message) for r in node_results]
            raise AssertionError(f"dbt {' '.join(args)}: success={result.success}; {detail}")
        return result

    def _parse_key(self, args: Sequence[str]) -> str:
        """What dbt's partial parsing compares, as a digest: the project, the --vars and --target
        given, and the values of the environment variables its dbt_project.yml and profiles.yml
        read (env_var('NAME') there changes the project or profile dbt parses against)."""
        names: set[str] = set()
        for directory, file in ((self.project_dir, "dbt_project.yml"), (self.profiles_dir, "profiles.yml")):
            with contextlib.suppress(OSError):
                text = Path(directory, file).read_text(encoding="utf-8")
                names |= set(re.findall(r"env_var\(\s*['\"]([A-Za-z_][A-Za-z0-9_]*)['\"]", text))
        options = [
            f"{option}={args[i + 1]}"
            for i, option in enumerate(args[:-1])
            if option in ("--vars", "--target", "-t")
        ]
        state = [os.path.abspath(self.project_dir), *options]
        state += [f"{name}={os.environ.get(name)}" for name in sorted(names)]
        digest = hashlib.sha256("\0".join(state).encode()).hexdigest()[:12]
        return digest

    @property
    def spark(self) -> Any:
        """The SparkSession dbt-spark uses (started through dbt on first access)."""
        if self._spark is None:
            self.dbt("debug")
            from pyspark.sql import SparkSession

            self._spark = SparkSession.builder.getOrCreate()
        return self._spark

    def rows(self, sql: str) -> list[dict[str, Any]]:
        """Result of ``sql`` as a list of dicts (recursively for structs)."""
        return [r.asDict(recursive=True) for r in self.spark.sql(sql).collect()]
