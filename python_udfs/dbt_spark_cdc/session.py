"""Run dbt-spark Python models in-process on the SparkSession that dbt-spark's ``session`` method uses.

dbt-spark ships submission helpers for Databricks only. With ``submission_method: session`` the
compiled model code is executed here, in the dbt process, with ``spark`` bound to the same
SparkSession the SQL models run on, so temporary views, UDFs and the Hive metastore are shared.
"""

from __future__ import annotations

import os
import sys
from typing import Any

SUBMISSION_METHOD = "session"


def ensure_python_workers_env() -> None:
    """Point Spark's Python workers at this interpreter unless the user chose one.

    Without it, workers start ``python3`` from PATH, which lacks this environment's packages
    (Arrow UDFs then fail with "No module named 'pyarrow'").
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def get_session(server_side_parameters: dict[str, Any] | None = None) -> Any:
    """The SparkSession dbt-spark's session method uses, built exactly as dbt-spark builds it.

    Once it exists it is returned as it is: a builder carrying the profile's settings would make
    Spark log "Using an existing Spark session; only runtime SQL configurations will take effect"
    on every statement.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is None:
        # Before the JVM opens the metastore: one process at a time on an embedded one.
        from dbt_spark_cdc.metastore_lock import acquire

        acquire(server_side_parameters or {})
    else:
        existing = SparkSession.getActiveSession() or SparkSession._instantiatedSession
        if existing is not None:
            return existing
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in (server_side_parameters or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


#: Session settings the package relies on, applied unless the profile's server_side_parameters set
#: them. TIMESTAMP_MICROS: Spark writes parquet timestamps as INT96 by default, which carries no
#: min/max statistics, so a filter on a load time (`cdc_loaded_at > watermark`, how every
#: incremental step finds its batch) cannot skip the row groups of earlier runs and reads the whole
#: history. Standard microsecond timestamps can (measured: a 1,000-change batch read from 10,000,000
#: staged changes). Tables keep reading their older INT96 files; only new files change.
#: hugeMethodLimit 8000: Spark's default (65535) keeps whole-stage code whose methods HotSpot will not
#: JIT-compile (it skips methods over 8,000 bytes of bytecode), so they run interpreted. The apply
#: statements' per-column decoding generates such methods; with 8000, Spark runs those plan parts
#: without whole-stage codegen instead, as Spark's configuration guide advises on HotSpot
#: (measured: an SCD1 first build of 2,000,000 changes, warm, without the write, 40 s -> 27 s).
SESSION_DEFAULTS = {
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.codegen.hugeMethodLimit": "8000",
}
_DEFAULTS_MARKER = "_spark_cdc_defaults_applied"


def prepare_session(spark: Any, server_side_parameters: dict[str, Any] | None = None) -> Any:
    """Register the package's UDFs on ``spark`` and apply SESSION_DEFAULTS (once); return it."""
    from dbt_spark_cdc.udfs import register_udfs

    if not getattr(spark, _DEFAULTS_MARKER, False):
        configured = server_side_parameters or {}
        for key, value in SESSION_DEFAULTS.items():
            if key not in configured:
                spark.conf.set(key, value)
        quiet_existing_session_warning(spark)
        setattr(spark, _DEFAULTS_MARKER, True)
    register_udfs(spark)
    return spark


class SessionPythonJobHelper:
    """A dbt ``PythonJobHelper`` that executes the compiled model in the current SparkSession."""

    def __init__(self, parsed_model: dict[str, Any], credentials: Any) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials

    @property
    def _model_name(self) -> str:
        return str(self.parsed_model.get("alias") or self.parsed_model.get("name") or "python_model")

    def submit(self, compiled_code: str) -> None:
        params = getattr(self.credentials, "server_side_parameters", None) or {}
        spark = prepare_session(get_session(params), params)
        # compiled_code is the user's own model file plus dbt's generated wrapper, never message data.
        code = compile(compiled_code, f"<dbt python model {self._model_name}>", "exec")
        try:
            exec(code, self._namespace(spark))
        except Exception as exc:
            # A run killed while writing this model's table left its directory behind; dbt's
            # wrapper writes the table last, so running the model again writes it once.
            from dbt_spark_cdc.abandoned_writes import retry_after_clearing

            if not retry_after_clearing(spark, exc):
                raise
            exec(code, self._namespace(spark))

    def _namespace(self, spark: Any) -> dict[str, Any]:
        return {"spark": spark, "__name__": f"dbt_model_{self._model_name}"}


#: The loggers of SparkSession's builder (Spark 3.5, Spark 4 classic). dbt-spark's session cursor
#: builds the session with the profile's settings for every statement, and Spark warns each time
#: that only runtime SQL settings of an existing session take effect: hundreds of identical lines per
#: build, which bury the warnings that matter.
SESSION_BUILDER_LOGGERS = ("org.apache.spark.sql.SparkSession", "org.apache.spark.sql.classic.SparkSession")


def quiet_existing_session_warning(spark: Any) -> None:
    """Log SparkSession's builder at ERROR only (see SESSION_BUILDER_LOGGERS)."""
    try:
        log4j = spark._jvm.org.apache.logging.log4j
        for name in SESSION_BUILDER_LOGGERS:
            log4j.core.config.Configurator.setLevel(name, log4j.Level.ERROR)
    except Exception:  # a logging tweak must never fail a run (another log backend)
        return
