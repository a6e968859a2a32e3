"""Evaluation benchmark: the same flags and contexts through Flagstaff's core and the official
LaunchDarkly Python SDK, timed in one run. Run with `python -m bench.eval` (or `make bench`).
"""
