"""Migration scripts, oldest first; each names its parent in `down_revision`."""
