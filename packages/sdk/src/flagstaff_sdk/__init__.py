"""Flagstaff Python SDK."""
