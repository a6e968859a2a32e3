"""Suite-wide fixtures. Shared helpers live in importable modules beside this file
(`prerequisites`, `strategies`, ...); `tests/` is on sys.path through pytest's `pythonpath`."""

pytest_plugins = ["support.stores"]
