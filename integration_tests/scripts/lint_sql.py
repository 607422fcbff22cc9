"""SQL lint (`make lint`): sqlfluff with the dbt templater and the sparksql dialect.

Two passes over one compilation, in one process and one Spark session (dbt-spark's session
method):

1. The package's models (``models/``) with the dbt templater and every rule except those the
   repository's ``.sqlfluff`` excludes, each with its reason. sqlfluff maps a node back to its file
   through the compiling project's own paths, so the project is ``integration_tests/lint``: the
   package itself (same name, its models, macros, seeds and docs) with every format enabled.
2. The SQL the macros generate, which is most of the package's SQL: a file of macro definitions
   renders to nothing, and sqlfluff ignores what a template generates. Each model's compiled code
   (the dbt templater's output of pass 1, parsed there in the sparksql dialect: this pass lints
   that parse tree) must parse and pass the rules that find mistakes rather than style
   (``GENERATED_RULES``), reported at their place in the compiled code; layout there is Jinja's,
   not ours.

Exit status 1 when anything is found, with one line per finding.
"""

from __future__ import annotations

import os
import re
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


# A Jinja tag or comment (a model file of these alone is only template).
JINJA_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)


def only_template(raw: str) -> bool:
    """Whether a model file is Jinja tags and whitespace alone."""
    return not JINJA_TAG.sub("", raw).strip()


def whitespace_findings(path: str, raw: str) -> list[str]:
    """What layout rules could report in a file of Jinja tags alone: its whitespace."""
    found = [
        f"{path}:{i}: trailing whitespace"
        for i, line in enumerate(raw.split("\n"), 1)
        if line != line.rstrip()
    ]
    if not raw.endswith("\n") or raw.endswith("\n\n"):
        found.append(f"{path}: must end with exactly one newline")
    return found


def model_linter(config: Any) -> Any:
    """A sqlfluff Linter that runs no rule over a model file of Jinja tags alone (it still parses it,
    and reports templating and parsing errors)."""
    from sqlfluff.core import Linter
    from sqlfluff.core.rules.base import RulePack

    class ModelLinter(Linter):
        @classmethod
        def lint_rendered(
            cls, rendered: Any, rule_pack: RulePack, fix: bool = False, formatter: Any = None
        ) -> Any:
            if only_template(rendered.source_str):
                rule_pack = RulePack(rules=[], reference_map=rule_pack.reference_map)
            return super().lint_rendered(rendered, rule_pack, fix, formatter)

    return ModelLinter(config=config)


def seed_landing_table() -> None:
    """The empty landing table the staging models describe when they compile."""
    from dbt.cli.main import dbtRunner

    args = ["seed", "--project-dir", str(LINT_PROJECT), "--profiles-dir", str(PROFILES), "--quiet"]
    result = dbtRunner().invoke(args)
    if not result.success:
        raise SystemExit(f"lint_sql: dbt seed of {LINT_PROJECT} failed: {result.exception}")


def main() -> int:
    os.environ.setdefault("SPARK_CDC_HOME", str(ROOT / ".spark" / "lint"))
    os.environ.setdefault("SPARK_CDC_SCHEMA", "spark_cdc_lint")
    os.chdir(ROOT)  # .sqlfluff names the lint project relative to the repository
    from sqlfluff.core import FluffConfig, Linter, SQLLintError
    from sqlfluff.core.linter import LintedFile

    seed_landing_table()
    findings: list[str] = []
    linted_dirs = model_linter(FluffConfig.from_root()).lint_paths(("models",)).paths
    models = [linted for directory in linted_dirs for linted in directory.files]
    compiled: dict[str, LintedFile] = {}
    for linted in models:
        for v in linted.get_violations():
            findings.append(f"{linted.path}:{v.line_no}:{v.line_pos}: {v.rule_code()} {v.desc()}")
        if linted.templated_file is not None and linted.tree is not None:
            compiled[linted.path] = linted
    # A model the dbt templater could not compile is skipped with a warning, not a violation.
    for path in sorted(str(p.relative_to(ROOT)) for p in (ROOT / "models").rglob("*.sql")):
        raw = (ROOT / path).read_text(encoding="utf-8")
        if only_template(raw):
            findings += whitespace_findings(path, raw)
        if path not in compiled:
            findings.append(f"{path}: not compiled by the dbt templater (see its warning above)")

    # The same compiled SQL (what dbt runs), with the rules that find mistakes in generated code:
    # pass 1's parse tree of it (a second parse was a fifth of the script's time), every finding
    # kept (ignore_templated_areas off: there, all of it is template output) and reported at its
    # place in the compiled SQL. Whether it parses, pass 1 has reported.
    config = FluffConfig(
        overrides={"dialect": "sparksql", "rules": GENERATED_RULES, "ignore_templated_areas": False}
    )
    rules = Linter(config=config).get_rulepack()
    for path, linted in sorted(compiled.items()):
        _, violations, _, _ = Linter.lint_fix_parsed(
            linted.tree, config=config, rule_pack=rules, fname=path, templated_file=linted.templated_file
        )
        for v in violations:
            line, pos = v.line_no, v.line_pos
            if isinstance(v, SQLLintError) and v.segment.pos_marker is not None:
                line, pos = v.segment.pos_marker.working_loc
            findings.append(f"{path} (compiled):{line}:{pos}: {v.rule_code()} {v.desc()}")

    for finding in findings:
        print(finding)
    print(
        f"sqlfluff: {len(models)} model files (dbt templater), {len(compiled)} compiled models"
        f" (macro-generated SQL, rules {GENERATED_RULES} and parsing): {len(findings)} findings"
    )
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
