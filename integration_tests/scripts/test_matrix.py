"""`make test-matrix`: the test suite on each supported dbt-core x pyspark combination.

Each combination gets its own virtual environment under .venv-matrix/ (the package installed in
editable mode with the dev extras, dbt-core and pyspark pinned to the combination's series), its own
Spark home, and a full `pytest tests` run. The outcome and the date of each run are written into the
README's support table (between the `matrix:start` / `matrix:end` markers), so the table always says
when a combination last passed here. `MATRIX="dbt1.11-pyspark3.5"` runs one combination.

pyspark 3.5 takes the package's Spark 3.5 path (chosen once per run from the Spark version) and needs
numpy<2 and pyarrow<=24 (pyspark 3.5's pandas API fails under numpy 2, and newer pyarrow requires it);
its combinations install those pins.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


@dataclass(frozen=True)
class Combination:
    name: str
    dbt_core: str
    pyspark: str
    extra: tuple[str, ...] = ()

    @property
    def spark3(self) -> bool:
        return self.pyspark.startswith("pyspark>=3.")


#: pyspark 3.5 needs numpy<2 (its pandas API uses np.NaN), and pyarrow 25+ requires numpy 2.
SPARK35_PINS = ("pyspark>=3.5,<3.6", "numpy<2", "pyarrow<=24")
#: The default line (`make`'s venv: the newest Spark with Delta Lake and Apache Iceberg releases), the
#: newest Spark 4 (parquet / orc), and Spark 3.5.
COMBINATIONS = (
    Combination("dbt1.11-pyspark4.1", "dbt-core>=1.11,<1.12", "pyspark>=4.1.1,<4.2"),
    Combination("dbt1.10-pyspark4.1", "dbt-core>=1.10,<1.11", "pyspark>=4.1.1,<4.2"),
    Combination("dbt1.11-pyspark4.3", "dbt-core>=1.11,<1.12", "pyspark>=4.3,<4.4"),
    Combination("dbt1.10-pyspark4.3", "dbt-core>=1.10,<1.11", "pyspark>=4.3,<4.4"),
    Combination("dbt1.11-pyspark3.5", "dbt-core>=1.11,<1.12", SPARK35_PINS[0], SPARK35_PINS[1:]),
    Combination("dbt1.10-pyspark3.5", "dbt-core>=1.10,<1.11", SPARK35_PINS[0], SPARK35_PINS[1:]),
)


def run(cmd: list[str], env: dict[str, str] | None = None) -> int:
    print("+", " ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=ROOT, env=env)


def versions(python: Path) -> str:
    code = (
        "import importlib.metadata as m; "
        "print(' '.join(f'{p} {m.version(p)}' for p in ('dbt-core', 'dbt-spark', 'pyspark')))"
    )
    return subprocess.check_output([str(python), "-c", code], text=True).strip()


def test_combination(combo: Combination, pytest_args: list[str]) -> tuple[str, str]:
    """(outcome, installed versions) of one combination's suite."""
    venv = ROOT / ".venv-matrix" / combo.name
    python = venv / "bin" / "python"
    if not python.exists() and run([sys.executable, "-m", "venv", str(venv)]) != 0:
        return "venv failed", ""
    install = [
        *(str(python), "-m", "pip", "install", "--quiet", "-e", ".[dev]"),
        *(combo.dbt_core, combo.pyspark, *combo.extra),
    ]
    if run(install) != 0:
        return "install failed", ""
    installed = versions(python)
    env = {
        **os.environ,
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYSPARK_PYTHON": str(python),
        "SPARK_CDC_HOME": str(ROOT / ".spark" / "matrix" / combo.name),
        "VIRTUAL_ENV": str(venv),
    }
    if combo.spark3:  # no VARIANT: the integration project's one variant column is a string there
        env["SPARK_CDC_VARIANT_TYPE"] = "string"
    started = time.monotonic()
    pytest = [
        str(python),
        "-m",
        "pytest",
        "tests",
        "-q",
        "-n",
        "2",
        "--dist",
        "loadfile",
        "--no-loadscope-reorder",
        *pytest_args,
    ]
    code = run(pytest, env)
    minutes = (time.monotonic() - started) / 60
    return ("passed" if code == 0 else f"failed (exit {code})") + f" in {minutes:.0f} min", installed


def update_readme(rows: dict[str, tuple[str, str, str]]) -> None:
    """Rewrite the support table, keeping the last result of combinations not run this time."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- matrix:start -->\n(.*?)<!-- matrix:end -->", text, re.S)
    if match is None:
        raise SystemExit("README.md has no <!-- matrix:start --> / <!-- matrix:end --> markers")
    previous: dict[str, tuple[str, str, str]] = {}
    for line in match.group(1).splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4:
            previous[cells[0].strip("`")] = (cells[1], cells[2], cells[3])
    lines = ["| combination | installed | result | last run |", "|---|---|---|---|"]
    for combo in COMBINATIONS:
        installed, result, when = rows.get(combo.name) or previous.get(combo.name) or ("", "not run", "")
        lines.append(f"| `{combo.name}` | {installed} | {result} | {when} |")
    table = "\n".join(lines) + "\n"
    README.write_text(text[: match.start(1)] + table + text[match.end(1) :], encoding="utf-8")


def main(argv: list[str]) -> int:
    wanted = os.environ.get("MATRIX", "").split()
    rows: dict[str, tuple[str, str, str]] = {}
    failed = False
    for combo in COMBINATIONS:
        if wanted and combo.name not in wanted:
            continue
        outcome, installed = test_combination(combo, argv)
        failed |= not outcome.startswith("passed")
        rows[combo.name] = (installed, outcome, dt.date.today().isoformat())
        print(f"== {combo.name}: {outcome} ({installed})", flush=True)
    update_readme(rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
