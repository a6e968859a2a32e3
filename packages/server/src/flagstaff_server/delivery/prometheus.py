"""Prometheus text exposition (format 0.0.4): metric families written as HELP, TYPE and sample
lines under one name prefix, label values escaped. Shared by delivery's, client-side delivery's
and the relay's `/metrics`; formats what it is given and reads no state itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

Kind = Literal["gauge", "counter"]


def label_value(value: str) -> str:
    """`value` escaped for use inside a label's double quotes."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Exposition:
    """The lines of one exposition; every metric name starts with `prefix`."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.lines: list[str] = []

    def metric(
        self, name: str, kind: Kind, help_text: str, samples: Iterable[tuple[str, float]]
    ) -> None:
        """One family: `samples` are (label set such as `{a="b"}` or "", value) pairs."""
        full = self.prefix + name
        self.lines.append(f"# HELP {full} {help_text}")
        self.lines.append(f"# TYPE {full} {kind}")
        self.lines.extend(f"{full}{labels} {value:g}" for labels, value in samples)

    def encode(self) -> bytes:
        return ("\n".join(self.lines) + "\n").encode()
