# appliance: the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DATA_DIR ?= $(CURDIR)/.data
PYTEST_ARGS ?=
SOAK_SECONDS ?= 3600
export SOAK_SECONDS

.PHONY: run test lint bench soak format clean venv

venv: $(VENV)/.installed

# RNNoise (the verifier's noise suppression) is the librnnoise.so inside pyrnnoise; the
# package's own dependencies (plotting, audio files) are not needed, hence --no-deps.
RNNOISE := pyrnnoise==0.4.5

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[node,satellite,dev]'
	$(PY) -m pip install --quiet --no-deps '$(RNNOISE)'
	touch $@

## Start the node on embedded defaults (own PostgreSQL and MQTT broker) in $(DATA_DIR).
run: venv
	$(VENV)/bin/appliance --data-dir $(DATA_DIR) run

## Run the whole test suite (needs mosquitto installed: see .ci/run).
test: venv
	$(PY) -m pytest -q $(PYTEST_ARGS)

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: venv
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

## Benchmarks; numbers go to bench/results/*.json.
bench: venv
	$(PY) -m bench

## Soak one node under mixed traffic for SOAK_SECONDS (3600; e.g. 120 in CI); bench/results/soak.json.
soak: venv
	$(PY) -m bench soak

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
