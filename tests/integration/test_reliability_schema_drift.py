"""Schema drift at scale: a source table that adds, drops and renames columns batch after batch.

Targets with `columns='*'` (SCD1 and SCD2) take their columns from the images. Over
SPARK_CDC_DRIFT_BATCHES batches (default 4: the initial load, then a drop, a rename and an add;
`make test-long` runs the issue's 20), each batch first changes the source's columns (add one, drop
one, or rename one: a drop plus an add, as Debezium shows it), then sends full-image inserts,
updates and deletes of random keys with the columns of that moment. No full refresh. After every
batch the SCD1 target must hold exactly the replayed state: every column ever seen, each row with
its latest image's values and null where that image lacked the column; and the SCD2 target's
current versions must be the same rows. In a lakehouse lane (SPARK_CDC_TABLE_FORMAT=delta|iceberg)
the targets are Delta or Iceberg tables: the new columns reach the MERGE's state table through that
format's own schema evolution (ALTER TABLE ADD COLUMNS).
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpora.debezium import plain_envelope
from tests.helpers.lakehouse import target_file_format
from tests.helpers.landing import DbtProject, land_messages
from tests.helpers.projects import side_project

pytestmark = pytest.mark.integration

BATCHES = int(os.environ.get("SPARK_CDC_DRIFT_BATCHES", "4"))
KEYS = 40
META = "_cdc_"


def model(schema: str, materialized: str) -> str:
    return (
        f"{{{{ config(materialized='{materialized}', unique_key='id', source_table='inventory.products', "
        f"cdc_format='debezium', columns='*', file_format='{target_file_format()}') }}}}\n"
        f"select * from `{schema}`.cdc_changes\n"
    )


class Source:
    """The source table: its columns (name -> kind) and rows, changed batch by batch."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        # Three columns, so the first drop still leaves two and the rename after it has a choice.
        self.columns: dict[str, str] = {"name": "text", "weight": "float", "stock": "int"}
        self.rows: dict[int, dict[str, Any]] = {}
        self.seen: list[str] = ["id", "name", "weight", "stock"]
        self.lsn = 40_000_000
        self.counter = 0

    def value(self, kind: str) -> Any:
        self.counter += 1
        return {"text": f"v{self.counter}", "int": self.counter, "float": self.counter + 0.25}[kind]

    def drift(self, batch: int) -> str:
        action = ("add", "drop", "rename")[batch % 3] if len(self.columns) > 1 else "add"
        if action == "add":
            name, kind = f"c{batch}_added", self.rng.choice(["text", "int", "float"])
            self.columns[name] = kind
        elif action == "drop":
            name = self.rng.choice(sorted(self.columns))
            del self.columns[name]
        else:
            old = self.rng.choice(sorted(self.columns))
            name = f"{old.split('_')[0]}_r{batch}"
            self.columns[name] = self.columns.pop(old)
        if action != "drop" and name not in self.seen:
            self.seen.append(name)
        return f"{action} {name}"

    def changes(self, n: int) -> list[str]:
        out = []
        for _ in range(n):
            self.lsn += 1000
            pid = self.rng.randrange(KEYS)
            if pid in self.rows and self.rng.random() < 0.15:
                old = self.rows.pop(pid)
                out.append(delete_envelope(self.lsn, old))
                continue
            op = "u" if pid in self.rows else "c"
            image = {"id": pid, **{c: self.value(k) for c, k in self.columns.items()}}
            self.rows[pid] = image
            out.append(plain_envelope(op, self.lsn, image))
        return out

    def expected(self) -> list[dict[str, Any]]:
        return sorted(({c: r.get(c) for c in self.seen} for r in self.rows.values()), key=lambda r: r["id"])


def delete_envelope(lsn: int, before: dict[str, Any]) -> str:
    doc = json.loads(plain_envelope("d", lsn, before))
    doc["before"], doc["after"] = before, None
    return json.dumps(doc)


def test_columns_added_dropped_and_renamed_over_many_batches(
    project: DbtProject,
    schema: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    record_property: Callable[[str, object], None],
) -> None:
    monkeypatch.setenv("SPARK_CDC_IT_FORMATS", "debezium")  # stage only Debezium
    side = side_project(
        project,
        tmp_path,
        {
            "drift.sql": model(schema, "cdc_scd1"),
            "drift_history.sql": model(schema, "cdc_scd2"),
        },
    )
    source = Source(random.Random(7))
    history = []
    for batch in range(BATCHES):
        history.append(source.drift(batch) if batch else "initial load")
        land_messages(project.spark, f"{schema}_raw", "debezium", source.changes(KEYS if batch == 0 else 25))
        project.dbt("run", "--select", "+cdc_changes")
        side.dbt("run", "--select", "drift", "drift_history")

        data_columns = [c for c in project.spark.table(f"`{schema}`.drift").columns if not c.startswith(META)]
        assert sorted(data_columns) == sorted(source.seen), (batch, history)
        got = project.rows(
            f"select {', '.join(f'`{c}`' for c in source.seen)} from `{schema}`.drift order by id"
        )
        assert got == source.expected(), (batch, history)
        current = project.rows(
            f"select {', '.join(f'`{c}`' for c in source.seen)} from `{schema}`.drift_history "
            "where _cdc_is_current and not _cdc_is_deleted order by id"
        )
        assert current == got, (batch, history)
    assert len(history) == BATCHES
    kinds = Counter(step.split()[0] for step in history[1:])
    if BATCHES >= 4:  # every kind of change happened (the short form: a drop, a rename, an add)
        assert kinds.keys() == {"add", "drop", "rename"}, history
    record_property(
        "reliability",
        f"schema drift: {BATCHES} batches (the initial load, then"
        f" {', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))}); {len(source.seen)} columns seen",
    )
