# Flagstaff: the two commands are `make run` and `make test`; both set everything up first.
PYTHON ?= python3.11
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: install run test lint typecheck unit node-deps browser-deps bench fuzz gameday clean

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# Creates .venv at the repository root with all three packages (editable) and the dev tools.
install: $(UV)
	$(UV) sync --all-packages --frozen --python $(PYTHON) --quiet
	@test -x $(VENV)/bin/flagstaff

run: install
	$(VENV)/bin/flagstaff serve --data-dir data

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install
	$(VENV)/bin/mypy

# The official Node server SDK for tests/e2e/test_node_server_sdk.py and the OpenID provider of
# tests/e2e/oidc (oidc-provider), each pinned by its lockfile. Without npm their tests skip (and
# fail when CI=true).
node-deps:
	@if command -v npm >/dev/null; then npm ci --prefix tests/e2e/node --no-audit --no-fund --silent \
		&& npm ci --prefix tests/e2e/oidc --no-audit --no-fund --silent; \
	else echo "npm not found: the Node SDK and single sign-on tests will skip (and fail in CI)"; fi

# Debian's chromium and the official browser SDKs (lockfile) for tests/e2e/browser. Playwright drives
# /usr/bin/chromium by path: never `playwright install`. Without them those tests skip (fail in CI).
browser-deps:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && apt-get install -y -qq chromium; fi
	@if command -v npm >/dev/null; then npm ci --prefix tests/e2e/browser --no-audit --no-fund --silent; \
	else echo "npm not found: the browser SDK tests will skip (and fail in CI)"; fi

unit: install node-deps browser-deps
	$(VENV)/bin/pytest $(PYTEST_ARGS)

test: lint typecheck unit

bench: install
	$(VENV)/bin/python -m bench.eval

# The long fuzzing pass over the public decoders (docs/fuzzing.md): MINUTES in total.
MINUTES ?= 10
fuzz: install
	PYTHONPATH=tests $(VENV)/bin/python -m fuzz --minutes $(MINUTES)

# Every game day at full size (docs/operations/gameday.md), one after the other, nice'd:
# GAMEDAY_CLIENTS protocol clients plus the three real SDKs each, a report per scenario under
# GAMEDAY_DIR and the README's table in GAMEDAY_DIR/table.md. Most of an hour on two cores.
GAMEDAY_CLIENTS ?= 5000
GAMEDAY_DURATION ?= 30
GAMEDAY_DIR ?= gameday-reports
GAMEDAY_SCENARIOS ?=
gameday: install node-deps
	@mkdir -p $(GAMEDAY_DIR)
	@for s in $(or $(GAMEDAY_SCENARIOS),$$($(VENV)/bin/flagstaff gameday --list | cut -f1)); do \
		nice -n 10 $(VENV)/bin/flagstaff gameday $$s --clients $(GAMEDAY_CLIENTS) \
			--duration $(GAMEDAY_DURATION) --report $(GAMEDAY_DIR)/$$s \
			|| echo "gameday $$s: exit $$?"; \
	done
	$(VENV)/bin/python -m flagstaff_server.gameday.summary $(GAMEDAY_DIR) | tee $(GAMEDAY_DIR)/table.md

clean:
	rm -rf $(VENV) $(TOOLS) build .pytest_cache .mypy_cache .ruff_cache
