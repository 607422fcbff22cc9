"""SQL lint (`make lint`): sqlfluff with the dbt templater and the sparksql dialect.

Two passes in one process and one Spark session (dbt-spark's session method; the dbt templater
compiles through the same session):

1. The package's models (``models/``) with the dbt templater and every rule except those the
   repository's ``.sqlfluff`` excludes, each with its reason. sqlfluff maps a node back to its file
   through the compiling project's own paths, so the project is ``integration_tests/lint``: the
   package itself (same name, its models, macros, seeds and docs) with every format enabled.
2. The SQL the macros generate, which is most of the package's SQL: a file of macro definitions
   renders to nothing, and sqlfluff ignores what a template generates. Each model's compiled code
   must parse in the sparksql dialect and pass the rules that find mistakes rather than style
   (``GENERATED_RULES``); layout there is Jinja's, not ours.

Exit status 1 when anything is found, with one line per finding.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LINT_PROJECT = ROOT / "integration_tests" / "lint"
PROFILES = ROOT / "integration_tests"

# Rules for the generated SQL: ambiguity (AM), references to unknown tables (RF01), unused CTEs
# (ST03), duplicate aliases (AL04, AL08). Not used there: layout, capitalisation and aliasing style
# (Jinja's whitespace, not a reader's file); ST11 (reports tables joined inside a nested WITH as
# unused: 10 false findings in cdc_accounting); AM04 (every `select *` of a staging CTE is "unknown
# columns" by design); RF02/RF03 (qualification style).
GENERATED_RULES = "AM01,AM02,AM03,AM05,AM06,AM07,AM08,RF01,ST03,AL04,AL08"


def compiled_models() -> dict[str, str]:
    """Seed the empty landing table, compile every model; {model file: compiled SQL}."""
    from dbt.cli.main import dbtRunner

    common = ["--project-dir", str(LINT_PROJECT), "--profiles-dir", str(PROFILES), "--quiet"]
    runner = dbtRunner()
    for command in (["seed"],):
        result = runner.invoke([*command, *common])
        if not result.success:
            raise SystemExit(f"lint_sql: dbt {command[0]} of {LINT_PROJECT} failed: {result.exception}")
    result = runner.invoke(["compile", *common])
    if not result.success:
        raise SystemExit(f"lint_sql: dbt compile of {LINT_PROJECT} failed: {result.exception}")
    compiled: dict[str, str] = {}
    for node_result in result.result or []:
        node: Any = node_result.node
        if node.resource_type != "model":
            continue
        path = (LINT_PROJECT / node.original_file_path).resolve().relative_to(ROOT)
        compiled[str(path)] = node.compiled_code or ""
    return compiled


def main() -> int:
    os.environ.setdefault("SPARK_CDC_HOME", str(ROOT / ".spark" / "lint"))
    os.environ.setdefault("SPARK_CDC_SCHEMA", "spark_cdc_lint")
    os.chdir(ROOT)  # .sqlfluff names the lint project relative to the repository
    from sqlfluff.core import FluffConfig, Linter

    findings: list[str] = []
    compiled = compiled_models()

    linted_dirs = Linter(config=FluffConfig.from_root()).lint_paths(("models",)).paths
    models = [linted for directory in linted_dirs for linted in directory.files]
    for linted in models:
        for v in linted.get_violations():
            findings.append(f"{linted.path}:{v.line_no}:{v.line_pos}: {v.rule_code()} {v.desc()}")
    if len(models) < len(compiled):
        linted_paths = {str(Path(f.path)) for f in models}
        for path in sorted(set(compiled) - linted_paths):
            findings.append(f"{path}: not linted (the dbt templater skipped it: a compilation error?)")

    generated = Linter(
        config=FluffConfig(overrides={"dialect": "sparksql", "templater": "raw", "rules": GENERATED_RULES})
    )
    for path, sql in sorted(compiled.items()):
        for v in generated.lint_string(sql, fname=path).get_violations():
            findings.append(f"{path} (compiled):{v.line_no}:{v.line_pos}: {v.rule_code()} {v.desc()}")

    for finding in findings:
        print(finding)
    print(
        f"sqlfluff: {len(models)} model files (dbt templater), {len(compiled)} compiled models"
        f" (macro-generated SQL, rules {GENERATED_RULES} and parsing): {len(findings)} findings"
    )
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
