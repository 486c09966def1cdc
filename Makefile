# The two commands a newcomer runs: `make demo` and `make test`.
# Each creates .venv and installs what it needs on a fresh machine.
# `make test-fast` is the inner loop: every test not marked slow (see tests/conftest.py),
# in under a minute on 2 cores. `make lint` is ruff alone; `make test` runs it first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-fast lint install clean notebooks chromium openssl

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# pip byte-compiles every module it installs on one core: torch's thousands alone take most of
# a minute, for an oracle that imports a few hundred. So: no compiling in pip, then every
# package but torch compiled on all cores (the sandbox's processes never write bytecode, so
# what they import must be compiled here); torch's modules compile when a test imports them.
# A file that does not compile is left to fail where it is imported, as pip leaves it.
SITE = $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -qq --no-compile -e '.[instructor]'
	-$(BIN)/python -m compileall -q -j 0 $(SITE) >/dev/null
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -qq --no-compile -e '.[instructor,test,postgres,cluster,lti]'
	-$(BIN)/python -m compileall -q -j 0 -x '/torch/' $(SITE) >/dev/null
	touch $(VENV)/.installed $@

# The PostgreSQL server the gradebook tests start (as the postgres user, on a free port of
# 127.0.0.1, in a temporary folder): Debian's package, when no initdb and pg_ctl are there yet.
HAVE_PG = ls /usr/lib/postgresql/*/bin/initdb /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || \
	{ command -v initdb && command -v pg_ctl; } >/dev/null 2>&1
$(VENV)/.postgres: | $(BIN)/python
	@$(HAVE_PG) || { \
		echo "installing Debian's postgresql: the gradebook tests start a server of their own"; \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null || \
		{ $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; }; }
	@$(HAVE_PG) || { echo "no PostgreSQL server (initdb, pg_ctl) after apt-get install postgresql" >&2; exit 1; }
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/python examples/demo.py

# Two pytest-xdist workers where there are two cores (CI's machines): one pytest process keeps
# about one core busy, its sandboxes and subprocesses mostly running one at a time.
# tests/conftest.py keeps each module on one worker and the modules that run as nobody on the same one.
WORKERS = -n auto --maxprocesses 2 --dist loadfile

test: lint chromium openssl $(VENV)/.postgres
	$(BIN)/python -m pytest -q $(WORKERS)

# The browser tests (tests/test_browser.py) drive Debian's chromium with Playwright; no
# browser is downloaded at run time. Installed here when missing (root on these machines).
chromium:
	@test -x /usr/bin/chromium || apt-get install -y chromium || (apt-get update && apt-get install -y chromium)

# tests/test_cluster.py makes throwaway TLS certificates with the openssl command (Debian's,
# usually there already).
openssl:
	@command -v openssl >/dev/null || apt-get install -y -qq openssl || (apt-get update -qq && apt-get install -y -qq openssl)

test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m "not slow"

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .

# Rebuild source/ and assignments/ from templates/ and solutions/.
notebooks: $(VENV)/.installed
	$(BIN)/autograder notebooks --release

clean:
	rm -rf $(VENV) build *.egg-info
