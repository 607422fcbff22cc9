"""The many-tables case: one Debezium connector capturing ``tables`` source tables into one landing
table, a ``cdc_scd1`` target per source table, and beside each the plain dbt-spark ``incremental``
model an analytics engineer writes without the package (the table's changes appended, filtered on
``cdc_loaded_at`` past the target's maximum). Both kinds build in the same session.

The models are generated into ``benchmarks/project/models/many_tables/`` (ignored by git) for the
case and removed after it, so other cases do not parse them.
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow.compute as pc

from benchmarks.columnar import raw_batch
from benchmarks.generate import append_generated
from benchmarks.workload import OFFSET_STRIDE, Workload, columns

MODELS = Path(__file__).resolve().parent / "project" / "models" / "many_tables"
SOURCE_SCHEMA = "many"
#: Positions (events) a table may use in one landing; offsets of table i in landing b are shifted
#: by ``(b * tables + i) * SPAN`` positions, so every message's (partition, offset) is unique.
SPAN = 10_000_000

SCD1 = """{{{{ config(materialized='cdc_scd1', unique_key='id', source_table='{table}',
          cdc_format='debezium', tags=['many_scd1']) }}}}
select * from {{{{ ref('cdc_changes') }}}}
"""

INCREMENTAL = """{{{{ config(materialized='incremental', tags=['many_incremental']) }}}}
select * from {{{{ ref('cdc_changes') }}}}
where cdc_format = 'debezium' and source_table = '{table}'
{{% if is_incremental() %}}
  and cdc_loaded_at > (select coalesce(max(cdc_loaded_at), timestamp '1970-01-01') from {{{{ this }}}})
{{% endif %}}
"""


def source_table(i: int) -> str:
    return f"{SOURCE_SCHEMA}.t{i:03d}"


def write_models(tables: int) -> None:
    """A ``cdc_scd1`` model ``many_scd1_tNNN`` and an incremental ``many_incr_tNNN`` per table, and
    the targets' columns in yml (as a user declares them)."""
    import json

    remove_models()
    MODELS.mkdir(parents=True)
    cols = [{"name": c.name, "data_type": c.spark_type} for c in columns(Workload())]
    entries = []
    for i in range(tables):
        (MODELS / f"many_scd1_t{i:03d}.sql").write_text(SCD1.format(table=source_table(i)))
        (MODELS / f"many_incr_t{i:03d}.sql").write_text(INCREMENTAL.format(table=source_table(i)))
        entries.append({"name": f"many_scd1_t{i:03d}", "columns": cols})
    # JSON is YAML: the file needs no YAML writer.
    (MODELS / "many_tables.yml").write_text(json.dumps({"version": 2, "models": entries}, indent=1))


def remove_models() -> None:
    shutil.rmtree(MODELS, ignore_errors=True)


def workloads(tables: int, events: int, keys: int, first_event: int = 0) -> list[Workload]:
    """One workload per source table, ``events`` changes over ``keys`` keys from ``first_event``."""
    return [
        Workload(
            events=events,
            keys=keys,
            first_event=first_event,
            source_schema=SOURCE_SCHEMA,
            source_table=f"t{i:03d}",
            redelivery_lag=max(1, min(1_000, events // 4)),
        )
        for i in range(tables)
    ]


def table_batch(wls: list[Workload], i: int, landing: int, ingested_at: dt.datetime) -> Any:
    """Table ``i``'s Debezium messages of landing ``landing`` as one Arrow record batch, offsets
    shifted past every other table's and landing's (``SPAN``)."""
    wl = wls[i]
    if wl.first_event + wl.events > SPAN:
        raise ValueError(f"a table's positions must stay below SPAN ({SPAN}); got {wl}")
    rows = raw_batch("debezium", wl, range(wl.first_event, wl.first_event + wl.events), ingested_at)
    shift = (landing * len(wls) + i) * SPAN * OFFSET_STRIDE
    return rows.set_column(1, "offset", pc.add(rows.column(1), shift))


def land(spark: Any, wls: list[Workload], landing: int, schema: str) -> int:
    """Append every workload's Debezium messages to ``schema.debezium`` in one Spark job; returns the
    number of raw rows landed. Landing ``landing`` (0, 1, ...) keeps the offsets apart."""

    def make(ids: list[int], ingested_at: dt.datetime) -> Iterator[Any]:
        for i in ids:
            yield table_batch(wls, i, landing, ingested_at)

    slices = max(2, min(8, len(wls)))
    return append_generated(spark, f"`{schema}`.`debezium`", len(wls), slices, make)


def later(wls: list[Workload], events: int) -> list[Workload]:
    """Each table's next ``events`` changes, continuing its histories."""
    return [replace(wl, first_event=wl.first_event + wl.events, events=events) for wl in wls]


def live_keys_sql(schema: str) -> str:
    """Keys whose latest staged change is not a delete, per source table: what the SCD1 targets hold."""
    return f"""
        select source_table, count(*) as n from (
          select source_table, key, max_by(op, struct(seq, raw_ref.order)) as op
          from `{schema}`.stg_cdc__debezium
          where record_status = 'change' and source_table like '{SOURCE_SCHEMA}.t%'
          group by source_table, key)
        where op != 'delete' group by source_table"""


def target_rows_sql(schema: str, tables: int) -> str:
    """Rows of every SCD1 target, per source table."""
    return " union all ".join(
        f"select '{source_table(i)}' as source_table, count(*) as n from `{schema}`.many_scd1_t{i:03d}"
        for i in range(tables)
    )
