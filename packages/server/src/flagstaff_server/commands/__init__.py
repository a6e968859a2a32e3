"""Subcommands of the `flagstaff` CLI: one module per command, each with `register(subparsers)`."""
