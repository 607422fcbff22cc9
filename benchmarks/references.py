"""The hand-written alternatives spark_cdc is measured against, in the same Spark session and on the
same data: what a user would write instead of adding the package.

- ``bare_parse``: Spark's own JSON parser at its best: one ``from_json`` with the envelope's schema,
  selecting the fields the staging model reads, written once (the physical limit for parsing).
- ``scd1_job``: a one-pass SCD1 job: the latest change per key by a window, joined with the previous
  table, written once to a new table. It keeps deleted keys as hidden tombstones (as spark_cdc does),
  or a late older insert would resurrect a deleted key and the comparison would be unfair to us.
- ``scd2_job``: a one-pass SCD2 job: the touched keys' stored versions plus the new changes, one
  ``lead()`` over each key's changes, written once together with the untouched versions.
- ``scd1_merge_job`` / ``scd2_merge_job``: the same on a Delta Lake or Apache Iceberg table, as a
  user of those formats writes it: the first batch creates the table, every later batch is one
  ``MERGE INTO`` it (SCD1: the latest change per key, newer sequence wins; SCD2: the touched keys'
  versions, rebuilt as above, matched on key and first sequence).

The jobs read the canonical changes the staging model produced (the input a target reads), decode
the ``after`` image with ``from_json`` and the target's schema, and know nothing of truncates,
partial images, sequence conflicts or schema evolution, which spark_cdc handles: they are the lower
bound a specialised job reaches, not an equivalent.
"""

from __future__ import annotations

from typing import Any

from benchmarks.workload import Column

# Ordering of canonical changes: the seq struct, compared field by field (Spark orders structs).
SEQ_DESC = "seq desc"


def bare_parse(spark: Any, raw_table: str, schema_ddl: str, selects: list[str], out_table: str) -> int:
    """``from_json`` of every message value with ``schema_ddl``, selecting ``selects``; written once."""
    spark.sql(f"drop table if exists {out_table}")
    # Positional names: two envelope fields may share a name (ts_ms at the top and in source).
    columns = ", ".join(f"{expr} as f{i}" for i, expr in enumerate(selects))
    spark.sql(
        f"create table {out_table} using parquet as "
        f"select {columns} from (select from_json(value, '{schema_ddl}') as j from {raw_table})"
    )
    return int(spark.table(out_table).count())


def _decoded_changes(spark: Any, changes_sql: str, columns: list[Column]) -> Any:
    """The changes with their after image decoded into the target's columns (deletes: key only)."""
    struct = ", ".join(f"`{c.name}`: {c.spark_type}" for c in columns)
    values = ", ".join(f"a.`{c.name}`" for c in columns if c.name != "id")
    return spark.sql(
        f"""
        select cast(get_json_object(key, '$.id') as bigint) as id, {values},
               op = 'delete' as deleted, seq, commit_ts
        from (select *, from_json(after, 'struct<{struct}>') as a from ({changes_sql}))
        """
    )


def _latest_per_key(spark: Any, changes_sql: str, columns: list[Column]) -> Any:
    """Each key's latest change of the batch (a window), decoded; deletes as ``deleted`` rows."""
    from pyspark.sql import functions as sf
    from pyspark.sql.window import Window

    names = [c.name for c in columns] + ["deleted", "seq", "commit_ts"]
    return (
        _decoded_changes(spark, changes_sql, columns)
        .withColumn("_rn", sf.row_number().over(Window.partitionBy("id").orderBy(sf.col("seq").desc())))
        .where("_rn = 1")
        .select(*names)
    )


def scd1_job(
    spark: Any, changes_sql: str, columns: list[Column], previous: str | None, out_table: str
) -> None:
    """Latest change per key (window), merged with ``previous`` (join), written once to ``out_table``."""
    from pyspark.sql import functions as sf

    latest = _latest_per_key(spark, changes_sql, columns)
    names = latest.columns
    if previous is not None:
        old = spark.table(previous).alias("o")
        new = latest.alias("n")
        take_new = sf.col("o.id").isNull() | (
            sf.col("n.id").isNotNull() & (sf.col("n.seq") > sf.col("o.seq"))
        )
        latest = old.join(new, sf.col("o.id") == sf.col("n.id"), "full_outer").select(
            *[sf.when(take_new, sf.col(f"n.{n}")).otherwise(sf.col(f"o.{n}")).alias(n) for n in names]
        )
    spark.sql(f"drop table if exists {out_table}")
    latest.write.format("parquet").saveAsTable(out_table)


