"""Benchmarks that run Flagstaff beside a peer in the same process and report ratios."""
