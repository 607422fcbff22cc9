"""The dbt plugin: discovery, cheap import, graceful absence of dbt-spark, and the dbt-spark patches.

Anything that patches dbt-spark or blocks modules runs in a fresh interpreter, so this process (which
may also run the integration tests) keeps pristine classes.
"""

import datetime as dt
import json
import os
import pkgutil
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path

import dbt_spark_cdc

PACKAGE_ROOT = Path(dbt_spark_cdc.__file__).resolve().parent.parent


def run_python(code: str, tmp_path: Path, env_update: dict[str, str] | None = None) -> dict:
    """Run ``code`` in a fresh interpreter (outside the repo) and return the JSON it prints last."""
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    env.update(env_update or {})
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_pkgutil_discovers_the_package():
    # dbt-core finds plugins with pkgutil.iter_modules(); an editable install through setuptools'
    # per-package mapping would be importable yet invisible here.
    found = [m for m in pkgutil.iter_modules() if m.name == "dbt_spark_cdc"]
    assert len(found) == 1
    assert found[0].ispkg
    assert Path(found[0].module_finder.path).resolve() == PACKAGE_ROOT


def test_plugins_attribute_lists_one_dbt_plugin():
    from dbt.plugins.manager import dbtPlugin

    plugins = dbt_spark_cdc.plugins
    assert isinstance(plugins, list)
    assert len(plugins) == 1
    assert issubclass(plugins[0], dbtPlugin)
    assert plugins[0] is not dbtPlugin
    assert plugins[0].__name__ == "SparkCdcPlugin"


def test_unknown_attribute_raises_attribute_error():
    try:
        dbt_spark_cdc.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_is_cheap(tmp_path):
    facts = run_python(
        """
        import json, sys
        import dbt_spark_cdc
        heavy = {"pyspark", "pandas", "dbt", "pyarrow", "numpy", "py4j"}
        print(json.dumps({
            "heavy": sorted(m for m in sys.modules if m.split(".")[0] in heavy),
            "version": dbt_spark_cdc.__version__,
        }))
        """,
        tmp_path,
    )
    assert facts == {"heavy": [], "version": dbt_spark_cdc.__version__}


def write_project(root: Path, name: str, *, installed: bool = False, install_path: str = "") -> None:
    """A minimal dbt project (Spark session profile); ``installed``: `dbt deps` installed spark_cdc."""
    root.mkdir(parents=True, exist_ok=True)
    lines = [f"name: {name}", "version: '1.0.0'", "config-version: 2", f"profile: {name}"]
    if install_path:
        lines.append(f"packages-install-path: '{install_path}'")
    (root / "dbt_project.yml").write_text("\n".join(lines) + "\n")
    (root / "profiles.yml").write_text(
        f"{name}:\n  target: dev\n  outputs:\n    dev:\n"
        "      type: spark\n      method: session\n      host: localhost\n      schema: plain\n"
    )
    (root / "models").mkdir(exist_ok=True)
    (root / "models" / "plain.sql").write_text("select 1 as id\n")
    if installed:
        package = root / (install_path or "dbt_packages") / "spark_cdc"
        package.mkdir(parents=True)
        (package / "dbt_project.yml").write_text("name: spark_cdc\nversion: '0.0.0'\n")


PATCH_FACTS = """
    import json
    from dbt.adapters.spark.impl import SparkAdapter
    from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
    patched = [c.__name__ for c in (SparkAdapter, Cursor, SessionConnectionWrapper)
               if getattr(c, "_spark_cdc_patched", False)]
    print(json.dumps({"result": RESULT, "patched": patched}))
"""


