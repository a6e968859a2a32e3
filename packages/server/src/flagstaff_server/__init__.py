"""Flagstaff server: control plane, delivery, relay, ingestion and the flagstaff CLI."""
