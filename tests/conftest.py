"""Suite-wide: run the longest integration modules first.

`make test` spreads whole modules over two processes (pytest-xdist, --dist loadfile), handing them
out in collection order (--no-loadscope-reorder: by default xdist puts the modules with the most
tests first, which started the one-test reliability modules last; seen 2026-11-25). Collected
alphabetically, the longest modules (the reliability tests) came last, so one process ran on alone
for minutes after the other had finished. Longest first is the classic greedy schedule for two
machines. The order below is by measured time on 2 cores (`--durations`, 2026-12-02), longest
first; modules not listed follow in collection order. Before all of them: cluster_demo, collected
only in the pytest session test_reliability_cluster.py starts on the cluster, which builds the demo
first and then runs the conformance modules (it once came 32nd of 34, after them).

And: the reliability tests say what they ran (kill points fired, hostile messages, cluster size,
drift batches) in a section of the run's summary, from a ``reliability`` user property each records
(pytest-xdist carries user properties from its workers to the summary).

And: the shared helpers (tests/helpers, which test modules import instead of each other) get pytest's
assertion rewriting, as test modules do, so a failing assert there reports the values it compared.
"""

from __future__ import annotations

import pytest
from _pytest.terminal import TerminalReporter

# Before any test module (or tests/integration/conftest.py) imports a helper.
pytest.register_assert_rewrite("tests.helpers")

FIRST = ("cluster_demo",)
LONGEST_FIRST = (
    "test_reliability_crash",
    "test_apply_reference_formats",
    "test_reliability_cluster",
    "test_cockroachdb",
    "test_benchmark_workloads",
    "test_aurora_dsql",
    "test_qlik_replicate",
    "test_sql_lint",
    "test_debezium_foundation",
    "test_debezium_apply_rules",
    "test_examples",
    "test_ydb",
    "test_debezium_scd2",
    "test_reliability_fuzz",
    "test_kafka_landing",
    "test_hostile_input",
    "test_debezium_storage",
    "test_debezium_apply_options",
    "test_reliability_schema_drift",
    "test_codegen",
    "test_contracts_freshness",
    "test_config_errors",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(FIRST + LONGEST_FIRST)}
    order = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda item: (rank.get(item.path.stem, len(rank)), order[id(item)]))


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    lines = sorted(
        str(value)
        for key in ("passed", "failed")
        for report in terminalreporter.stats.get(key, [])
        if getattr(report, "when", None) == "call"
        for name, value in getattr(report, "user_properties", [])
        if name == "reliability"
    )
    if lines:
        terminalreporter.section("what the reliability tests ran")
        for line in lines:
            terminalreporter.write_line(line)
