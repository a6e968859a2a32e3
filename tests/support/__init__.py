"""The test-support kit every test builds on; pytest puts `tests/` on sys.path, so a test imports
`from support.deadlines import wait_until` (never from a conftest). It asserts nothing about
Flagstaff itself.

- `prerequisites`: where the repository and ../shared are; a missing service or data set is
  skipped locally and fails in CI.
- `ports`: free loopback ports, and a port that listens and never answers.
- `deadlines`: polling a condition with a deadline, failing with what was awaited.
- `processes`: the `flagstaff` CLI as real processes, up once `/status` answers.
- `threaded_servers`: an ASGI app under uvicorn, or a standard-library handler, in a thread.
- `in_process`: the whole server in a thread, and the management API over a store.
- `services`: the machine's PostgreSQL and Redis: throwaway databases, stream keys, Redis
  databases of a test's own.
- `private_postgres`, `private_redis`: a server of a test's own that it may stop and start.
- `management`: the management API and the official Python SDK driving a running server.
"""
