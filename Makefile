# The two commands a user needs (see README.md):
#   make run   - run the bundled example program (sets up .venv itself)
#   make test  - run the whole test suite      (sets up .venv itself)

PYTHON      ?= python3
VENV        ?= .venv
VENV_PY     := $(VENV)/bin/python
comma       := ,
PYTEST_ARGS ?=
# Test processes (pytest-xdist, from the dev extra): each worker is its own pytest with its own
# Spark JVM (4g driver heap each). Spark on the suite's tiny data is latency-bound (a single
# process leaves the cores idle while it waits on the JVM and Python workers); on a machine
# already saturated by other work two workers measured the same as one (881 s vs 904 s).
# worksteal: each worker starts on a contiguous half of the tests (a module's fixtures are built
# once) and takes over the other's remaining tests when it runs out. TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2
RUN_ARGS    ?=
JOB_CONFIG  ?= conf/example-job.yaml
# Extras installed into the venv; CI adds `airflow` to test the example DAG.
EXTRAS      ?= dev
STAMP       := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: run test lint bench bench-scale venv check-java clean

# The spark-submit job on the bundled example, into ./warehouse and ./answers (see conf/example-job.yaml).
# Another job: make run JOB_CONFIG=conf/other.yaml RUN_ARGS='--run-id nightly-1'
# PYSPARK_PYTHON: spark-submit would otherwise start the driver with the system python3.
# `python -m spark_datalog.spark.jars` prints --packages/--conf for the delta-spark jar that fits
# the installed Spark; Spark resolves it from Maven Central (cached in ~/.ivy2.5.2).
run: venv check-java
	SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON=$(abspath $(VENV_PY)) PYSPARK_DRIVER_PYTHON=$(abspath $(VENV_PY)) \
	$(VENV)/bin/spark-submit --properties-file $(CURDIR)/conf/local-spark-defaults.conf \
		$$($(VENV_PY) -m spark_datalog.spark.jars) --driver-java-options -Dlog4j2.configurationFile=file:$(CURDIR)/conf/log4j2.properties \
		jobs/materialize.py --config $(JOB_CONFIG) $(RUN_ARGS)

# pytest exits 5 when it collected no test: that must fail, not pass quietly.
test: venv check-java
	@status=0; $(VENV_PY) -m pytest -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS) || status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

# ruff (rules and formatting) over the tree, mypy over the package; configuration in pyproject.toml.
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The quick benchmark suite (< 15 min on 2 cores); writes benchmarks/results/ and RESULTS.md.
bench: check-java
	$(MAKE) venv EXTRAS=dev,bench
	SPARK_LOCAL_IP=127.0.0.1 $(VENV_PY) -m benchmarks run --suite quick $(BENCH_ARGS)

# The scale suite (issue 21, item 5; hours on 2 cores): every scale benchmark and size, then the
# incremental cases at scale, then benchmarks/SCALE.md from both. One size at a time instead:
#   python -m benchmarks run --suite scale --only tc-tree --size depth=12
SCALE_INCREMENTAL := --size tc-tree3=12 --size cc-rmat=18x4194304 --fractions 0,0.01 --budget-minutes 0 \
	--md benchmarks/results/scale-incremental.md --json benchmarks/results/scale-incremental.json \
	--plot benchmarks/results/plots/scale-incremental.png
bench-scale: check-java
	$(MAKE) venv EXTRAS=dev,bench
	SPARK_LOCAL_IP=127.0.0.1 $(VENV_PY) -m benchmarks run --suite scale $(BENCH_ARGS)
	SPARK_LOCAL_IP=127.0.0.1 $(VENV_PY) -m benchmarks.incremental $(SCALE_INCREMENTAL)
	$(VENV_PY) -m benchmarks.scale benchmarks/results/scale.json benchmarks/results/scale-incremental.json

venv: $(STAMP)

# Re-install only when the package metadata changed (or the venv is new).
$(STAMP): pyproject.toml setup.cfg
	@if [ ! -x "$(VENV_PY)" ]; then \
		echo "creating virtual environment $(VENV)"; \
		$(PYTHON) -m venv $(VENV) || { echo "could not create $(VENV): needs Python >= 3.10 with venv" >&2; exit 1; }; \
	fi
	@$(VENV_PY) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || \
		{ echo "Python >= 3.10 is required ($(VENV_PY) is $$($(VENV_PY) -V 2>&1))" >&2; exit 1; }
	$(VENV_PY) -m pip install --disable-pip-version-check -q -e '.[$(EXTRAS)]'
	@touch $(STAMP)

# Spark needs a JVM: Java 17 or newer, found through JAVA_HOME or PATH.
JAVA_HINT := Java 17+ is required by Spark: install it with `apt-get install -y openjdk-17-jre-headless` \
(Debian/Ubuntu) or `brew install openjdk@17` and make sure `java` is on PATH or JAVA_HOME is set

check-java:
	@java=java; if [ -n "$${JAVA_HOME:-}" ] && [ -x "$$JAVA_HOME/bin/java" ]; then java="$$JAVA_HOME/bin/java"; fi; \
	if ! version=$$("$$java" -version 2>&1); then echo '$(JAVA_HINT)' >&2; exit 1; fi; \
	major=$$(printf '%s\n' "$$version" | sed -n 's/.*version "\([0-9][0-9]*\).*/\1/p' | head -n 1); \
	if [ "$$major" = "1" ]; then major=$$(printf '%s\n' "$$version" | sed -n 's/.*version "1\.\([0-9][0-9]*\).*/\1/p' | head -n 1); fi; \
	if [ -z "$$major" ] || [ "$$major" -lt 17 ]; then \
		echo "found Java '$${major:-unknown}' at $$java" >&2; echo '$(JAVA_HINT)' >&2; exit 1; \
	fi

clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis spark-warehouse metastore_db derby.log warehouse answers
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -print -exec rm -rf {} + 2>/dev/null || true