def test_plugin_changes_nothing_for_a_project_without_the_package(tmp_path):
    # A real dbt invocation (parse: no Spark needed) of a plain dbt-spark project in an environment
    # where dbt-spark-cdc is installed: dbt loads the plugin, which leaves dbt-spark untouched.
    write_project(tmp_path / "plain", "plain_project")
    code = """
        from dbt.cli.main import dbtRunner
        result = dbtRunner().invoke(["parse", "--project-dir", "plain", "--profiles-dir", "plain"])
        RESULT = result.success
    """
    facts = run_python(textwrap.dedent(code) + textwrap.dedent(PATCH_FACTS), tmp_path)
    assert facts == {"result": True, "patched": []}


def test_plugin_is_active_where_the_package_is_installed(tmp_path):
    write_project(tmp_path / "user", "user_project", installed=True, install_path="vendor/packages")
    code = """
        from dbt.cli.main import dbtRunner
        result = dbtRunner().invoke(["parse", "--project-dir", "user", "--profiles-dir", "user"])
        RESULT = result.success
    """
    facts = run_python(textwrap.dedent(code) + textwrap.dedent(PATCH_FACTS), tmp_path)
    assert facts == {"result": True, "patched": ["SparkAdapter", "Cursor", "SessionConnectionWrapper"]}


def test_project_uses_package(tmp_path):
    from dbt_spark_cdc._plugin import project_uses_package

    write_project(tmp_path / "plain", "plain_project")
    write_project(tmp_path / "user", "user_project", installed=True)
    write_project(tmp_path / "itself", "spark_cdc")
    assert not project_uses_package(tmp_path / "plain")
    assert project_uses_package(tmp_path / "user")
    assert project_uses_package(tmp_path / "itself")
    assert not project_uses_package(tmp_path / "missing")


def test_dbt_plugin_manager_loads_the_plugin(tmp_path):
    # dbt's own discovery path: iter_modules, import, instantiate everything in `plugins`; the working
    # directory holds a project that uses the package.
    write_project(tmp_path, "unit_project", installed=True)
    facts = run_python(
        """
        import json
        from dbt.plugins.manager import PluginManager
        from dbt.adapters.spark.impl import SparkAdapter
        manager = PluginManager.from_modules("unit_project")
        print(json.dumps({
            "plugins": [type(p).__name__ for p in manager._plugins],  # no public accessor
            "patched": getattr(SparkAdapter, "_spark_cdc_patched", False),
        }))
        """,
        tmp_path,
    )
    assert "SparkCdcPlugin" in facts["plugins"]
    assert facts["patched"] is True


def test_without_dbt_spark_install_is_false_and_plugin_loads(tmp_path):
    facts = run_python(
        """
        import json, sys
        for name in ("dbt.adapters.spark", "dbt.adapters.spark.impl", "dbt.adapters.spark.session"):
            sys.modules[name] = None
        try:
            from dbt.adapters.spark.impl import SparkAdapter
            blocked = False
        except ImportError:
            blocked = True
        import dbt_spark_cdc
        from dbt_spark_cdc import _plugin
        installed = _plugin.install()
        [plugin_cls] = dbt_spark_cdc.plugins
        plugin = plugin_cls(project_name="unit_project")
        print(json.dumps({
            "blocked": blocked,
            "installed": installed,
            "plugin": type(plugin).__name__,
            "project_name": plugin.project_name,
            "still_blocked": sys.modules["dbt.adapters.spark.impl"] is None,
        }))
        """,
        tmp_path,
    )
    assert facts == {
        "blocked": True,
        "installed": False,
        "plugin": "SparkCdcPlugin",
        "project_name": "unit_project",
        "still_blocked": True,
    }


def test_without_dbt_core_plugins_is_empty(tmp_path):
    facts = run_python(
        """
        import json, sys
        sys.modules["dbt"] = None
        import dbt_spark_cdc
        from dbt_spark_cdc import _plugin
        print(json.dumps({"plugins": dbt_spark_cdc.plugins, "installed": _plugin.install()}))
        """,
        tmp_path,
    )
    assert facts == {"plugins": [], "installed": False}


