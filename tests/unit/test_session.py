"""session.py without a JVM: worker-interpreter setup and the session submission helper."""

import os
import sys
import types

import pytest
from dbt_spark_cdc import session


def test_sets_pyspark_python_when_unset(monkeypatch):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    session.ensure_python_workers_env()
    assert os.environ["PYSPARK_PYTHON"] == sys.executable


def test_keeps_users_pyspark_python(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/custom/bin/python3")
    session.ensure_python_workers_env()
    assert os.environ["PYSPARK_PYTHON"] == "/opt/custom/bin/python3"


@pytest.mark.parametrize(
    ("parsed_model", "expected"),
    [
        ({"alias": "orders_v2", "name": "orders"}, "orders_v2"),
        ({"alias": None, "name": "orders"}, "orders"),
        ({}, "python_model"),
    ],
)
def test_model_name(parsed_model, expected):
    assert session.SessionPythonJobHelper(parsed_model, credentials=None)._model_name == expected


class _FakeSpark:
    def __init__(self, params):
        self.params = params
        self.prepared = False
        self.seen = []


@pytest.fixture
def fake_session(monkeypatch):
    created = []

    def get_session(params=None):
        spark = _FakeSpark(params)
        created.append(spark)
        return spark

    def prepare_session(spark, params=None):
        spark.prepared = True
        return spark

    monkeypatch.setattr(session, "get_session", get_session)
    monkeypatch.setattr(session, "prepare_session", prepare_session)
    return created


def test_submit_runs_code_with_prepared_spark(fake_session):
    credentials = types.SimpleNamespace(server_side_parameters={"spark.master": "local[1]"})
    helper = session.SessionPythonJobHelper({"name": "orders"}, credentials)
    helper.submit("spark.seen.append((__name__, spark.prepared, spark.params))")
    [spark] = fake_session
    assert spark.seen == [("dbt_model_orders", True, {"spark.master": "local[1]"})]


def test_submit_without_server_side_parameters(fake_session):
    session.SessionPythonJobHelper({"name": "m"}, credentials=object()).submit("pass")
    assert fake_session[0].params == {}


def test_submit_errors_point_at_the_model(fake_session):
    helper = session.SessionPythonJobHelper({"name": "orders"}, credentials=None)
    with pytest.raises(ZeroDivisionError) as excinfo:
        helper.submit("x = 1\ny = x / 0\n")
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_code.co_filename == "<dbt python model orders>"
    assert tb.tb_lineno == 2


def test_submit_runs_the_model_again_once_a_killed_runs_directory_is_cleared(fake_session, monkeypatch):
    from dbt_spark_cdc import abandoned_writes

    cleared = []

    def retry_after_clearing(spark, exc):
        cleared.append(str(exc))
        return str(exc) == "location taken"

    monkeypatch.setattr(abandoned_writes, "retry_after_clearing", retry_after_clearing)
    helper = session.SessionPythonJobHelper({"name": "orders"}, credentials=None)
    code = "spark.seen.append(1)\nif len(spark.seen) == 1:\n    raise RuntimeError('location taken')\n"
    helper.submit(code)
    assert fake_session[0].seen == [1, 1]  # refused, cleared, run again
    assert cleared == ["location taken"]
    with pytest.raises(RuntimeError, match="other"):  # any other error is raised as it is
        helper.submit("raise RuntimeError('other')")
    assert cleared == ["location taken", "other"]


class _FakeConf:
    def __init__(self):
        self.values = {}

    def set(self, key, value):
        self.values[key] = value


def test_prepare_session_applies_defaults_once_unless_the_profile_sets_them(monkeypatch):
    import dbt_spark_cdc.udfs

    registered = []
    monkeypatch.setattr(dbt_spark_cdc.udfs, "register_udfs", lambda spark: registered.append(spark))
    key = "spark.sql.parquet.outputTimestampType"
    huge = "spark.sql.codegen.hugeMethodLimit"

    spark = types.SimpleNamespace(conf=_FakeConf())
    assert session.prepare_session(spark, {"spark.master": "local[2]"}) is spark
    assert spark.conf.values == {key: "TIMESTAMP_MICROS", huge: "8000"}
    spark.conf.values[key] = "INT96"  # changed by the user after the first statement: kept
    session.prepare_session(spark, {})
    assert spark.conf.values == {key: "INT96", huge: "8000"} and len(registered) == 2

    chosen = types.SimpleNamespace(conf=_FakeConf())
    session.prepare_session(chosen, {key: "INT96"})
    assert chosen.conf.values == {huge: "8000"}
