"""The live progress display of a game day (rich): phase, time, connections, errors, sheds,
staleness and events, refreshed from the latest sample. Off when the output is no terminal
(CI logs get one line per phase instead)."""

from __future__ import annotations

from rich.console import Console
from rich.live import Live
from rich.table import Table

from flagstaff_server.gameday.recorder import Sample


class Progress:
    def __init__(self, console: Console, scenario: str, total_s: float) -> None:
        self.console = console
        self.scenario = scenario
        self.total_s = total_s
        self._live: Live | None = None
        self._phase = ""

    def __enter__(self) -> Progress:
        if self.console.is_terminal:
            self._live = Live(console=self.console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)

    def note(self, text: str) -> None:
        self.console.print(text)

    def update(self, sample: Sample) -> None:
        if sample.phase != self._phase:
            self._phase = sample.phase
            if self._live is None:
                self.console.print(f"[{sample.t:6.1f}s] phase: {sample.phase}")
        if self._live is None:
            return
        table = Table(title=f"game day {self.scenario}", show_header=False)
        table.add_row("phase", sample.phase)
        table.add_row("time", f"{sample.t:.1f} / {self.total_s:.0f} s")
        table.add_row("served from data", f"{sample.served} / {sample.evaluations}")
        table.add_row("current", f"{sample.current} / {sample.evaluations}")
        table.add_row("streams connected", str(sample.connected))
        table.add_row("errors / sheds", f"{sample.errors} / {sample.sheds}")
        table.add_row(
            "staleness p99 / max", f"{sample.stale_p99_ms:.0f} / {sample.stale_max_ms:.0f} ms"
        )
        table.add_row("events sent / acked", f"{sample.events_sent} / {sample.events_acknowledged}")
        self._live.update(table)
