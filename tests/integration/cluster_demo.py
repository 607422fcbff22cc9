"""The demo's build on the standalone cluster, run by test_reliability_cluster.py as the first test of
its pytest session on the cluster (the conformance tests follow in the same session, so one driver
and one set of executors serve both). Not collected on its own (no ``test_`` prefix).

It lands the demo's Debezium corpus, builds DEMO_BUILD narrowed to Debezium, and writes every table
and view of the schema (hidden ``__cdc_`` tables aside) and the build's time to
SPARK_CDC_CLUSTER_DEMO_DUMP, for the calling test to compare with its local build.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.helpers.demo import build_demo
from tests.helpers.landing import DbtProject

pytestmark = pytest.mark.integration


def test_demo_build(project: DbtProject, schema: str, monkeypatch: pytest.MonkeyPatch) -> None:
    dump = Path(os.environ["SPARK_CDC_CLUSTER_DEMO_DUMP"])
    started = time.monotonic()
    tables = build_demo(project, schema, monkeypatch)
    dump.write_text(json.dumps({"seconds": time.monotonic() - started, "tables": tables}))
