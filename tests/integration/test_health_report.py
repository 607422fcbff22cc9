"""The health report (`python -m dbt_spark_cdc.report`) on a real build, rendered by headless Chromium.

The Debezium demo corpus plus one broken message, and an Aurora DSQL chunked record whose fragments
never arrive, are built into the integration project's targets; the report command runs dbt's
run-operation in this process and writes the page; Chromium renders it (its DOM gives the text a
reader sees, a screenshot the picture). CI installs Debian's chromium (.ci/run); elsewhere the test
is skipped when there is none, unless SPARK_CDC_REQUIRE_CHROMIUM=1.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from dbt_spark_cdc.aurora_dsql import chunk_record, dumps
from dbt_spark_cdc.report import main

from tests.helpers.corpora.aurora_dsql import TS_NS, big_order
from tests.helpers.landing import DbtProject, land_messages, read_jsonl_messages

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "integration_tests" / "data" / "debezium_postgres" / "flink"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("SPARK_CDC_REQUIRE_CHROMIUM") == "1":
            pytest.fail("chromium is not installed (Debian: apt-get install chromium; .ci/run does it)")
        pytest.skip("chromium is not installed (apt-get install chromium); CI requires it")
    return found


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.parts.append(" ".join(data.split()))


def rendered_text(browser: str, page: Path, profile: Path) -> str:
    dom = subprocess.run(
        [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    parser = Text()
    parser.feed(dom)
    return " | ".join(parser.parts)


def screenshot(browser: str, page: Path, png: Path, profile: Path) -> None:
    subprocess.run(
        [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--window-size=1280,1500",
            f"--screenshot={png}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )


def summary_lines(output: str) -> list[str]:
    """The run summary's rows (after its title and column headings) in dbt's console output,
    whitespace collapsed."""
    messages = [
        re.sub(r"^\d\d:\d\d:\d\d  ", "", re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in output.splitlines()
    ]
    start = next(i for i, m in enumerate(messages) if m.startswith("spark_cdc run summary"))
    rows = []
    for message in messages[start + 2 :]:
        if not message.startswith("  ") or not message.strip():
            break
        rows.append(" ".join(message.split()))
    return rows


def test_report_of_a_real_build_renders_in_chromium(
    project: DbtProject,
    schema: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    browser = chromium()
    monkeypatch.setenv("SPARK_CDC_IT_FORMATS", "debezium aurora_dsql")
    # Two staging runs (two points on the lag chart): the snapshot and three changes, then four
    # more, one broken message and a DSQL chunked record whose fragments never come.
    corpus = read_jsonl_messages(str(CORPUS / "debezium-postgres-data-schema-include.txt"))
    main_record, _fragments = chunk_record(big_order(TS_NS, 2, "waits for its fragments"), {"after": "c-1"})
    batches = [
        {"debezium": corpus[:12]},
        {"debezium": [*corpus[12:], "{not json"], "aurora_dsql": dumps([main_record])},
    ]
    summaries = []
    for batch in batches:
        for fmt, messages in batch.items():
            land_messages(project.spark, f"{schema}_raw", fmt, messages)
        capfd.readouterr()
        project.dbt(
            "build",
            "--select",
            "+products",
            "+products_history",
            "+orders",  # a DSQL target whose source table never changes
            "+stg_cdc__aurora_dsql_pending_chunks",
            "+cdc_lag",
            "+cdc_quarantine",
        )
        summaries.append(summary_lines(capfd.readouterr().out))
    # The run summary: a line per target that applied changes, a line per source table with
    # quarantined or pending records and no such target; the idle `orders` gets none.
    first, second = summaries
    assert sorted(line.split()[:4] for line in first) == [
        ["products", "scd1", "12", "10"],
        ["products_history", "scd2", "12", "12"],
    ], first
    assert sorted(line.split()[:4] for line in second if not line.startswith("(")) == [
        ["products", "scd1", "4", "10"],
        ["products_history", "scd2", "4", "16"],
    ], second
    assert sorted(line for line in second if line.startswith("(")) == [
        "(public.order_items) - - - - 1 -",
        "(unknown table) - - - malformed_json=1 - -",
    ], second

    page = tmp_path / "cdc_report.html"
    argv = ["--project-dir", project.project_dir, "--profiles-dir", project.profiles_dir, "--out", str(page)]
    assert main(argv) == 0

    text = rendered_text(browser, page, tmp_path / "chromium")
    for expected in (
        "spark_cdc health · spark_cdc_integration_tests",
        "inventory.products | debezium · processing lag · 2 runs · 16 changes",
        "malformed_json",
        "products_history | inventory.products · 16 versions",
        "public.order_items",  # the chunk waiting for fragments
    ):
        assert expected in text, (expected, text)
    # The cards: 3 targets, 1 quarantined record, 1 chunk waiting.
    assert "3 | targets | 1 | quarantined (14 d) | 1 | chunks waiting" in text, text
    # The targets table: products ends with 10 rows and a tombstone; its last batch had 4 changes.
    assert "products | scd1 | inventory.products | 10 | 1 | 4" in text, text

    png = tmp_path / "cdc_report.png"
    screenshot(browser, page, png, tmp_path / "chromium")
    from PIL import Image

    with Image.open(png) as image:
        assert image.size == (1280, 1500)
        colors = image.convert("RGB").getcolors(maxcolors=1 << 16) or []
    # Not a blank or error page: the header's dark blue, the p50 line's blue and the red of the
    # max line, the alerts and the quarantine bar are all painted.
    painted = {rgb for _, rgb in colors}
    for rgb in ((15, 23, 42), (37, 99, 235), (220, 38, 38)):
        assert rgb in painted, rgb
    if os.environ.get("SPARK_CDC_REPORT_SCREENSHOT"):
        shutil.copy(png, os.environ["SPARK_CDC_REPORT_SCREENSHOT"])
