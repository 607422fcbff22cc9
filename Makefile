# spark_cdc: the two commands of the README are the contract.
#   make demo  fresh machine -> .venv, install, dbt build of the demo on embedded Spark, summary
#   make test  same set-up, then lint, types and every test
#   make bench the benchmark cases (benchmarks/README.md), results in benchmarks/results/
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The Spark line the venv gets (pyproject.toml accepts any pyspark 4): the newest Spark that Delta Lake
# and Apache Iceberg release for (README, Delta Lake and Apache Iceberg); the lakehouse jars below
# match it. PYSPARK_SPEC='pyspark>=4.3,<4.4' for a parquet/orc-only venv on a newer Spark.
PYSPARK_SPEC ?= pyspark>=4.1.1,<4.2

export SPARK_CDC_HOME ?= $(CURDIR)/.spark
# Spark's Python workers must run this venv's interpreter (pyarrow, pandas, the UDFs).
export PYSPARK_PYTHON ?= $(CURDIR)/$(BIN)/python
# Keep the embedded Spark on loopback (otherwise it binds to the first non-loopback interface).
export SPARK_LOCAL_IP ?= 127.0.0.1

# Test processes, each with its own Spark JVM: dbt's compile work is single-threaded Python, so two
# processes keep both cores busy (whole modules per process: --dist loadfile). Modules are handed out
# in collection order, longest first (tests/conftest.py); without --no-loadscope-reorder pytest-xdist
# would reorder them by their number of tests, starting the one-test reliability modules last.
PYTEST_WORKERS ?= 2
XDIST := -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

.PHONY: venv demo demo-spark35 report test test-suite test-setup test-fast test-long test-matrix test-spark35 test-spark35-examples test-spark35-lakehouse test-spark43-examples test-spark40-examples test-spark40-lakehouse lint lint-sql unit integration bench \
	clean lakehouse-jars test-lakehouse test-delta test-iceberg

# The lakehouse lanes: the MERGE storage, a killed full refresh, every example, the randomized
# reference suite (short), the crash test (SIGKILL mid-MERGE, two runs at once), schema drift and
# the apply options (delete_handling flag, truncate_handling, sequence_by, metadata names) with
# file_format delta, and again with iceberg (the Delta lane also compares spark_cdc with a dbt
# snapshot and an incremental merge model: test_side_by_side.py), each format in a pytest process
# (Spark session) of its own (tests/helpers/lakehouse.py). Jars: integration_tests/lakehouse/pom.xml, resolved once into
# .spark/jars/ (Maven cache .spark/m2).
LAKEHOUSE_TESTS := tests/integration/test_lakehouse_merge.py tests/integration/test_killed_full_refresh.py \
	tests/integration/test_examples.py \
	tests/integration/test_apply_reference_formats.py tests/integration/test_side_by_side.py \
	tests/integration/test_reliability_crash.py tests/integration/test_reliability_schema_drift.py \
	tests/integration/test_debezium_apply_options.py
# `make test` runs a short form, one comparison module per format and one example project on each
# (LAKEHOUSE_EXAMPLES_<format>): on Delta Lake the MERGE storage against the parquet rewrite over
# Debezium's corpus history (with Delta's own checks: one MERGE commit per run, the change data
# feed) and examples/debezium_delta (a project on Delta Lake with its own session settings); on
# Apache Iceberg the randomized reference suite over Debezium's feed (the general statements through
# MERGE) and Qlik Replicate's example (the format with the most staging). Both modules on both
# formats, every example: `make test-lakehouse`, `make test-long`. (The killed full refresh runs in
# the suite on partitioned parquet, whose view facts are cleared by the same macro.)
LAKEHOUSE_SHORT_delta := tests/integration/test_lakehouse_merge.py
LAKEHOUSE_SHORT_iceberg := tests/integration/test_apply_reference_formats.py
LAKEHOUSE_EXAMPLES_delta := debezium_delta
LAKEHOUSE_EXAMPLES_iceberg := qlik_replicate
# The reference suite there: Debezium's feed (the one with truncates and partial images: the general
# statements), few scenarios, and on Iceberg CockroachDB's too (no partial images, no truncates: the
# short statements through MERGE); make test-long: every feed, 60 scenarios.
LAKEHOUSE_SCENARIOS ?= 8
LAKEHOUSE_FEEDS ?= debezium
LAKEHOUSE_FEEDS_delta = $(LAKEHOUSE_FEEDS)
LAKEHOUSE_FEEDS_iceberg = $(sort $(LAKEHOUSE_FEEDS) cockroachdb)
# The modules a lane runs: LAKEHOUSE_TESTS, or LAKEHOUSE_TESTS_<format> when set (`make test`).
lakehouse_tests = $(or $(LAKEHOUSE_TESTS_$(1)),$(LAKEHOUSE_TESTS))

