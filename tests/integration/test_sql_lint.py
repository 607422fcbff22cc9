"""sqlfluff over the package's SQL, as part of `make test` (`make lint-sql` runs the same script).

The script compiles the package through integration_tests/lint (every format enabled) and lints the
models with the dbt templater and the sparksql dialect, then the SQL the macros generate (README,
"Lint"). It runs in its own process: sqlfluff's dbt templater sets dbt's global flags, which must not
leak into the in-process dbt runs of the other tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_package_sql_passes_sqlfluff(tmp_path: Path) -> None:
    env = {**os.environ, "SPARK_CDC_HOME": str(tmp_path / "spark"), "SPARK_CDC_SCHEMA": "spark_cdc_lint"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "integration_tests" / "scripts" / "lint_sql.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    summary = [line for line in done.stdout.splitlines() if line.startswith("sqlfluff: ")]
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]
    # Not a vacuous pass: every model file was linted and every model compiled.
    assert summary, done.stdout[-5000:]
    models = len(list((ROOT / "models").rglob("*.sql")))
    expected = f"sqlfluff: {models} model files (dbt templater), {models} compiled models"
    assert summary[-1].startswith(expected), summary
