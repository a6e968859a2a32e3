"""The Prometheus text writer shared by the delivery, client-side and relay metrics."""

from __future__ import annotations

from flagstaff_server.delivery.prometheus import Exposition, label_value


def test_a_family_is_help_type_then_one_line_per_sample_under_the_prefix() -> None:
    exposition = Exposition("flagstaff_test_")
    exposition.metric("opened_total", "counter", "Things opened.", [('{kind="a"}', 2), ("", 0.5)])
    assert exposition.encode() == (
        b"# HELP flagstaff_test_opened_total Things opened.\n"
        b"# TYPE flagstaff_test_opened_total counter\n"
        b'flagstaff_test_opened_total{kind="a"} 2\n'
        b"flagstaff_test_opened_total 0.5\n"
    )


def test_label_values_escape_backslash_quote_and_newline() -> None:
    assert label_value('a\\b"c\nd') == 'a\\\\b\\"c\\nd'