# pyspark is published as a source archive only: pip builds a wheel of it (about 450 MB, mostly
# jars, which are zip files already) for each venv. Built with its files stored rather than
# deflated, it takes half the CPU (pyspark 4.1: 24 -> 12 CPU-s) for a wheel a tenth larger. Installed
# first and alone, so the setting reaches pyspark's build and nothing else.
PYSPARK_BUILD := --config-settings=--build-option=--compression=stored

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile $(PYSPARK_BUILD) '$(PYSPARK_SPEC)'
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev]' '$(PYSPARK_SPEC)'
	touch $(STAMP)

# The venv alone (.ci/run installs it while the Debian packages install).
venv: $(STAMP)

demo: $(STAMP)
	cd integration_tests && ../$(BIN)/python scripts/demo.py

# The health report of the demo project (README, Health report); run `make demo` first.
report: $(STAMP)
	cd integration_tests && ../$(BIN)/python -m dbt_spark_cdc.report --out target/cdc_report.html

lint: $(STAMP)
	$(BIN)/ruff check python_udfs tests integration_tests/scripts benchmarks
	$(BIN)/ruff format --check python_udfs tests integration_tests/scripts benchmarks
	$(BIN)/mypy

# sqlfluff (dbt templater, sparksql) over models/ and the SQL the macros generate; also a test
# in `make test` (tests/integration/test_sql_lint.py). Config: .sqlfluff, integration_tests/lint/.
lint-sql: $(STAMP)
	SPARK_CDC_HOME=$(CURDIR)/.spark/lint $(BIN)/python integration_tests/scripts/lint_sql.py

unit: $(STAMP)
	$(BIN)/pytest tests/unit -q

integration: $(STAMP)
	$(BIN)/pytest tests/integration -q $(XDIST)

# `make test`: the suite on the default Spark line (parquet) beside lint and the lanes' set-up
# (test-setup; their output interleaved, so the suite's progress shows as it runs), then three at a
# time the lanes (LANES): the examples on the other Spark lines (parquet) and the lakehouse lanes
# in short form (LAKEHOUSE_SHORT_<format>, an example on each); make test-lakehouse / make
# test-long run every lakehouse module and every example on both. The suite leaves to `make
# test-long` the tests marked `long` (pytest -m long: deeper runs of what another test proves in
# `make test`, each marked where it is defined with what covers it there); to the lanes the example
# projects (each built there on Spark 3.5; one of them on Spark 4.0, one on 4.3, one on Delta, one
# on Iceberg); to `make test-long` the three tests that start Spark JVMs of their own (SIGKILL crash
# safety and two runs at once; the standalone cluster; a batch of 4 MiB and 15 MB messages on a
# 1 GiB driver, LARGE_MESSAGES); and to `make bench` / `make test-long` the check of the benchmark
# workloads. CI's time: CONTRIBUTING.md.
LARGE_MESSAGES := tests/integration/test_hostile_input.py::test_a_batch_of_large_messages_fits_the_default_driver_memory
TEST_ELSEWHERE := --ignore=tests/integration/test_examples.py \
	--ignore=tests/integration/test_benchmark_workloads.py \
	--ignore=tests/integration/test_reliability_crash.py \
	--ignore=tests/integration/test_reliability_cluster.py \
	--deselect=$(LARGE_MESSAGES)
