"""The Delta Lake and Apache Iceberg jars of the embedded Spark, from the project's own set-up.

integration_tests/lakehouse/pom.xml names them, one Maven profile per Spark line. ``ensure_jars``
resolves the profile of the installed pyspark's line once (``mvn dependency:copy-dependencies``) into
``.spark/jars/spark-<line>/``, with Maven's cache in ``.spark/m2``; later calls find the jars there and
start nothing. A missing ``mvn``, a Spark line the pom has no profile for, or a jar Maven did not
deliver stops with a message that names the fix.

``SPARK_CDC_TABLE_FORMAT`` (delta or iceberg; unset: parquet) picks the format a test process runs
on: integration_tests/profiles.yml reads it (extensions, catalog) and ``SPARK_CDC_JARS`` (the jar
paths ``session_env`` returns). One Spark session serves one of them: both formats need
``spark_catalog``.

``python -m tests.helpers.lakehouse`` resolves the jars (`make lakehouse-jars`);
``python -m tests.helpers.lakehouse delta`` prints that format's SPARK_CDC_JARS value.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POM = ROOT / "integration_tests" / "lakehouse" / "pom.xml"
NS = {"m": "http://maven.apache.org/POM/4.0.0"}
LAKEHOUSE_FORMATS = ("delta", "iceberg")
# The jars each format loads, by artifactId prefix.
ARTIFACTS = {"delta": ("delta-spark_", "delta-storage"), "iceberg": ("iceberg-spark-runtime-",)}


class LakehouseSetupError(RuntimeError):
    """The lakehouse jars cannot be had; the message ends with the fix."""


def spark_line() -> str:
    """major.minor of the installed pyspark."""
    import pyspark

    return ".".join(pyspark.__version__.split(".")[:2])


def cache_dir() -> Path:
    return Path(os.environ.get("SPARK_CDC_JARS_CACHE", str(ROOT / ".spark")))


def expected_jars(line: str) -> list[str]:
    """The jar file names the pom's profile for Spark ``line`` lists (artifactId-version.jar)."""
    profiles = {
        p.findtext("m:id", namespaces=NS): p for p in ET.parse(POM).getroot().iterfind(".//m:profile", NS)
    }
    profile = profiles.get(f"spark-{line}")
    if profile is None:
        known = ", ".join(sorted(str(k).removeprefix("spark-") for k in profiles))
        raise LakehouseSetupError(
            f"spark_cdc: no Delta Lake / Apache Iceberg jars for Spark {line} (pyspark installed in "
            f"{sys.prefix}); {POM.relative_to(ROOT)} has profiles for Spark {known}.\n"
            "Fix: install a pyspark of one of those lines (make PYSPARK_SPEC='pyspark>=4.1.1,<4.2'), "
            "or run without SPARK_CDC_TABLE_FORMAT (parquet/orc)."
        )
    return [
        f"{d.findtext('m:artifactId', namespaces=NS)}-{d.findtext('m:version', namespaces=NS)}.jar"
        for d in profile.iterfind("m:dependencies/m:dependency", NS)
    ]


def ensure_jars(line: str | None = None) -> list[Path]:
    """The profile's jars for Spark ``line`` (the installed pyspark's by default), resolved with Maven
    the first time."""
    line = line or spark_line()
    names = expected_jars(line)
    folder = cache_dir() / "jars" / f"spark-{line}"
    jars = [folder / n for n in names]
    if all(j.is_file() for j in jars):
        return jars
    mvn = shutil.which("mvn")
    if mvn is None:
        raise LakehouseSetupError(
            f"spark_cdc: the Delta Lake / Apache Iceberg jars ({', '.join(names)}) are not in {folder}, "
            "and Maven (mvn) is not on PATH to fetch them.\n"
            "Fix: install Maven (apt-get install maven) and run make lakehouse-jars, or copy those jars "
            f"into {folder}."
        )
    command = [
        mvn, "-q", "-B", "-f", str(POM), f"-Pspark-{line}", f"-Dmaven.repo.local={cache_dir() / 'm2'}",
        "dependency:copy-dependencies", f"-DoutputDirectory={folder}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    missing = [j.name for j in jars if not j.is_file()]
    if done.returncode != 0 or missing:
        raise LakehouseSetupError(
            f"spark_cdc: Maven did not deliver {', '.join(missing) or 'the lakehouse jars'} "
            f"(exit {done.returncode}): {(done.stdout + done.stderr).strip()[-2000:]}\n"
            f"Fix: check that Maven Central is reachable, then run make lakehouse-jars; the command was "
            f"{' '.join(command)}"
        )
    return jars


def jars_for(table_format: str, line: str | None = None) -> list[Path]:
    """The jars ``table_format`` (delta or iceberg) loads."""
    if table_format not in LAKEHOUSE_FORMATS:
        raise LakehouseSetupError(
            f"spark_cdc: SPARK_CDC_TABLE_FORMAT={table_format!r} is not one of "
            f"{', '.join(LAKEHOUSE_FORMATS)}.\n"
            "Fix: set it to delta or iceberg, or unset it (parquet/orc)."
        )
    return [j for j in ensure_jars(line) if j.name.startswith(ARTIFACTS[table_format])]


def table_format() -> str | None:
    """The lakehouse format this process runs on (SPARK_CDC_TABLE_FORMAT), or None for parquet."""
    value = os.environ.get("SPARK_CDC_TABLE_FORMAT", "").strip().lower()
    return None if value in ("", "parquet") else value


def target_file_format() -> str:
    """The file_format test targets take in this process: the lakehouse format, else parquet."""
    return table_format() or "parquet"


def session_env() -> dict[str, str]:
    """The environment integration_tests/profiles.yml needs for this process's format."""
    fmt = table_format()
    if fmt is None:
        return {}
    return {"SPARK_CDC_TABLE_FORMAT": fmt, "SPARK_CDC_JARS": ",".join(str(j) for j in jars_for(fmt))}


def main(argv: list[str]) -> int:
    try:
        if argv:
            print(",".join(str(j) for j in jars_for(argv[0])))
        else:
            for jar in ensure_jars():
                print(jar)
    except LakehouseSetupError as error:
        print(error, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
