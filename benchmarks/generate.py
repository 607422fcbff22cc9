"""Land benchmark workloads in raw tables exactly as the staging models read them: ``partition``,
``offset``, ``key``, ``value``, ``ingested_at`` (the integration projects' landing contract,
``tests.helpers.landing.RAW_TABLE_DDL``).

``raw_rows`` is the per-event definition of what lands (``envelopes.py``, one event at a time);
``land`` generates the same rows a range at a time (``columnar.raw_batch``, about ten times faster)
on the executors (``mapInArrow`` over ``spark.range``): 10,000,000 events need no driver memory. The
benchmark modules are shipped to the workers by value, so workers need not import them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from benchmarks.envelopes import ENVELOPES, Message, preamble
from benchmarks.workload import OFFSET_STRIDE, Workload, event, landed_event_index, redelivers


def messages_at(fmt: str, wl: Workload, position: int) -> list[Message]:
    """Every message landing at ``position`` (its event's, then a redelivery)."""
    envelope = ENVELOPES[fmt]
    out = envelope(wl, event(wl, landed_event_index(wl, position)))
    if redelivers(wl, position):
        back = position - wl.redelivery_lag
        out = out + envelope(wl, event(wl, landed_event_index(wl, back)))
    return out


def raw_rows(fmt: str, wl: Workload, positions: range, ingested_at: dt.datetime) -> Iterator[tuple[Any, ...]]:
    """(partition, offset, key, value, ingested_at) rows of the messages landing at ``positions``."""
    if positions.start == 0:
        # The log's first messages (Qlik's table metadata), before the first change's offset.
        first = preamble(fmt, wl)
        for i, (key, value) in enumerate(first):
            yield (0, i - len(first), key, value, ingested_at)
    for position in positions:
        partition = (landed_event_index(wl, position) % wl.keys + 1) % wl.kafka_partitions
        for i, (key, value) in enumerate(messages_at(fmt, wl, position)):
            yield (partition, position * OFFSET_STRIDE + i, key, value, ingested_at)


RAW_SCHEMA = "`partition` int, `offset` bigint, `key` string, `value` string, `ingested_at` timestamp"


def append_generated(
    spark: Any,
    name: str,
    ids: int,
    slices: int,
    make: Callable[[list[int], dt.datetime], Iterator[pa.RecordBatch]],
) -> int:
    """Append to the raw table ``name`` (created when missing, RAW_SCHEMA) the record batches
    ``make(ids_of_a_slice, ingested_at)`` yields on the executors, over ids ``0 .. ids - 1`` in
    ``slices`` slices (``mapInArrow`` over ``spark.range``); returns the number of rows appended.
    The benchmark modules and ``make``'s own are shipped to the workers by value."""
    import sys

    from pyspark import cloudpickle

    modules = ("benchmarks", "benchmarks.workload", "benchmarks.envelopes", "benchmarks.columnar", __name__)
    for module in (*modules, make.__module__):
        cloudpickle.register_pickle_by_value(sys.modules[module])
    spark.sql(f"create table if not exists {name} ({RAW_SCHEMA}) using parquet")
    before = spark.table(name).count()
    ingested_at = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)

    def generate(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            slice_ids = batch.column(0).to_pylist()
            if slice_ids:
                yield from make(slice_ids, ingested_at)

    spark.range(0, ids, numPartitions=slices).mapInArrow(generate, RAW_SCHEMA).write.insertInto(name)
    return int(spark.table(name).count() - before)


def land(spark: Any, fmt: str, wl: Workload, schema: str, table: str | None = None) -> int:
    """Generate ``wl`` in ``fmt`` on the executors and append it to ``schema.table`` (default: the
    format's name); returns the number of raw rows landed."""
    from benchmarks.columnar import raw_batch

    spark.sql(f"create database if not exists `{schema}`")
    first = wl.first_event

    def make(ids: list[int], ingested_at: dt.datetime) -> Iterator[pa.RecordBatch]:
        # A slice of spark.range is contiguous: one batch for its positions.
        yield raw_batch(fmt, wl, range(first + ids[0], first + ids[-1] + 1), ingested_at)

    slices = max(2, wl.events // 250_000)
    return append_generated(spark, f"`{schema}`.`{table or fmt}`", wl.events, slices, make)
