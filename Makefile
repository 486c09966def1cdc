# The two commands a newcomer runs: `make demo` and `make test`.
# Each creates .venv and installs what it needs on a fresh machine.
# `make test-fast` is the inner loop: every test not marked slow (see tests/conftest.py),
# in under a minute on 2 cores. `make lint` is ruff alone; `make test` runs it first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-fast lint install clean notebooks chromium openssl

# Each set-up step through tools/step: a line saying what it does, then one every 10 s while
# it runs; its own output only when it fails.
STEP = ./tools/step

$(BIN)/python:
	@$(STEP) "creating $(VENV) with $(PYTHON)" $(PYTHON) -m venv $(VENV)

# pip byte-compiles every module it installs on one core: torch's thousands alone take most of
# a minute, and most of what the instructor extras bring is never imported by a test. So: no
# compiling in pip; what a sandbox child may import from site-packages (numpy: the zygote's
# own View says which, tools/compile_for_sandbox.py) and this checkout's packages are compiled
# here, on all cores, since the sandbox's processes never write bytecode (a fresh clone has
# none, and each sandbox would compile numpy and the engine again); everything else is
# compiled by the first process that imports it, which is why bytecode writing is left on
# below even where the environment turns it off (PYTHONDONTWRITEBYTECODE: then every test
# process would compile torch from source again).
unexport PYTHONDONTWRITEBYTECODE
SANDBOX_COMPILE = $(BIN)/python tools/compile_for_sandbox.py autograder attention_course solutions examples
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@$(STEP) "installing the grader and nbgrader into $(VENV) (pip)" \
		$(BIN)/pip install --no-compile -e '.[instructor]'
	@$(STEP) "compiling what the sandbox imports (numpy, this checkout)" $(SANDBOX_COMPILE)
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	@$(STEP) "installing the grader and what the tests need into $(VENV) (pip; torch from a local file)" \
		$(BIN)/pip install --no-compile -e '.[instructor,test,postgres,cluster,lti]'
	@$(STEP) "compiling what the sandbox imports (numpy, this checkout)" $(SANDBOX_COMPILE)
	@touch $(VENV)/.installed $@

# The PostgreSQL server the gradebook tests start (as the postgres user, on a free port of
# 127.0.0.1, in a temporary folder): Debian's package, when no initdb and pg_ctl are there yet.
HAVE_PG = ls /usr/lib/postgresql/*/bin/initdb /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || \
	{ command -v initdb && command -v pg_ctl; } >/dev/null 2>&1
$(VENV)/.postgres: | $(BIN)/python
	@$(HAVE_PG) || $(STEP) "installing Debian's postgresql: the gradebook tests start a server of their own" \
		sh -c 'SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); export DEBIAN_FRONTEND=noninteractive; \
		$$SUDO apt-get install -y -qq postgresql || { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq postgresql; }'
	@$(HAVE_PG) || { echo "no PostgreSQL server (initdb, pg_ctl) after apt-get install postgresql" >&2; exit 1; }
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	@echo "==> the demo: a sample class graded, its feedback pages and dashboard written"
	$(BIN)/python examples/demo.py

# One pytest-xdist worker more than the machine has cores: much of a test's time is spent
# waiting (an attack holding memory for a second, a time limit running out, a subprocess
# starting), and on 2 cores a third worker took the suite from about 700 s to about 550 s.
# tests/conftest.py keeps each module on one worker and the modules that run as nobody on the same one.
WORKERS = -n $$(( $$(nproc) + 1 )) --dist loadfile

test: lint chromium openssl $(VENV)/.postgres
	@echo "==> the tests, on $$(( $$(nproc) + 1 )) pytest-xdist workers (a dot per test; slow modules take a minute or two)"
	$(BIN)/python -m pytest -q $(WORKERS)

# The browser tests (tests/test_browser.py) drive Debian's chromium with Playwright; no
# browser is downloaded at run time. Installed here when missing (root on these machines).
chromium:
	@test -x /usr/bin/chromium || $(STEP) "installing Debian's chromium for the browser tests (apt-get)" \
		sh -c 'apt-get install -y -qq chromium || { apt-get update -qq && apt-get install -y -qq chromium; }'

# tests/test_cluster.py makes throwaway TLS certificates with the openssl command (Debian's,
# usually there already).
openssl:
	@command -v openssl >/dev/null || $(STEP) "installing Debian's openssl for the cluster's test certificates (apt-get)" \
		sh -c 'apt-get install -y -qq openssl || { apt-get update -qq && apt-get install -y -qq openssl; }'

test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m "not slow"

lint: $(VENV)/.installed-test
	@echo "==> ruff check ."
	@$(BIN)/ruff check .

# Rebuild source/ and assignments/ from templates/ and solutions/.
notebooks: $(VENV)/.installed
	$(BIN)/autograder notebooks --release

clean:
	rm -rf $(VENV) build *.egg-info