# The lanes after the suite, longest first: make starts them in this order as its three job slots
# free, so the two short Spark 4 lines fill the slots of the lanes that end first instead of
# running after Spark 3.5's examples in one slot while the other cores idle.
LANES := test-delta test-spark35-examples test-iceberg test-spark43-examples test-spark40-examples
test: $(STAMP)
	$(MAKE) --no-print-directory -j2 test-suite test-setup
	$(MAKE) --no-print-directory -j3 --output-sync=target $(LANES) \
	  LAKEHOUSE_TESTS_delta='$(LAKEHOUSE_SHORT_delta)' LAKEHOUSE_TESTS_iceberg='$(LAKEHOUSE_SHORT_iceberg)' \
	  LAKEHOUSE_SPLIT_EXAMPLES=1 LAKEHOUSE_FEEDS_iceberg=debezium \
	  LINE_EXAMPLES_spark40='$(EXAMPLES_SPARK40)' LINE_EXAMPLES_spark43='$(EXAMPLES_SPARK43)' \
	  LAKEHOUSE_JARS_RESOLVED=1

test-suite: $(STAMP)
	$(BIN)/pytest tests -q $(XDIST) --durations=15 -m 'not long' $(TEST_ELSEWHERE)

# Which example projects a line builds: every one unless EXAMPLES names some (examples/<format>),
# or LINE_EXAMPLES_<line> for that line alone (`make test`: EXAMPLES_SPARK40, EXAMPLES_SPARK43).
EXAMPLE_TEST := tests/integration/test_examples.py
EXAMPLES ?=
example_tests = $(if $(1),$(foreach e,$(1),'$(EXAMPLE_TEST)::test_example_builds_to_the_source_state[$(e)]'),$(EXAMPLE_TEST))
# `make test` builds every example on Spark 3.5 (its own code path: no VARIANT) and one on each
# other Spark 4 line (the code path of the default line, whose lakehouse lanes build every example):
# a short run per line. `make test-matrix` builds every example on every line.
EXAMPLES_SPARK40 := ydb
EXAMPLES_SPARK43 := qlik_replicate

# Delta Lake and Apache Iceberg runtime jars for the installed pyspark's Spark line (once; then cached).
lakehouse-jars: $(STAMP)
	$(BIN)/python -m tests.helpers.lakehouse

# Both lakehouse lanes at once (one JVM each), output kept per lane.
test-lakehouse: lakehouse-jars
	$(MAKE) --no-print-directory -j2 --output-sync=target test-delta test-iceberg

# `make test` resolves the jars in test-setup, before its lanes (LAKEHOUSE_JARS_RESOLVED=1): a lane
# waiting for a prerequisite job would let the lanes after it take its slot, out of LANES' order.
test-delta test-iceberg: $(if $(LAKEHOUSE_JARS_RESOLVED),$(STAMP),lakehouse-jars)
	SPARK_CDC_TABLE_FORMAT=$(@:test-%=%) SPARK_CDC_REFERENCE_SCENARIOS=$(LAKEHOUSE_SCENARIOS) \
	  SPARK_CDC_REFERENCE_FEEDS='$(LAKEHOUSE_FEEDS_$(@:test-%=%))' $(BIN)/pytest $(call lakehouse_tests,$(@:test-%=%)) \
	  $(if $(LAKEHOUSE_SPLIT_EXAMPLES),$(call example_tests,$(LAKEHOUSE_EXAMPLES_$(@:test-%=%)))) -q --durations=5

# The edit loop (a few minutes): unit tests, then one build per format (each examples/<format> project).
test-fast: $(STAMP)
	$(BIN)/pytest tests/unit tests/integration/test_examples.py -q

