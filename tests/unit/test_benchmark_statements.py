"""benchmarks/statements.py: a statement's time runs to the next line its thread logs after its
status, so a SELECT's fetch (after dbt's "SQL status") is counted and lines logged while it runs
are not taken for its end."""

from __future__ import annotations

from benchmarks.statements import report, statements

ESC = "\x1b[0m"
LOG = f"""{ESC}10:00:00.000000 [debug] [Thread-1 (]: Began executing node model.p.target
{ESC}10:00:00.100000 [debug] [Thread-1 (]: On model.p.target: /* {{"app": "dbt"}} */
select count(_op)
from batch
{ESC}10:00:00.150000 [debug] [Thread-1 (]: Opening a new connection, currently in state closed
{ESC}10:00:00.300000 [debug] [Thread-1 (]: SQL status: OK in 0.200 seconds
{ESC}10:00:00.300000 [debug] [Thread-2 (]: On model.p.other: /* {{"app": "dbt"}} */
select 1
{ESC}10:00:01.000000 [debug] [Thread-2 (]: SQL status: OK in 0.700 seconds
{ESC}10:00:05.300000 [debug] [Thread-1 (]: On model.p.target: /* {{"app": "dbt"}} */
create table t as select * from batch
{ESC}10:00:07.000000 [debug] [Thread-1 (]: Opening a new connection, currently in state closed
{ESC}10:00:15.300000 [debug] [Thread-1 (]: SQL status: OK in 10.000 seconds
{ESC}10:00:15.400000 [debug] [Thread-2 (]: Finished running node model.p.other
{ESC}10:00:15.500000 [debug] [Thread-1 (]: Finished running node model.p.target
"""


def test_statement_time_counts_the_fetch_and_skips_lines_logged_while_it_runs() -> None:
    found = statements(LOG.splitlines(keepends=True))
    assert [(s.node, s.sql, s.status, round(s.seconds, 3)) for s in found] == [
        ("model.p.target", "select count(_op) from batch", 0.2, 5.2),  # planned 0.2 s, fetched until 5.3
        ("model.p.other", "select 1", 0.7, 15.1),
        ("model.p.target", "create table t as select * from batch", 10.0, 10.2),
    ]


def test_report_lists_the_slowest_first_or_in_log_order() -> None:
    found = [s for s in statements(LOG.splitlines()) if "target" in s.node]
    slowest = report(found, top=1, in_order=False).splitlines()
    assert slowest[0].startswith("2 statements, 15.4 s")
    assert len(slowest) == 2 and "create table t" in slowest[1]
    ordered = report(found, top=1, in_order=True).splitlines()
    assert ["select count" in ordered[1], "create table" in ordered[2]] == [True, True]
