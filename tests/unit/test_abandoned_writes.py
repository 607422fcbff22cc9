"""dbt_spark_cdc.abandoned_writes on fakes: which errors and which directories it acts on.

The real thing (Spark refusing a CREATE TABLE over a killed run's directory, the plugin clearing it
and running the statement again) is tested in tests/integration/test_debezium_storage.py."""

from __future__ import annotations

from typing import Any

import pytest
from dbt_spark_cdc import abandoned_writes as aw

LOCATION = "file:/w/s.db/t"


class _SparkError(Exception):
    """Shaped like pyspark's captured exceptions."""

    def __init__(self, condition: str, params: dict[str, str]) -> None:
        super().__init__(condition)
        self._condition, self._params = condition, params

    def getCondition(self) -> str:  # noqa: N802 - pyspark's name
        return self._condition

    def getMessageParameters(self) -> dict[str, str]:  # noqa: N802 - pyspark's name
        return self._params


def _conflict() -> _SparkError:
    return _SparkError(aw.CONDITION, {"identifier": "`spark_catalog`.`s`.`t`", "location": f"'{LOCATION}'"})


class _Status:
    def __init__(self, name: str) -> None:
        self.name = name

    def getPath(self) -> Any:  # noqa: N802
        return self

    def getName(self) -> str:  # noqa: N802
        return self.name


class _FileSystem:
    def __init__(self, entries: list[str] | None) -> None:
        self.entries, self.deleted = entries, []

    def exists(self, path: Any) -> bool:
        return self.entries is not None

    def listStatus(self, path: Any) -> list[_Status]:  # noqa: N802
        return [_Status(n) for n in self.entries or []]

    def delete(self, path: Any, recursive: bool) -> bool:
        assert recursive
        self.deleted.append(path.location)
        return True


class _FakeSpark:
    def __init__(self, entries: list[str] | None, table_exists: bool = False) -> None:
        fs = self.fs = _FileSystem(entries)

        class _Path:
            def __init__(self, location: str) -> None:
                self.location = location

            def getFileSystem(self, conf: Any) -> _FileSystem:  # noqa: N802
                return fs

        hadoop = type("H", (), {"fs": type("F", (), {"Path": _Path})})
        jvm = type("J", (), {"org": type("O", (), {"apache": type("A", (), {"hadoop": hadoop})})})
        jsc = type("C", (), {"hadoopConfiguration": staticmethod(lambda: None)})
        self.sparkContext = type("SC", (), {"_jvm": jvm, "_jsc": jsc})
        self.catalog = type("Cat", (), {"tableExists": staticmethod(lambda name: table_exists)})


def test_location_conflict_reads_spark_parameters_through_dbt_wrapping() -> None:
    assert aw.location_conflict(_conflict()) == ("`spark_catalog`.`s`.`t`", LOCATION)
    wrapped = RuntimeError("dbt")
    wrapped.__cause__ = _conflict()
    assert aw.location_conflict(wrapped) == ("`spark_catalog`.`s`.`t`", LOCATION)
    assert aw.location_conflict(_SparkError("TABLE_OR_VIEW_NOT_FOUND", {})) is None
    assert aw.location_conflict(_SparkError(aw.CONDITION, {})) is None
    assert aw.location_conflict(ValueError("x")) is None


@pytest.mark.parametrize(
    ("entries", "leftover"),
    [
        (["_temporary"], True),
        (["_SUCCESS", "part-0.parquet"], True),
        ([".spark-staging-abc"], True),
        (["name=a", "name=__HIVE_DEFAULT_PARTITION__", "_temporary"], True),
        (["_SUCCESS", "part-0.parquet", ".part-0.parquet.crc", "._SUCCESS.crc"], True),
        (["_SUCCESS", "part-0.parquet", "notes.txt"], False),
        (["_temporary", "backup"], False),
        (["part-0.parquet"], False),
        (["notes.txt"], False),
        ([], False),
    ],
)
def test_write_leftovers(entries: list[str], leftover: bool) -> None:
    assert aw.is_write_leftover(entries) is leftover


def test_clears_only_an_unowned_directory_a_spark_write_left() -> None:
    spark = _FakeSpark(["_temporary"])
    assert aw.clear_abandoned_location(spark, _conflict()) == ("`spark_catalog`.`s`.`t`", LOCATION)
    assert spark.fs.deleted == [LOCATION]

    for spark in (
        _FakeSpark(["_temporary"], table_exists=True),  # a table owns it
        _FakeSpark(["data.csv"]),  # put there by hand
        _FakeSpark(None),  # gone meanwhile
    ):
        assert aw.clear_abandoned_location(spark, _conflict()) is None
        assert spark.fs.deleted == []
    other = _FakeSpark(["_temporary"])
    assert aw.clear_abandoned_location(other, ValueError("not Spark's")) is None
    assert other.fs.deleted == []


def test_explain_names_the_location_and_the_fix() -> None:
    message = aw.explain(_conflict()) or ""
    assert LOCATION in message and "`s`.`t`" in message and "Fix: move that directory away" in message
    assert aw.explain(ValueError("x")) is None


@pytest.mark.parametrize(
    ("sql", "table"),
    [
        # dbt-spark's append, after dbt's query comment
        (
            '/* {"app": "dbt"} */\n  insert into table it_main.stg_cdc__debezium\n  select',
            "it_main.stg_cdc__debezium",
        ),
        ("insert into `my schema`.`t` values (1)", "`my schema`.`t`"),
        ("-- note\nINSERT INTO t select 1", "t"),
        ("select 1 -- insert into t", None),
        ("create table t as select 1", None),
        ("insert overwrite table t select 1", None),
        (" " * 5000 + "select 1", None),  # no backtracking blow-up on long prefixes
    ],
)
def test_appends_are_recognised_by_their_target(sql: str, table: str | None) -> None:
    match = aw.INSERT_INTO.match(sql)
    assert (match.group(1) if match else None) == table
