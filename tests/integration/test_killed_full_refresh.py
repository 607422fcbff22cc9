"""A --full-refresh killed between writing a persistent target's table and its view swap.

The MERGE storage (delta / iceberg: the lakehouse lanes, SPARK_CDC_TABLE_FORMAT) and the partitioned
parquet storage (elsewhere) write the one table their view reads, so a run killed before the swap
leaves the previous view over the new table. Here the full refresh also changes the configuration
(truncate_handling 'ignore' -> 'apply'): the new table holds a truncate the old one did not, while
the old view claimed whole images (cdc_scd2's spark_cdc.whole_images) and no partial rows (cdc_scd1's
spark_cdc.partial_rows), and recorded the counts the partitioned storage carries forward. The run
after the crash must not trust them: it takes the general statements, recounts, and leaves the same
rows and counts as a full refresh that completes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpora.debezium import corpus, envelope, product, truncate
from tests.helpers.lakehouse import table_format
from tests.helpers.landing import DbtProject, land_messages
from tests.helpers.projects import models_yml, side_project
from tests.helpers.targets import props, view

pytestmark = pytest.mark.integration
# The history is Debezium's: the other formats' staging is not built (conftest.py).
IT_FORMATS = ("debezium",)
FORMAT = table_format()
STORAGE = f"file_format='{FORMAT}'" if FORMAT else "partition_by='name'"
HISTORY, STATE = "kfr_history", "kfr_state"
APPLY = ("--vars", "{truncates: apply}")

# The dispatched hook both persistent storages call before their view swap (persistent_state.sql).
CRASH = """{% macro spark__cdc_before_view_swap(target_relation) -%}
  {%- if target_relation.identifier in env_var('SPARK_CDC_IT_CRASH_BEFORE_SWAP', '').split() -%}
    {{ exceptions.raise_compiler_error('spark_cdc test: simulated crash before the view swap of '
                                       ~ target_relation) }}
  {%- endif -%}
{%- endmacro %}
"""


def model(materialization: str, schema: str) -> str:
    return (
        f"{{{{ config(materialized='{materialization}', unique_key='id', source_table='inventory.products',"
        f" cdc_format='debezium', truncate_handling=var('truncates', 'ignore'), {STORAGE}) }}}}\n"
        f"select * from `{schema}`.cdc_changes\n"
    )


def targets(project: DbtProject, schema: str) -> dict[str, Any]:
    """Both targets' rows and the counts their views record."""
    kept = ("spark_cdc.current_rows", "spark_cdc.tombstones", "spark_cdc.partial_rows", "spark_cdc.versions")
    return {
        m: (
            view(project, schema, m, m == STATE),
            {k: v for k, v in props(project, schema, m).items() if k in kept},
        )
        for m in (HISTORY, STATE)
    }


def test_the_run_after_a_killed_full_refresh_recounts_and_takes_the_general_statements(
    project: DbtProject, schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    side = side_project(
        project,
        tmp_path,
        {
            f"{HISTORY}.sql": model("cdc_scd2", schema),
            f"{STATE}.sql": model("cdc_scd1", schema),
            "models.yml": models_yml((HISTORY, STATE)),
        },
        macros={"crash.sql": CRASH},
    )

    # Whole images and a truncate that truncate_handling='ignore' leaves out: both short statements.
    land_messages(project.spark, f"{schema}_raw", "debezium", [*corpus("schema-include"), truncate(34400000)])
    project.dbt("run", "--select", "+cdc_changes")
    side.dbt("run", "--select", HISTORY, STATE)
    first = {m: props(project, schema, m) for m in (HISTORY, STATE)}
    assert first[HISTORY]["spark_cdc.whole_images"] and first[STATE]["spark_cdc.partial_rows"] == "0"
    assert all(p["spark_cdc.last_batch_simple"] == "true" for p in first.values())
    assert len(view(project, schema, STATE, True)) > 5  # the truncate was ignored

    # A full refresh that applies truncates, killed after writing its table and before the swap.
    monkeypatch.setenv("SPARK_CDC_IT_CRASH_BEFORE_SWAP", f"{HISTORY} {STATE}")
    result = side.dbt("run", "--select", HISTORY, STATE, "--full-refresh", *APPLY, expect_success=False)
    assert "simulated crash before the view swap" in str([r.message for r in result.result.results])
    monkeypatch.delenv("SPARK_CDC_IT_CRASH_BEFORE_SWAP")
    for m, before in first.items():
        now = props(project, schema, m)
        # The view is the old one (version, watermark) without the facts about the old table.
        assert now["spark_cdc.version"] == before["spark_cdc.version"], m
        assert now["spark_cdc.consumed_through"] == before["spark_cdc.consumed_through"], m
        gone = {
            "spark_cdc.whole_images",
            "spark_cdc.partial_rows",
            "spark_cdc.current_rows",
            "spark_cdc.tombstones",
            "spark_cdc.versions",
        }
        assert gone.isdisjoint(now), (m, now)

    # The next run (an update after the truncate) applies it over the new table.
    rocks = envelope("u", 34500000, product(107, "rocks", "box of assorted rocks", 5.0))
    land_messages(project.spark, f"{schema}_raw", "debezium", [rocks])
    project.dbt("run", "--select", "+cdc_changes")
    side.dbt("run", "--select", HISTORY, STATE, *APPLY)
    after_crash = targets(project, schema)
    assert all(props(project, schema, m)["spark_cdc.last_batch_simple"] == "false" for m in (HISTORY, STATE))
    assert [r["id"] for r in after_crash[STATE][0]] == [107]
    assert after_crash[STATE][1]["spark_cdc.current_rows"] == "1"
    current = [r for r in after_crash[HISTORY][0] if r["_cdc_is_current"] and not r["_cdc_is_deleted"]]
    assert [(r["id"], r["weight"]) for r in current] == [(107, 5.0)]

    # The same rows and counts as a full refresh that completes.
    side.dbt("run", "--select", HISTORY, STATE, "--full-refresh", *APPLY)
    assert targets(project, schema) == after_crash
