"""The test-support kit every test builds on; pytest puts `tests/` on sys.path, so a test imports
`from support.deadlines import wait_until` (never from a conftest). It asserts nothing about
Flagstaff itself.

- `prerequisites`: where the repository and ../shared are; a missing service or data set is
  skipped locally and fails in CI.
- `ports`: free loopback ports, and a port that listens and never answers.
- `deadlines`: polling a condition with a deadline, failing with what was awaited.
"""
