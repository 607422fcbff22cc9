"""spark_cdc against a dbt snapshot and a dbt-spark incremental merge, on real Delta tables
(tests/helpers/side_by_side.py; the full-size comparison is `make bench`'s case side_by_side).

Runs in the Delta lane (SPARK_CDC_TABLE_FORMAT=delta; dbt-spark snapshots need a lakehouse format).
After every batch the spark_cdc targets must equal the reference, and the comparison must find the
wrong rows the other approaches have on this history: otherwise it could not fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import side_by_side as sbs
from tests.helpers.lakehouse import table_format
from tests.helpers.landing import DbtProject

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        table_format() != "delta", reason="the Delta lane only (SPARK_CDC_TABLE_FORMAT=delta)"
    ),
]
SEED = 20261129


def test_spark_cdc_rows_are_the_reference_and_the_alternatives_are_compared(
    project: DbtProject, schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_CDC_IT_REFERENCE", "1")
    monkeypatch.setenv("SPARK_CDC_IT_FILE_FORMAT", "delta")
    monkeypatch.setenv("SPARK_CDC_IT_FORMATS", "debezium")
    sbs.typical_project(tmp_path / "typical", f"`{schema}_raw`.debezium", "delta")
    typical = DbtProject(str(tmp_path / "typical"), profiles_dir=project.profiles_dir)
    log = sbs.make_log(SEED, scenarios=30, batches=3)

    results = sbs.run(project, typical, schema, log)

    assert [r.batch for r in results] == [1, 2, 3]
    for r in results:
        assert r.keys > 20, r
        assert r.scd1_wrong["spark_cdc"] == 0 and r.scd2_wrong["spark_cdc"] == 0, r
        assert set(r.seconds) == set(sbs.APPROACHES), r
    # Not a vacuous comparison: spark_cdc's SCD1 holds the reference's live keys, and the history
    # (several changes per key between runs, late changes) is one the other approaches get wrong.
    live = project.rows(f"select count(*) as n from `{schema}`.reference_debezium_scd1")[0]["n"]
    assert live == len(sbs.expected_scd1(log.delivered(3))) > 0
    assert any(r.scd2_wrong["snapshot_timestamp"] > 0 for r in results), results
    assert any(r.scd2_wrong["snapshot_check"] > 0 for r in results), results
    assert any(r.scd1_wrong["incremental_merge"] > 0 for r in results), results
