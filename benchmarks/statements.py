"""Where a dbt run's time goes: the wall time of each statement in a dbt log, slowest first.

    python -m benchmarks.statements .spark/bench/logs/dbt.log --node items_scd1 --top 10
    python -m benchmarks.statements .spark/bench/logs/dbt.log --node items_scd1 --in-order

dbt logs each statement it sends ("On <node>: /* ... */" followed by the SQL) and then "SQL status:
OK in N seconds". With dbt-spark's session method that figure is the time of ``spark.sql(...)``:
the whole statement for DDL and DML (CREATE TABLE AS, INSERT, MERGE), but only analysis and
planning for a SELECT, whose rows are fetched afterwards (dbt's ``run_query``). So the time of a
statement here is from the line that starts it to the next line dbt logs in the same thread (the
next statement, or the node's end): a SELECT's fetch is counted, and so is dbt's own work between
statements (compiling the next one), which is part of what a model costs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

_LINE = re.compile(r"^(?:\x1b\[0m)?(\d\d:\d\d:\d\d\.\d+) \[\w+\s*\] \[([^\]]+)\]: (.*)$")
_STATEMENT = re.compile(r"^On ([\w.-]+): /\*")
_STATUS = re.compile(r"^SQL status: .* in ([\d.]+) seconds")


@dataclass
class Statement:
    """One statement dbt sent: its node, first lines of SQL, the time ``spark.sql`` took (``status``)
    and the wall time until the thread's next logged line (``seconds``)."""

    node: str
    line: int
    started: dt.datetime
    status: float | None = None
    seconds: float = 0.0
    sql_lines: list[str] = field(default_factory=list)

    @property
    def sql(self) -> str:
        return " ".join(self.sql_lines)


def statements(lines: Iterable[str]) -> list[Statement]:
    """The statements of a dbt log, in log order, each with its wall time (see the module's text)."""
    found: list[Statement] = []
    open_by_thread: dict[str, Statement] = {}
    reading: Statement | None = None  # the statement whose SQL lines follow
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        m = _LINE.match(line)
        if m is None:
            if reading is not None and line.strip() and len(reading.sql_lines) < 3:
                reading.sql_lines.append(line.strip())
            continue
        reading = None
        t = dt.datetime.strptime(m.group(1), "%H:%M:%S.%f")
        thread, message = m.group(2).strip(), m.group(3)
        current = open_by_thread.get(thread)
        status = _STATUS.match(message)
        if status is not None:
            if current is not None and current.status is None:
                current.status = float(status.group(1))
            continue
        begun = _STATEMENT.match(message)
        # Lines dbt logs while the statement runs (opening the connection) come before its status.
        if current is not None and (current.status is not None or begun or message.startswith("Finished")):
            current.seconds = _elapsed(current.started, t)
            del open_by_thread[thread]
        if begun is not None:
            reading = Statement(node=begun.group(1), line=number, started=t)
            found.append(reading)
            open_by_thread[thread] = reading
    return found


def _elapsed(start: dt.datetime, end: dt.datetime) -> float:
    """Seconds from ``start`` to ``end``, times of day (a run past midnight wraps)."""
    seconds = (end - start).total_seconds()
    return seconds + 86400 if seconds < 0 else seconds


def report(found: list[Statement], top: int, in_order: bool) -> str:
    total = sum(s.seconds for s in found)
    shown = found if in_order else sorted(found, key=lambda s: s.seconds, reverse=True)[:top]
    out = [f"{len(found)} statements, {total:.1f} s (seconds to the thread's next line; spark.sql's own)"]
    for s in shown:
        own = "" if s.status is None else f"{s.status:.2f}"
        node = s.node.rsplit(".", 1)[-1][:28]
        out.append(f"{s.seconds:8.2f} {own:>7}  line {s.line:<7} {node:28} {s.sql[:100]}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("log", help="a dbt.log (the bench project's: .spark/bench/logs/dbt.log)")
    parser.add_argument("--node", default="", help="only nodes whose id contains this text")
    parser.add_argument("--top", type=int, default=15, help="how many of the slowest (default 15)")
    parser.add_argument("--in-order", action="store_true", help="every statement, in log order")
    args = parser.parse_args(argv)
    with open(args.log, encoding="utf-8", errors="replace") as f:
        found = [s for s in statements(f) if args.node in s.node]
    print(report(found, args.top, args.in_order))
    return 0


if __name__ == "__main__":
    sys.exit(main())
