"""Message content is data: each class of hostile input an attacker who controls a source row (or a
broken connector) can send, and what becomes of it. One throwaway project over a Debezium landing
table, with targets that meet the values where they reach SQL text, identifiers, partition
directories and typed columns. Every case ends stored faithfully or quarantined with its reason, and
the run goes on (the completeness ledger accounts for every raw record).

Other formats' sequence checks: the format modules (bad records) and the fuzzer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.landing import FORMATS, DbtProject, RawMessage, fresh_landing, land_messages

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "it_hostile"
TABLE = "shop.items"
U64 = 2**64 - 1

MODELS = {
    # A partitioned target: partition values are read back and written into SQL (partition specs).
    "parts": "materialized='cdc_scd1', partition_by='name'",
    # Columns from the images: JSON keys become identifiers.
    "star": "materialized='cdc_scd1', columns='*'",
    # Typed columns: values that do not fit are quarantined, naming the column.
    "typed": "materialized='cdc_scd1'",
}
TYPED = [("id", "int"), ("name", "string"), ("qty", "bigint"), ("price", "double")]


def envelope(op: str, lsn: Any, after: dict[str, Any] | None, before: dict[str, Any] | None = None) -> str:
    return json.dumps(
        {
            "before": before,
            "after": after,
            "source": {"schema": "shop", "table": "items", "lsn": lsn, "ts_ms": 1_700_000_000_000},
            "op": op,
        }
    )


def row(key: int, name: Any = "n", qty: Any = 1, price: Any = 1.5) -> dict[str, Any]:
    return {"id": key, "name": name, "qty": qty, "price": price}


@pytest.fixture(scope="module")
def side(project: DbtProject, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DbtProject]:
    path = tmp_path_factory.mktemp("hostile")
    (path / "models").mkdir()
    (path / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    formats = ", ".join(
        f"{f}: {{enabled: {str(f == 'debezium').lower()}, relation: {SCHEMA}_raw.{f}}}" for f in FORMATS
    )
    (path / "dbt_project.yml").write_text(
        "name: spark_cdc_hostile_it\nversion: '0.1.0'\nconfig-version: 2\n"
        "profile: spark_cdc_integration_tests\n"
        f"vars: {{spark_cdc: {{max_inferred_columns: 40, formats: {{{formats}}},"
        f" tables: {{'{TABLE}': {{primary_key: [id]}}}}}}}}\n"
    )
    yml = ["version: 2", "models:"]
    for name, settings in MODELS.items():
        (path / "models" / f"{name}.sql").write_text(
            f"{{{{ config({settings}, source_table='{TABLE}') }}}}\n"
            "select * from {{ ref('cdc_changes') }}\n"
        )
        columns = (
            "" if name == "star" else "".join(f"\n      - {{name: {c}, data_type: {t}}}" for c, t in TYPED)
        )
        yml.append(f"  - name: {name}\n    columns:{columns or ' []'}")
    (path / "models" / "models.yml").write_text("\n".join(yml) + "\n")
    side = DbtProject(str(path), profiles_dir=project.profiles_dir)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SPARK_CDC_SCHEMA", SCHEMA)
        side.dbt("deps", "--quiet")
        yield side


@pytest.fixture
def fresh(project: DbtProject, side: DbtProject, monkeypatch: pytest.MonkeyPatch) -> DbtProject:
    monkeypatch.setenv("SPARK_CDC_SCHEMA", SCHEMA)
    monkeypatch.setenv("HOSTILE_SECRET", "the-environment-variable")
    fresh_landing(project.spark, SCHEMA)
    return side


def land(project: DbtProject, messages: list[str | RawMessage | None]) -> None:
    land_messages(project.spark, f"{SCHEMA}_raw", "debezium", messages)


def build(side: DbtProject, *select: str, expect_success: bool = True) -> Any:
    return side.dbt(
        "build",
        "--select",
        *(select or ("+parts", "+typed", "cdc_quarantine")),
        expect_success=expect_success,
    )


def quarantine(project: DbtProject) -> Counter[str]:
    return Counter(
        r["reason_code"] for r in project.rows(f"select reason_code from `{SCHEMA}`.cdc_quarantine")
    )


def test_values_with_spark_variable_syntax_stay_values(project: DbtProject, fresh: DbtProject) -> None:
    """`${...}` in a value read back into SQL (a partition value) and in a JSON key that becomes a
    column: Spark substituted them (a row was lost; a column was named after an environment
    variable's value). Each is kept as written."""
    names = ["${env:HOSTILE_SECRET}", "${spark.sql.shuffle.partitions}", "a'b\\c`d", "plain"]
    land(project, [envelope("c", 10 + i, row(i, name)) for i, name in enumerate(names)])
    land(project, [envelope("c", 20, {"id": 9, "${env:HOSTILE_SECRET}": "x", "back`tick": "y", "name": "z"})])
    build(fresh, "+parts", "+star", "cdc_quarantine")
    parts = project.rows(f"select id, name from `{SCHEMA}`.parts order by id")
    assert [(r["id"], r["name"]) for r in parts] == [*enumerate(names), (9, "z")]
    star = project.rows(f"select * from `{SCHEMA}`.star where id = 9")[0]
    assert star["${env:HOSTILE_SECRET}"] == "x" and star["back`tick"] == "y"
    assert "the-environment-variable" not in json.dumps(star, default=str)
    assert quarantine(project) == Counter()


def test_partition_values_are_stored_faithfully_or_quarantined(
    project: DbtProject, fresh: DbtProject
) -> None:
    """A long value, U+0000, and null, '' and Hive's default-partition name in one batch failed the
    build; '' silently became null. Null is stored (and read back) as null; the others are
    quarantined unstorable_partition_value; the rest of the batch applies."""
    values = [None, "", "__HIVE_DEFAULT_PARTITION__", "a\u0000b", "x" * 300, "ok", "spare tire/é%=+"]
    land(project, [envelope("c", 10 + i, row(i, v)) for i, v in enumerate(values)])
    build(fresh)
    stored = project.rows(f"select id, name from `{SCHEMA}`.parts order by id")
    assert [(r["id"], r["name"]) for r in stored] == [(0, None), (5, "ok"), (6, "spare tire/é%=+")]
    assert quarantine(project) == Counter({"unstorable_partition_value": 4})
    details = project.rows(f"select reason_detail from `{SCHEMA}`.cdc_quarantine")
    assert all("model parts: column name (string)" in r["reason_detail"] for r in details)
    # The unpartitioned target of the same changes stores every value.
    typed = project.rows(f"select id, name from `{SCHEMA}`.typed order by id")
    assert [(r["id"], r["name"]) for r in typed] == list(enumerate(values))


# Each invalid source.lsn, on a key of its own (keys are applied independently): one build for all.
INVALID_LSNS = {
    "over_u64": U64 + 1,
    "negative": -5,
    "fraction": 12.5,
    "fraction_text": "12.5",
    "text": "not-a-number",
    "exponent": "1e3",
}


def test_an_invalid_lsn_is_quarantined_and_never_freezes_the_key(
    project: DbtProject, fresh: DbtProject
) -> None:
    """A source.lsn beyond its type's range was accepted and froze the key (later, legitimate updates
    were ignored); a non-numeric or fractional one fell back to the landing order, so the change
    was dropped as stale. Key k carries the k-th of INVALID_LSNS."""
    keys = dict(enumerate(INVALID_LSNS, start=1))
    land(
        project,
        [
            m
            for k, name in keys.items()
            for m in (
                envelope("c", 10, row(k, "first")),
                envelope("u", INVALID_LSNS[name], row(k, "hostile")),
            )
        ],
    )
    land(project, [envelope("u", 30, row(k, "later")) for k in keys])
    build(fresh, "+typed", "cdc_quarantine")
    stored = {r["id"]: r["name"] for r in project.rows(f"select id, name from `{SCHEMA}`.typed")}
    assert {keys[k]: stored.get(k) for k in keys} == dict.fromkeys(INVALID_LSNS, "later")
    quarantined = project.rows(f"select reason_code, raw_value from `{SCHEMA}`.cdc_quarantine")
    assert sorted((r["reason_code"], json.loads(r["raw_value"])["after"]["id"]) for r in quarantined) == [
        ("invalid_sequence", k) for k in keys
    ]


def test_image_values_that_do_not_fit_are_quarantined_naming_the_column(
    project: DbtProject, fresh: DbtProject
) -> None:
    """A duplicate name in an image nulled every other column; a number beyond what the column's type
    holds lost its digits or became a null key; a value of the wrong type became null."""
    messages = [
        # The same name twice: which value it means is undefined (Spark's readers disagree), so the
        # message is quarantined, invalid_envelope; it no longer nulls the row's other columns.
        '{"after": {"id": 1, "name": "first", "name": "second", "qty": 7, "price": 2.5}, "op": "c",'
        ' "source": {"schema": "shop", "table": "items", "lsn": 10}}',
        envelope("c", 11, row(2, price="not a number")),
        envelope("c", 12, row(3, qty=123456789012345678901234567890)),
        '{"after": {"id": 99999999999999999999999, "name": "n", "qty": 1, "price": 1}, "op": "c",'
        ' "source": {"schema": "shop", "table": "items", "lsn": 14}}',
        envelope("c", 15, row(6)),
    ]
    land(project, messages)
    build(fresh, "+typed", "cdc_quarantine")
    rows = project.rows(f"select id, name, qty, price from `{SCHEMA}`.typed order by id")
    assert rows == [{"id": 6, "name": "n", "qty": 1, "price": 1.5}]
    reasons = project.rows(
        f"select reason_code, reason_detail from `{SCHEMA}`.cdc_quarantine order by reason_detail"
    )
    assert Counter(r["reason_code"] for r in reasons) == Counter(
        {"invalid_envelope": 1, "type_mismatch": 2, "unrepresentable_key": 1}
    )
    details = " | ".join(r["reason_detail"] for r in reasons)
    for part in ("column price (double)", "column qty (bigint)", "column id (int)"):
        assert part in details, details


def test_columns_differing_only_in_case_and_too_many_columns_fail_clearly(
    project: DbtProject, fresh: DbtProject
) -> None:
    land(project, [envelope("c", 10, {"id": 1, "Name": "a", "name": "b"})])
    result = build(fresh, "+star", expect_success=False)
    message = " ".join(str(r.message) for r in result.result.results if r.node.name == "star")
    assert "'Name' and 'name'" in message or "Name and name" in message, message
    assert "differ only in case" in message and "Fix:" in message
    wide = {"id": 2, **{f"c{i:03d}": i for i in range(60)}}
    fresh_landing(project.spark, SCHEMA)
    land(project, [envelope("c", 11, wide)])
    result = build(fresh, "+star", expect_success=False)
    message = " ".join(str(r.message) for r in result.result.results if r.node.name == "star")
    assert "max_inferred_columns (40)" in message and "Fix:" in message, message


# Two JSON values in one message value (the second after a comma, a bracket or a space).
TWO_VALUES = [
    '{"op": "c"},"#spark_cdc_end"',
    '{"op": "c", "after": {"id": 1}}] [1',
    '{"op": "c"}, {"op": "d"}',
    '{"op": "c"} {"op": "d"}',
    '1,"END"] [0',
]


def test_two_json_values_in_one_message_are_malformed(project: DbtProject, fresh: DbtProject) -> None:
    """Each of TWO_VALUES is quarantined malformed_json (an envelope, with the detail that says why);
    the good message beside them applies. One build for all of them."""
    land(project, [*TWO_VALUES, envelope("c", 10, row(1))])
    build(fresh, "+typed", "cdc_quarantine")
    rows = project.rows(f"select reason_code, reason_detail, raw_value from `{SCHEMA}`.cdc_quarantine")
    # The quarantined value is the message's, after a note of what was wrong with it.
    values = {r["raw_value"].removeprefix("#spark_cdc: text after the first JSON value: "): r for r in rows}
    assert sorted(values) == sorted(TWO_VALUES)
    for value, r in values.items():
        assert r["reason_code"] == "malformed_json", r
        if value.startswith("{"):  # (a bare number is no envelope in the first place)
            assert (
                r["reason_detail"] == "more text after the first JSON value (two messages in one value?)"
            ), r
    assert project.rows(f"select id from `{SCHEMA}`.typed") == [{"id": 1}]


LARGE_RUN = """
import json, os, sys
from tests.helpers.landing import DbtProject, land_messages

path, profiles = sys.argv[1], sys.argv[2]
count, size, over_count, over_size = (int(a) for a in sys.argv[3:7])
side = DbtProject(path, profiles_dir=profiles)
side.dbt("deps", "--quiet")
spark = side.spark
for fmt in ("debezium", "aurora_dsql", "qlik_replicate", "ydb", "cockroachdb"):
    land_messages(spark, "it_large_raw", fmt, [])
def message(i, n):
    after = {"id": i, "name": "x" * n, "qty": i, "price": 1.5}
    source = {"schema": "shop", "table": "items", "lsn": 100 + i, "ts_ms": 1700000000000}
    return json.dumps({"before": None, "after": after, "source": source, "op": "c"})
sizes = [size] * count + [over_size] * over_count
for i, n in enumerate(sizes):  # one message per landing call: the driver never holds the whole batch
    land_messages(spark, "it_large_raw", "debezium", [message(i, n)])
side.dbt("build", "--select", "+typed", "cdc_quarantine", "cdc_reason_codes")
rows = spark.sql("select id, length(name) as n from it_large.typed order by id").collect()
quarantined = spark.sql(
    "select reason_code, length(raw_value) as n from it_large.cdc_quarantine order by raw_ref.order"
).collect()
memory = spark.sparkContext.getConf().get("spark.driver.memory")
facts = {"rows": [[r.id, r.n] for r in rows], "quarantined": [[r.reason_code, r.n] for r in quarantined]}
print(json.dumps({**facts, "memory": memory}))
"""


def test_a_batch_of_large_messages_fits_the_default_driver_memory(
    project: DbtProject, side: DbtProject, tmp_path: Path
) -> None:
    """Ten messages just under the default max_payload_bytes (4 MiB) and two of 15 MB in one batch,
    on a 1 GiB driver with two cores (its own JVM and metastore): the ten are applied, the two are
    quarantined as payload_too_large keeping only their first 65536 characters, and the run
    succeeds. (With a 16 MiB bound, ten 15 MB messages ran this driver out of memory, so nothing
    was staged.)"""
    env = dict(os.environ)
    env.update(
        SPARK_CDC_HOME=str(tmp_path / "home"),
        SPARK_CDC_DRIVER_MEMORY="1g",
        SPARK_CDC_MASTER="local[2]",
        SPARK_CDC_SCHEMA="it_large",
        DBT_TARGET_PATH=str(tmp_path / "target"),
        # LARGE_RUN imports the test helpers (tests/helpers) from the repository root.
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    )
    project_dir = tmp_path / "project"
    copy_project(Path(side.project_dir), project_dir)
    # The envelope around the name adds about 150 bytes: each message stays under 4 MiB (4194304).
    count, size, over_count, over_size = 10, 4_190_000, 2, 15_000_000
    proc = subprocess.run(
        [sys.executable, "-c", LARGE_RUN, str(project_dir), side.profiles_dir]
        + [str(n) for n in (count, size, over_count, over_size)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    facts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert facts == {
        "rows": [[i, size] for i in range(count)],
        "quarantined": [["payload_too_large", 65536]] * over_count,
        "memory": "1g",
    }


def copy_project(source: Path, destination: Path) -> None:
    """The side project's files (not its dbt_packages or target), with its landing schema renamed."""
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns("dbt_packages", "target", "logs"))
    config = destination / "dbt_project.yml"
    config.write_text(config.read_text().replace(f"{SCHEMA}_raw", "it_large_raw"))
