"""The health report page, rendered from the macro's data without Spark."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from dbt_spark_cdc.report import format_ms, main, render

HOSTILE = '<script>alert("x")</script>'


def data() -> dict:
    runs = [f"2026-11-2{d} 10:00:00" for d in range(4)]
    return {
        "days": 7,
        "runs": 30,
        "project": "shop",
        "target": "prod",
        "generated_at": "2026-11-24 12:00:00 UTC",
        "lag": [
            {
                "source_table": "inventory.products",
                "cdc_format": "debezium",
                "run": run,
                "changes": "10",
                "processing_p50": str(100 * (i + 1)),
                "processing_max": str(2000 * (i + 1)),
                "landing_p50": None,
                "landing_max": None,
                "load_p50": "5000",
                "load_max": "9000",
            }
            for i, run in enumerate(runs)
        ]
        + [
            {
                "source_table": HOSTILE,
                "cdc_format": "qlik_replicate",
                "run": runs[0],
                "changes": "3",
                "processing_p50": None,
                "processing_max": None,
                "landing_p50": None,
                "landing_max": None,
                "load_p50": "86400000",
                "load_max": "172800000",
            }
        ],
        "quarantine": [
            {
                "day": "2026-11-22",
                "cdc_format": "debezium",
                "source_table": "",
                "reason_code": "malformed_json",
                "records": "2",
            },
            {
                "day": "2026-11-24",
                "cdc_format": "debezium",
                "source_table": "inventory.products",
                "reason_code": "missing_key",
                "records": "5",
            },
        ],
        "pending": [
            {"source_table": "", "chunks": "1", "oldest_at": "2026-11-24 11:00:00", "fragments": "2"}
        ],
        "targets": [
            {
                "name": "products",
                "relation": "s.products",
                "kind": "scd1",
                "source_table": "inventory.products",
                "rows": "10",
                "versions": "",
                "tombstones": "1",
                "last_batch_changes": "16",
                "consumed_through": "2026-11-24 10:00:00",
            },
            {
                "name": "products_history",
                "relation": "s.products_history",
                "kind": "scd2",
                "source_table": "inventory.products",
                "rows": "",
                "versions": "16",
                "tombstones": "",
                "last_batch_changes": "16",
                "consumed_through": "2026-11-24 10:00:00",
            },
        ],
        "scd2_days": [
            {"target": "products_history", "day": "2026-11-23", "versions": "12"},
            {"target": "products_history", "day": None, "versions": "4"},
        ],
    }


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.text.append(data.strip())


def parsed(page: str) -> Text:
    parser = Text()
    parser.feed(page)
    return parser


def test_page_shows_every_section_with_its_numbers() -> None:
    page = parsed(render(data()))
    text = " ".join(page.text)
    for expected in (
        "spark_cdc health · shop",
        "Lag per source table",
        "processing lag · 4 runs · 40 changes · latest max 8.0 s",
        "load lag · 1 runs",
        "malformed_json",
        "missing_key",
        "(unknown table)",
        "products_history",
        "16 versions · 4 without a commit time",
        "(main record not arrived)",
        "1.0 h",  # the pending chunk has waited an hour
    ):
        assert expected in text, expected
    # cards: 2 targets, 7 quarantined, 1 chunk waiting, worst latest processing lag
    assert "7" in page.text and "8.0 s" in page.text
    assert page.tags.count("svg") == 4  # two lag charts, the quarantine bars, one SCD2 chart
    assert "script" not in page.tags


def test_message_content_is_escaped_not_markup() -> None:
    page = render(data())
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


def test_empty_project_renders_with_explanations() -> None:
    empty = {**data(), "lag": [], "quarantine": [], "pending": [], "targets": [], "scd2_days": []}
    text = " ".join(parsed(render(empty)).text)
    assert "No staging runs with changes yet" in text
    assert "None in this window." in text
    assert "No cdc_scd2 target has been built." in text
    assert "No Aurora DSQL chunk is waiting for fragments." in text


def test_self_contained() -> None:
    page = render(data())
    for reference in ("http://", "https://", "<link", "<script", "@import", "url("):
        assert reference not in page.replace('xmlns="http://www.w3.org/2000/svg"', ""), reference


def test_durations_read_naturally() -> None:
    assert [format_ms(v) for v in (None, 0, 999, 1500, 90_000, 7_200_000, 172_800_000, -250)] == [
        "\u2013",
        "0 ms",
        "999 ms",
        "1.5 s",
        "1.5 min",
        "2.0 h",
        "2.0 d",
        "-250 ms",
    ]


def test_command_renders_saved_data(tmp_path: Path) -> None:
    source = tmp_path / "data.json"
    source.write_text(json.dumps(data()))
    out = tmp_path / "report.html"
    assert main(["--data", str(source), "--out", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
