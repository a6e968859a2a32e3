"""Use cases: one function per action; each owns its transaction and notifies the change feed."""
