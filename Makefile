# The README's two commands: `make run` and `make test`. Everything else is a helper.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8501

.PHONY: run run-team test lint bench ingest bytecode browser-deps postgres-deps

$(VENV)/.runtime: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

ingest: $(VENV)/.runtime
	$(PY) -m faithlens ingest --if-stale

# The app's own modules compiled ahead, as pip compiles installed packages: a cold start then does not
# compile them on its first page (nothing writes bytecode where PYTHONDONTWRITEBYTECODE is set).
bytecode: $(VENV)/.runtime
	$(PY) -m compileall -q faithlens components

# `local` mode (no sign-in) serves loopback only: HOST=0.0.0.0 needs FAITHLENS_AUTH=oidc or links, or FAITHLENS_MODE=demo.
# FAITHLENS_AUTH=links serves serve.py: app.py with the sign-in link routes; every other mode serves app.py itself.
APP_ENTRY = auth=$$($(PY) -m faithlens.access auth-mode) && entry=app.py && if [ "$$auth" = links ]; then entry=serve.py; fi
run: ingest bytecode
	$(PY) -m faithlens.access check-listen '$(HOST)'
	$(APP_ENTRY) && $(PY) -m streamlit run $$entry --server.address $(HOST) --server.port $(PORT)

# One of several servers sharing a team store: `make run-team EVENTS_URL=postgresql://... [PORT=8502 DB=...]`.
# Each server keeps its own DuckDB file (DB) as a replica; the store holds codes, sessions and LLM results.
run-team: $(VENV)/.runtime bytecode
	@test -n "$(EVENTS_URL)" || { echo "make run-team needs EVENTS_URL=postgresql://user@host:port/db" >&2; exit 2; }
	$(PY) -m faithlens.access check-listen '$(HOST)'
	export FAITHLENS_DB=$(or $(DB),data/faithlens.duckdb) FAITHLENS_EVENTS_URL='$(EVENTS_URL)'; \
		$(PY) -m faithlens ingest --if-stale && $(APP_ENTRY) && \
		$(PY) -m streamlit run $$entry --server.address $(HOST) --server.port $(PORT)

browser-deps:
	bash scripts/install-chromium.sh

postgres-deps:
	bash scripts/install-postgresql.sh

test: $(VENV)/.dev browser-deps postgres-deps
	$(PY) -m ruff check .
	$(PY) scripts/check_layout.py
	$(PY) -m pytest

lint: $(VENV)/.dev
	$(PY) -m ruff check .
	$(PY) scripts/check_layout.py

bench: $(VENV)/.dev postgres-deps bytecode
	$(PY) -m bench
