# The README's two commands: `make run` and `make test`. Everything else is a helper.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8501

.PHONY: run test lint bench ingest browser-deps

$(VENV)/.runtime: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

ingest: $(VENV)/.runtime
	$(PY) -m faithlens ingest --if-stale

run: ingest
	$(PY) -m streamlit run app.py --server.address $(HOST) --server.port $(PORT)

browser-deps:
	bash scripts/install-chromium.sh

test: $(VENV)/.dev browser-deps
	$(PY) -m ruff check .
	$(PY) scripts/check_layout.py
	$(PY) -m pytest

lint: $(VENV)/.dev
	$(PY) -m ruff check .
	$(PY) scripts/check_layout.py

bench: $(VENV)/.dev
	$(PY) -m bench
