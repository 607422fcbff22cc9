"""The landing helpers (tests/helpers/landing.py) that need no Spark: JSON-lines reading, identifier
quoting, dbt result checks."""

import types

import pytest

from tests.helpers.landing import DbtProject, qualified, read_jsonl_messages


def test_read_jsonl_skips_blank_lines_and_keeps_content(tmp_path):
    path = tmp_path / "messages.jsonl"
    path.write_bytes(
        b'{"a": 1}\n'
        b"\n"
        b"   \t \n"
        b'  {"b": "x\\ty"}  \n'
        b'{"c": "caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x9a\x80"}\n'
        b'{"d": "lone\rcarriage return"}\n'
        b'{"e": "crlf-terminated"}\r\n'
        b"\n"
        b'{"f": "no final newline"}'
    )
    assert read_jsonl_messages(str(path)) == [
        '{"a": 1}',
        '  {"b": "x\\ty"}  ',
        '{"c": "café \u2028 🚀"}',
        '{"d": "lone\rcarriage return"}',
        '{"e": "crlf-terminated"}',
        '{"f": "no final newline"}',
    ]


def test_read_jsonl_is_byte_exact_for_lf_files(tmp_path):
    lines = ['{"k": "\u00e9\u0301"}', '{"k": "\\u0000 \\n"}', '  {"k": "\u2029"}  ', "not json at all"]
    path = tmp_path / "exact.jsonl"
    payload = ("\n".join(lines) + "\n").encode("utf-8")
    path.write_bytes(payload)
    messages = read_jsonl_messages(str(path))
    assert messages == lines
    assert ("\n".join(messages) + "\n").encode("utf-8") == payload


def test_read_jsonl_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"\n\n")
    assert read_jsonl_messages(str(path)) == []


def test_qualified_quotes_backticks():
    assert qualified("raw", "events") == "`raw`.`events`"
    assert qualified("my`db", "t`x") == "`my``db`.`t``x`"


class _FakeRunner:
    def __init__(self, outcome, calls):
        self.outcome = outcome
        self.calls = calls

    def invoke(self, argv):
        self.calls.append(argv)
        return self.outcome


@pytest.fixture
def fake_dbt(monkeypatch):
    import dbt.cli.main

    state = {"outcome": None, "calls": []}
    monkeypatch.setattr(dbt.cli.main, "dbtRunner", lambda: _FakeRunner(state["outcome"], state["calls"]))
    return state


def test_dbt_passes_project_and_profiles_dirs(fake_dbt):
    from dbt.cli.main import dbtRunnerResult

    fake_dbt["outcome"] = dbtRunnerResult(success=True, result=True)
    project = DbtProject("/proj")
    assert project.dbt("debug") is fake_dbt["outcome"]
    assert DbtProject("/proj", "/profiles").dbt("run", "-s", "m") is fake_dbt["outcome"]
    assert fake_dbt["calls"] == [
        ["debug", "--project-dir", "/proj", "--profiles-dir", "/proj"],
        ["run", "-s", "m", "--project-dir", "/proj", "--profiles-dir", "/profiles"],
    ]


@pytest.mark.parametrize("result", [True, False, None, ["model.a"]])
def test_dbt_unexpected_outcome_raises_assertion_for_non_node_results(fake_dbt, result):
    # `dbt debug` returns a bool, `dbt ls` a list of names: neither holds node results.
    from dbt.cli.main import dbtRunnerResult

    fake_dbt["outcome"] = dbtRunnerResult(success=bool(result), result=result)
    with pytest.raises(AssertionError, match=r"dbt debug: success=") as excinfo:
        DbtProject("/proj").dbt("debug", expect_success=not result)
    assert "[]" in str(excinfo.value)


def test_dbt_failure_reports_node_results(fake_dbt):
    from dbt.artifacts.schemas.run import RunExecutionResult
    from dbt.cli.main import dbtRunnerResult

    node_result = types.SimpleNamespace(
        node=types.SimpleNamespace(name="orders"), status="error", message="boom"
    )
    outcome = RunExecutionResult(results=[node_result], elapsed_time=0.1)
    fake_dbt["outcome"] = dbtRunnerResult(success=False, result=outcome)
    with pytest.raises(AssertionError, match=r"\('orders', 'error', 'boom'\)"):
        DbtProject("/proj").dbt("run")


def test_dbt_failure_prefers_exception(fake_dbt):
    from dbt.cli.main import dbtRunnerResult

    fake_dbt["outcome"] = dbtRunnerResult(success=False, exception=RuntimeError("no profile"))
    with pytest.raises(AssertionError, match="no profile"):
        DbtProject("/proj").dbt("run")
