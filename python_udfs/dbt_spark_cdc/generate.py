"""``spark-cdc-generate``: write a target model file and its yml for every source table of the staged
change stream, from ``dbt run-operation spark_cdc.generate_cdc_models`` run in-process.

The operation prints each file between ``-- spark_cdc file: <path>`` and ``-- spark_cdc end``; this
writes them under the project directory. Table and column names come from the messages, so the
paths are the operation's sanitised model names only (letters, digits and ``_``), every path must
stay inside the project's output directory, and an existing file is never overwritten without
``--force``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from pathlib import Path

FILE_MARK = "-- spark_cdc file: "
END_MARK = "-- spark_cdc end"
SAFE_PATH = re.compile(r"[A-Za-z0-9_./-]+\.(sql|yml)")


def parse_files(output: str) -> dict[str, str]:
    """The files in the operation's printed output: relative path -> content."""
    files: dict[str, str] = {}
    path: str | None = None
    lines: list[str] = []
    for line in output.splitlines():
        if line.startswith(FILE_MARK):
            path, lines = line[len(FILE_MARK) :].strip(), []
        elif line.strip() == END_MARK and path is not None:
            files[path] = "\n".join(lines).strip("\n") + "\n"
            path = None
        elif path is not None:
            lines.append(line)
    return files


def write_files(project_dir: Path, files: dict[str, str], *, force: bool = False) -> list[Path]:
    """Write ``files`` under ``project_dir``; refuses paths outside it and, without ``force``,
    existing files. Returns the paths written."""
    root = project_dir.resolve()
    targets = []
    for relative in files:
        if not SAFE_PATH.fullmatch(relative) or ".." in relative.split("/"):
            raise ValueError(f"spark-cdc-generate: refusing the path {relative!r}")
        target = (root / relative).resolve()
        if root not in target.parents:
            raise ValueError(f"spark-cdc-generate: {relative!r} is outside {root}")
        if target.exists() and not force:
            raise FileExistsError(f"spark-cdc-generate: {target} exists. Fix: remove it, or pass --force.")
        targets.append(target)
    for target, content in zip(targets, files.values(), strict=True):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return targets


def run_operation(project_dir: str, profiles_dir: str | None, args: dict[str, object]) -> str:
    """Run the operation in-process and return what it printed."""
    from dbt.cli.main import dbtRunner

    argv = ["run-operation", "spark_cdc.generate_cdc_models", "--args", json.dumps(args)]
    argv += ["--project-dir", project_dir]
    if profiles_dir:
        argv += ["--profiles-dir", profiles_dir]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        result = dbtRunner().invoke(argv)
    if not result.success:
        raise RuntimeError(f"spark-cdc-generate: dbt run-operation failed: {result.exception}")
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="spark-cdc-generate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--project-dir", default=".")
    parser.add_argument("--profiles-dir", default=None)
    parser.add_argument("--kinds", default="scd1,scd2", help="scd1, scd2 or scd1,scd2 (default)")
    parser.add_argument("--formats", default=None, help="comma-separated formats (default: all enabled)")
    parser.add_argument("--directory", default="models/cdc", help="under the project (default models/cdc)")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    options = parser.parse_args(argv)
    args: dict[str, object] = {"kinds": options.kinds.split(","), "directory": options.directory}
    if options.formats:
        args["formats"] = options.formats.split(",")
    output = run_operation(options.project_dir, options.profiles_dir, args)
    for line in output.splitlines():
        if line.startswith("-- spark_cdc skipped:"):
            print(line[3:], file=sys.stderr)
    written = write_files(Path(options.project_dir), parse_files(output), force=options.force)
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
