"""The wheel users install: `python -m build` makes it, it installs into a clean virtual environment,
and dbt parses integration_tests/ with the package imported from that wheel, not from this checkout.

The clean environment reuses this environment's installed dependencies (dbt, pyspark...) through a
path entry instead of downloading them again; a path entry does not process the .pth files found in
it, so the editable install of this checkout stays invisible there (the test checks where
dbt_spark_cdc was imported from)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import dbt_spark_cdc
import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
#: Every file of the wheel's package, by name: the runtime modules and py.typed. A new runtime module
#: is added here on purpose; helpers for tests and demos live in tests/helpers, outside the wheel.
RUNTIME_FILES = {
    "__init__.py",
    "_plugin.py",
    "abandoned_writes.py",
    "aurora_dsql.py",
    "checksums.py",
    "decoders.py",
    "generate.py",
    "json_variant.py",
    "metastore_lock.py",
    "qlik_replicate.py",
    "report.py",
    "session.py",
    "udfs.py",
    "py.typed",
}


def untracked_names() -> list[str]:
    """The file and folder names .gitignore keeps out of the repository (virtual environments, Spark
    homes, tool caches, build output): the source of the wheel without them. Entries with a path
    inside the repository (benchmarks/...) name nothing the copy needs to skip."""
    lines = (ROOT / ".gitignore").read_text().splitlines()
    names = [line.strip().rstrip("/") for line in lines if line.strip() and not line.startswith("#")]
    return [name for name in names if "/" not in name]


SMOKE = """
import json, sys
from dbt.cli.main import dbtRunner
project, profiles, target = sys.argv[1:4]
result = dbtRunner().invoke(["parse", "--project-dir", project, "--profiles-dir", profiles,
                             "--target-path", target, "--no-partial-parse"])
module = sys.modules.get("dbt_spark_cdc")
report = {"success": result.success, "exception": str(result.exception)}
report |= {"module": getattr(module, "__file__", None), "version": getattr(module, "__version__", None)}
print(json.dumps(report))
"""


def test_wheel_installs_into_a_clean_venv_and_parses_the_integration_project(tmp_path: Path) -> None:
    # Build from a copy: `python -m build` writes build/ and *.egg-info next to the sources.
    source = tmp_path / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(".git", *untracked_names()),
    )
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("dbt_spark_cdc-*.whl")
    assert wheel.name == f"dbt_spark_cdc-{dbt_spark_cdc.__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    package = {n for n in names if n.startswith("dbt_spark_cdc/")}
    # The runtime code and py.typed, nothing else: no test helpers (tests/helpers), no benchmarks.
    assert package == {f"dbt_spark_cdc/{name}" for name in RUNTIME_FILES}
    assert not {n for n in names if not n.startswith(("dbt_spark_cdc/", "dbt_spark_cdc-"))}, sorted(names)
    metadata = zipfile.ZipFile(wheel).read(f"dbt_spark_cdc-{dbt_spark_cdc.__version__}.dist-info/METADATA")
    assert b"Requires-Dist: dbt-core<1.12,>=1.10" in metadata, metadata[:2000]

    clean = tmp_path / "clean"
    venv.create(clean, with_pip=True)
    python = clean / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site / "_spark_cdc_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )

    # integration_tests/ as a user would have it: the dbt package from this checkout, the Python
    # package from the wheel.
    project = tmp_path / "integration_tests"
    shutil.copytree(
        ROOT / "integration_tests", project, ignore=shutil.ignore_patterns("target", "dbt_packages", "logs")
    )
    (project / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    (project / "package-lock.yml").unlink(missing_ok=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SPARK_CDC_HOME": str(tmp_path / "spark")}
    subprocess.run(
        [
            str(python),
            "-c",
            "from dbt.cli.main import cli; cli()",
            "deps",
            "--quiet",
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project),
        ],
        check=True,
        capture_output=True,
        env=env,
    )
    out = subprocess.run(
        [str(python), "-c", SMOKE, str(project), str(project), str(tmp_path / "target")],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["success"], report
    assert report["module"] and Path(report["module"]).is_relative_to(site), report  # the wheel's copy
    assert report["version"] == dbt_spark_cdc.__version__
    manifest = json.loads((tmp_path / "target" / "manifest.json").read_text())
    models = {n["name"] for n in manifest["nodes"].values() if n["package_name"] == "spark_cdc"}
    assert {"cdc_changes", "cdc_quarantine", "stg_cdc__debezium"} <= models, sorted(models)
