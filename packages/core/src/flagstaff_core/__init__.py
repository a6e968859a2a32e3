"""Flagstaff evaluation core: LaunchDarkly flag and segment semantics, with no I/O."""