def scd2_job(
    spark: Any, changes_sql: str, columns: list[Column], previous: str | None, out_table: str
) -> None:
    """Versions of the touched keys rebuilt with one ``lead()`` over their changes (stored versions plus
    the new changes, duplicates dropped); untouched keys' versions carried over; written once.
    (``lag()`` carries a deleted version's values.)"""
    versions, untouched = _scd2_versions(spark, changes_sql, columns, previous)
    if untouched is not None:
        versions = versions.unionByName(untouched)
    spark.sql(f"drop table if exists {out_table}")
    versions.write.format("parquet").saveAsTable(out_table)


def _scd2_versions(
    spark: Any, changes_sql: str, columns: list[Column], previous: str | None
) -> tuple[Any, Any]:
    """The touched keys' versions (stored ones plus the batch's changes, one ``lead()`` per key) and
    the untouched keys' stored versions (None for the first batch)."""
    from pyspark.sql import functions as sf
    from pyspark.sql.window import Window

    value_names = [c.name for c in columns]
    new = _decoded_changes(spark, changes_sql, columns).dropDuplicates(["id", "seq"])
    change_cols = [*value_names, "deleted", "seq", "commit_ts"]
    untouched = None
    history = new.select(*change_cols)
    if previous is not None:
        old = spark.table(previous)
        touched = new.select("id").distinct()
        stored = old.join(touched, "id", "left_semi").select(
            *value_names,
            sf.col("is_deleted").alias("deleted"),
            sf.col("valid_from_seq").alias("seq"),
            sf.col("valid_from").alias("commit_ts"),
        )
        history = stored.unionByName(history).dropDuplicates(["id", "seq"])
        untouched = old.join(touched, "id", "left_anti")
    by_key = Window.partitionBy("id").orderBy("seq")
    # A deleted version carries the key's last values (as spark_cdc's and dbt snapshots' new_record
    # do); the generated histories never delete twice in a row, so the previous change holds them.
    carried = [
        sf.when(sf.col("deleted"), sf.lag(n).over(by_key)).otherwise(sf.col(n)).alias(n)
        if n != "id"
        else sf.col(n)
        for n in value_names
    ]
    versions = history.select(
        *carried,
        sf.col("deleted").alias("is_deleted"),
        sf.col("seq").alias("valid_from_seq"),
        sf.col("commit_ts").alias("valid_from"),
        sf.lead("seq").over(by_key).alias("valid_to_seq"),
        sf.lead("commit_ts").over(by_key).alias("valid_to"),
    ).withColumn("is_current", sf.col("valid_to_seq").isNull())
    return versions, untouched


def scd1_merge_job(
    spark: Any, changes_sql: str, columns: list[Column], table: str, table_format: str
) -> None:
    """SCD1 on a lakehouse table: created from the first batch, then one MERGE per batch (the latest
    change per key; a stored row is replaced only by a newer sequence; deleted keys stay as tombstones)."""
    latest = _latest_per_key(spark, changes_sql, columns)
    if not spark.catalog.tableExists(table.replace("`", "")):
        latest.write.format(table_format).saveAsTable(table)
        return
    latest.createOrReplaceTempView("ref_scd1_batch")
    spark.sql(
        f"""
        merge into {table} t using ref_scd1_batch s on t.id = s.id
        when matched and s.seq > t.seq then update set *
        when not matched then insert *
        """
    )


def scd2_merge_job(
    spark: Any, changes_sql: str, columns: list[Column], table: str, table_format: str
) -> None:
    """SCD2 on a lakehouse table: created from the first batch, then one MERGE per batch of the touched
    keys' rebuilt versions, matched on (key, first sequence): stored versions get their new end, the
    batch's versions are inserted."""
    exists = spark.catalog.tableExists(table.replace("`", ""))
    versions, _ = _scd2_versions(spark, changes_sql, columns, table if exists else None)
    if not exists:
        versions.write.format(table_format).saveAsTable(table)
        return
    # The MERGE's source reads the stored versions of the table it changes. Delta plans that as it is;
    # on Iceberg (1.11, Spark 4.1) planning such a MERGE fails ("No plan for TableReference"), so
    # there the job materialises its source first, as a user of Iceberg has to.
    if table_format == "iceberg":
        versions = versions.localCheckpoint()
    versions.createOrReplaceTempView("ref_scd2_batch")
    spark.sql(
        f"""
        merge into {table} t using ref_scd2_batch s
        on t.id = s.id and t.valid_from_seq = s.valid_from_seq
        when matched then update set *
        when not matched then insert *
        """
    )