# The reliability tests at full size (CONTRIBUTING.md): 36 SIGKILL points over 3 batches, 400 random
# hostile messages per format, 20 schema-drift batches, every conformance module on a 2-worker
# standalone cluster; large messages on a 1 GiB driver; and the randomized reference suite with 300
# scenarios per format. `make test` runs them in short form (the crash, cluster and large-message
# tests not at all: their rules at small sizes, CONTRIBUTING.md). Then the tests marked `long`
# (pytest -m long), and both lakehouse lanes with every module, every example and every feed.
test-long: $(STAMP)
	SPARK_CDC_KILLS=36 SPARK_CDC_KILL_BATCHES=3 SPARK_CDC_FUZZ_CASES=400 SPARK_CDC_DRIFT_BATCHES=20 \
	  SPARK_CDC_CLUSTER_TESTS=all SPARK_CDC_REFERENCE_SCENARIOS=300 \
	  $(BIN)/pytest tests/integration/test_reliability_*.py tests/integration/test_apply_reference_formats.py \
	  tests/integration/test_benchmark_workloads.py '$(LARGE_MESSAGES)' -q $(XDIST) --durations=10
	$(BIN)/pytest tests -m long -q $(XDIST) --durations=10
	$(MAKE) --no-print-directory test-lakehouse LAKEHOUSE_SCENARIOS=60 \
	  LAKEHOUSE_FEEDS='debezium aurora_dsql qlik_replicate ydb cockroachdb'

# The suite on each supported dbt-core x pyspark combination, each in its own venv under
# .venv-matrix/ (README, Supported versions; MATRIX="dbt1.11-pyspark3.5" for one). About 30 minutes each.
test-matrix: $(STAMP)
	$(BIN)/python integration_tests/scripts/test_matrix.py

# The Spark 3.5 lane (README, Supported runtimes): its own venv with pyspark 3.5 (numpy<2 and
# pyarrow<=24, which pyspark 3.5 needs). test-spark35: the unit tests, each format's example project and
# each format's conformance module (about 9 minutes); `make test` runs the example projects on it (CI's
# short run on Spark 3.5). Spark 3.5 has no VARIANT: the integration project's one variant column is a
# string there (SPARK_CDC_VARIANT_TYPE).
SPARK35_VENV := .venv-matrix/spark35
SPARK35_STAMP := $(SPARK35_VENV)/.installed
SPARK35_ENV := SPARK_CDC_HOME=$(CURDIR)/.spark/spark35 PYSPARK_PYTHON=$(CURDIR)/$(SPARK35_VENV)/bin/python \
	SPARK_CDC_VARIANT_TYPE=string
SPARK35_MODULES := tests/integration/test_examples.py tests/integration/test_cockroachdb.py \
	tests/integration/test_ydb.py tests/integration/test_qlik_replicate.py tests/integration/test_aurora_dsql.py \
	tests/integration/test_debezium_foundation.py

# A venv per Spark line, .venv-matrix/<$(1)>, with the package and that line's pyspark (the pip
# requirements in the variable named $(2), pyspark's first); its stamp is the target.
define spark_line_venv
.venv-matrix/$(1)/.installed: pyproject.toml Makefile
	test -x .venv-matrix/$(1)/bin/python || $$(PYTHON) -m venv .venv-matrix/$(1)
	.venv-matrix/$(1)/bin/python -m pip install --quiet --upgrade pip
	.venv-matrix/$(1)/bin/python -m pip install --quiet --no-compile $$(PYSPARK_BUILD) $$(firstword $$($(2)))
	.venv-matrix/$(1)/bin/python -m pip install --quiet --no-compile -e '.[dev]' $$($(2))
	touch $$@
endef

# The example projects (EXAMPLES: some of them) in a Spark line's venv ($(1)) with its
# environment ($(2)), in one process: a second Spark JVM compiles the same code again for a handful
# of builds (Spark 4.0's two examples: 114 s and 215 CPU-s on two processes, 93 s and 142 CPU-s on one).
spark_line_examples = $(2) $(1)/bin/pytest $(call example_tests,$(or $(LINE_EXAMPLES_$(3)),$(EXAMPLES))) -q

# The lakehouse lanes in a Spark line's venv ($(1)) with its environment ($(2)), one format after
# the other.
spark_line_lakehouse = $(1)/bin/python -m tests.helpers.lakehouse && for f in delta iceberg; do \
	$(2) SPARK_CDC_TABLE_FORMAT=$$f SPARK_CDC_REFERENCE_SCENARIOS=$(LAKEHOUSE_SCENARIOS) \
	  SPARK_CDC_REFERENCE_FEEDS='$(LAKEHOUSE_FEEDS)' $(1)/bin/pytest $(LAKEHOUSE_TESTS) -q --durations=5 \
	  || exit 1; \
	done

