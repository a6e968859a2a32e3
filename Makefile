# Flagstaff: the two commands are `make run` and `make test`; both set everything up first.
PYTHON ?= python3.11
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

.PHONY: install run test lint typecheck unit bench clean

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

unit: install
	$(VENV)/bin/pytest $(PYTEST_ARGS)

test: lint typecheck unit

bench: install
	$(VENV)/bin/python -m bench.eval

clean:
	rm -rf $(VENV) $(TOOLS) build .pytest_cache .mypy_cache .ruff_cache
