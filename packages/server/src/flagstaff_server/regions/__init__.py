"""Regions: a PostgreSQL primary in one region, hot standbys fed by streaming replication in the
others (docs/operations/regions.md). This package holds the database side of that topology: the
private-cluster harness that tests, benchmarks and game days start, the replication probe behind
`/status` and `flagstaff dr`, promotion, and the API's watch that starts an epoch on a new
timeline."""
