"""The lakehouse jars' set-up (tests/helpers/lakehouse.py), without Maven or Spark: what the pom names,
and the messages that stop a run when the jars cannot be had."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import lakehouse


def test_the_pom_names_released_combinations_per_spark_line() -> None:
    assert lakehouse.expected_jars("4.1") == [
        "delta-spark_4.1_2.13-4.4.0.jar",
        "delta-storage-4.4.0.jar",
        "iceberg-spark-runtime-4.1_2.13-1.11.0.jar",
    ]
    assert all("4.0_2.13" in j or j.startswith("delta-storage") for j in lakehouse.expected_jars("4.0"))


def test_a_spark_line_without_jars_names_the_fix() -> None:
    with pytest.raises(lakehouse.LakehouseSetupError, match=r"Spark 4\.3.*\nFix: install a pyspark"):
        lakehouse.expected_jars("4.3")


def test_missing_jars_without_maven_name_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_CDC_JARS_CACHE", str(tmp_path))
    monkeypatch.setattr(lakehouse.shutil, "which", lambda _name: None)
    with pytest.raises(lakehouse.LakehouseSetupError, match=r"mvn\) is not on PATH.*\nFix: install Maven"):
        lakehouse.ensure_jars("4.1")


def test_cached_jars_are_used_without_maven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_CDC_JARS_CACHE", str(tmp_path))
    monkeypatch.setattr(lakehouse.shutil, "which", lambda _name: None)
    folder = tmp_path / "jars" / "spark-4.1"
    folder.mkdir(parents=True)
    for name in lakehouse.expected_jars("4.1"):
        (folder / name).write_bytes(b"")
    assert [j.name for j in lakehouse.jars_for("iceberg", "4.1")] == [
        "iceberg-spark-runtime-4.1_2.13-1.11.0.jar"
    ]
    assert [j.name for j in lakehouse.jars_for("delta", "4.1")] == [
        "delta-spark_4.1_2.13-4.4.0.jar",
        "delta-storage-4.4.0.jar",
    ]
    monkeypatch.setenv("SPARK_CDC_TABLE_FORMAT", "hudi")
    with pytest.raises(lakehouse.LakehouseSetupError, match="not one of delta, iceberg"):
        lakehouse.session_env()
    monkeypatch.setenv("SPARK_CDC_TABLE_FORMAT", "parquet")
    assert lakehouse.session_env() == {}