SPARK35_PIP := 'pyspark>=3.5,<3.6' 'numpy<2' 'pyarrow<=24'
$(eval $(call spark_line_venv,spark35,SPARK35_PIP))

test-spark35: $(SPARK35_STAMP)
	$(SPARK35_ENV) $(SPARK35_VENV)/bin/pytest tests/unit $(SPARK35_MODULES) -q $(XDIST) --durations=5

# The lakehouse lanes on Spark 3.5 (Delta Lake 3.3 and Apache Iceberg 1.11 for Scala 2.12: the pom's
# spark-3.5 profile), one after the other.
test-spark35-lakehouse: $(SPARK35_STAMP)
	$(call spark_line_lakehouse,$(SPARK35_VENV),$(SPARK35_ENV))

# Spark 4.0 (Databricks 17.3 LTS, EMR 8): the lakehouse lanes on Delta Lake 4.4 and Iceberg 1.11 for
# Spark 4.0 (the pom's spark-4.0 profile), one after the other, in its own venv.
SPARK40_VENV := .venv-matrix/spark40
SPARK40_STAMP := $(SPARK40_VENV)/.installed

SPARK40_PIP := 'pyspark>=4.0.1,<4.1'
$(eval $(call spark_line_venv,spark40,SPARK40_PIP))

SPARK40_ENV := SPARK_CDC_HOME=$(CURDIR)/.spark/spark40 PYSPARK_PYTHON=$(CURDIR)/$(SPARK40_VENV)/bin/python

test-spark40-lakehouse: $(SPARK40_STAMP)
	$(call spark_line_lakehouse,$(SPARK40_VENV),$(SPARK40_ENV))

# The example projects on Spark 4.0 (EXAMPLES: some of them); `make test` builds some there.
test-spark40-examples: $(SPARK40_STAMP)
	$(call spark_line_examples,$(SPARK40_VENV),$(SPARK40_ENV),spark40)

# `make demo` on Spark 3.5 (its venv: pip install of the package next to pyspark 3.5).
demo-spark35: $(SPARK35_STAMP)
	cd integration_tests && $(SPARK35_ENV) ../$(SPARK35_VENV)/bin/python scripts/demo.py

test-spark35-examples: $(SPARK35_STAMP)
	$(call spark_line_examples,$(SPARK35_VENV),$(SPARK35_ENV),spark35)

# The newest Spark line (4.3: parquet / orc, no Delta or Iceberg release for it) in its own venv;
# `make test` builds one example project there (EXAMPLES_SPARK43: CI's short run on that line).
SPARK43_VENV := .venv-matrix/spark43
SPARK43_STAMP := $(SPARK43_VENV)/.installed

SPARK43_PIP := 'pyspark>=4.3,<4.4'
$(eval $(call spark_line_venv,spark43,SPARK43_PIP))

test-spark43-examples: $(SPARK43_STAMP)
	$(call spark_line_examples,$(SPARK43_VENV),SPARK_CDC_HOME=$(CURDIR)/.spark/spark43 PYSPARK_PYTHON=$(CURDIR)/$(SPARK43_VENV)/bin/python,spark43)

# What `make test` does beside the suite, one step at a time in the job slot the suite leaves free:
# lint, then what its lanes need (the lakehouse jars, a venv per other Spark line; after the venvs'
# definitions above). On a fresh machine that is mostly downloads, which then neither wait for the
# suite nor hold it up.
test-setup: lint lakehouse-jars $(SPARK35_STAMP) $(SPARK40_STAMP) $(SPARK43_STAMP)

# Every case at the issue's sizes (each report records its total; benchmarks/README.md); BENCH_ARGS=
# '--scale 0.01' for a smoke run, '--cases parse:debezium,apply:delta' for some cases. Its own
# metastore: never the demo's (the lakehouse cases: one per format, .spark/bench_<format>).
bench: $(STAMP) lakehouse-jars
	$(BIN)/pytest tests/integration/test_benchmark_workloads.py -q
	SPARK_CDC_HOME=$(CURDIR)/.spark/bench $(BIN)/python -m benchmarks.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .venv-matrix .spark integration_tests/target integration_tests/dbt_packages integration_tests/logs