def test_install_patches_dbt_spark_once(tmp_path):
    facts = run_python(
        """
        import json, os, sys
        from dbt.adapters.spark.impl import SparkAdapter
        from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
        from dbt_spark_cdc import _plugin
        from dbt_spark_cdc.session import SessionPythonJobHelper

        pristine_execute = Cursor.execute
        pristine_helpers = SparkAdapter.python_submission_helpers.fget(None)
        first = _plugin.install()
        helpers_property = SparkAdapter.__dict__["python_submission_helpers"]
        execute_after_first = Cursor.execute
        second = _plugin.install()

        # The original getter ignores self, so the patched one can be called without an adapter.
        helpers = SparkAdapter.python_submission_helpers.fget(None)
        print(json.dumps({
            "installed": [first, second],
            "pristine_helpers": sorted(pristine_helpers),
            "helpers": {k: f"{v.__module__}.{v.__qualname__}" for k, v in helpers.items()},
            "session_is_ours": helpers["session"] is SessionPythonJobHelper,
            "originals_kept": all(helpers[k] is v for k, v in pristine_helpers.items()),
            "property_replaced_once": SparkAdapter.__dict__["python_submission_helpers"] is helpers_property,
            "execute_replaced": execute_after_first is not pristine_execute,
            "execute_replaced_once": Cursor.execute is execute_after_first,
            "wraps_pristine": Cursor.execute.__wrapped__ is pristine_execute,
            "single_layer": not hasattr(Cursor.execute.__wrapped__, "__wrapped__"),
            "markers": [
                getattr(SparkAdapter, "_spark_cdc_patched", None),
                getattr(Cursor, "_spark_cdc_patched", None),
                getattr(SessionConnectionWrapper, "_spark_cdc_patched", None),
            ],
            "seed_binding": SessionConnectionWrapper._fix_binding("it's"),
            "pyspark_python_is_this_interpreter": os.environ.get("PYSPARK_PYTHON") == sys.executable,
        }))
        """,
        tmp_path,
    )
    assert facts["installed"] == [True, True]
    assert facts["pristine_helpers"] == ["all_purpose_cluster", "job_cluster"]
    assert facts["helpers"] == {
        "job_cluster": "dbt.adapters.spark.python_submissions.JobClusterPythonJobHelper",
        "all_purpose_cluster": "dbt.adapters.spark.python_submissions.AllPurposeClusterPythonJobHelper",
        "session": "dbt_spark_cdc.session.SessionPythonJobHelper",
    }
    assert facts["session_is_ours"] is True
    assert facts["originals_kept"] is True
    assert facts["property_replaced_once"] is True
    assert facts["execute_replaced"] is True
    assert facts["execute_replaced_once"] is True
    assert facts["wraps_pristine"] is True
    assert facts["single_layer"] is True
    assert facts["markers"] == [True, True, True]
    assert facts["seed_binding"] == "'it\\'s'"
    assert facts["pyspark_python_is_this_interpreter"] is True


def test_seed_bindings_are_spark_sql_literals():
    from dbt_spark_cdc._plugin import spark_sql_literal

    assert spark_sql_literal("carpenter's") == "'carpenter\\'s'"
    assert spark_sql_literal('{"a":"x\\"y"}') == '\'{"a":"x\\\\"y"}\''  # JSON's \" survives
    assert spark_sql_literal(None) == "NULL"
    assert spark_sql_literal(True) == "true"
    assert spark_sql_literal(12345678901234567890) == "12345678901234567890"
    assert spark_sql_literal(Decimal("1E+3")) == "1000"
    assert spark_sql_literal(0.1) == "0.1"
    assert spark_sql_literal(float("nan")) == "'nan'"
    assert spark_sql_literal(dt.datetime(2026, 1, 2, 3, 4, 5, 6)) == "'2026-01-02 03:04:05.000006'"
    assert spark_sql_literal(dt.date(2026, 1, 2)) == "'2026-01-02'"
