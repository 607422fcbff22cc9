"""The UDFs must run on executors whose Python has no dbt-spark-cdc (they travel by value).

A separate local Spark (its own JVM, in a subprocess) runs its Python workers through a wrapper that
puts a poisoned ``dbt_spark_cdc`` first on the path: any import of the package on a worker fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

DRIVER = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession
    from dbt_spark_cdc.udfs import register_udfs

    spark = (SparkSession.builder.master("local[1]")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "1")
             .getOrCreate())
    register_udfs(spark)
    row = spark.sql(
        "select spark_cdc_crc32c('123456789') as crc,"
        " spark_cdc_decode_connect_decimal('AdTA', 2) as dec,"
        " spark_cdc_version(1) as version,"
        " (select count(*) from range(3) where spark_cdc_crc32c(cast(id as string)) is not null) as n"
    ).collect()[0]
    print("RESULT", row.crc, row.dec, row.version, row.n)
    spark.stop()
    """
)


def test_udfs_run_on_workers_without_the_package(tmp_path: Path) -> None:
    poison = tmp_path / "poison" / "dbt_spark_cdc"
    poison.mkdir(parents=True)
    (poison / "__init__.py").write_text("raise ImportError('dbt_spark_cdc imported on a worker')\n")
    wrapper = tmp_path / "worker_python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{poison.parent}:$PYTHONPATH" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PYSPARK_PYTHON": str(wrapper), "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYSPARK_DRIVER_PYTHON", None)
    done = subprocess.run(
        [sys.executable, "-c", DRIVER], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    # CRC32C check value of "123456789" (RFC 3720) is 0xE3069283.
    from dbt_spark_cdc import __version__

    assert f"RESULT {0xE3069283} 1200.00 {__version__} 3" in done.stdout, done.stdout + done.stderr[-2000:]
