"""Loads LaunchDarkly's SDK test-harness evaluation files (shared/conformance/launchdarkly).

Expands constants and parameters by textual substitution exactly as the harness does (constants,
then one parameter set, then constants again; a quoted "<NAME>" becomes the value's JSON text, a
bare <NAME> its string form) and parses with YAML 1.2 rules, so `on:` stays a string key.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

_yaml = YAML(typ="safe", pure=True)


@dataclass(frozen=True)
class Case:
    suite: str
    file: str
    name: str
    flag_key: str
    context: Any
    default: Any
    value_type: str | None
    expect_value: Any
    expect_variation: int | None
    expect_reason: dict[str, Any]
    sdk_data: dict[str, Any]
    require_capability: str | None
    skip_all_flags: bool

    @property
    def id(self) -> str:
        return f"{self.file}: {self.suite} / {self.name}"


def _substitute(text: str, values: dict[str, Any]) -> str:
    for name, value in values.items():
        typed = json.dumps(value)
        text = text.replace(f'"<{name}>"', typed)
        text = text.replace(f"<{name}>", value if isinstance(value, str) else typed)
    return text


def _parameter_sets(parameters: list[Any] | None) -> list[dict[str, Any]]:
    if not parameters:
        return []
    if isinstance(parameters[0], dict):
        return list(parameters)
    sets = []
    # The harness varies the first list fastest; keep its order so case ids are stable.
    for combination in itertools.product(*reversed(parameters)):
        merged: dict[str, Any] = {}
        for part in reversed(combination):
            merged.update(part)
        sets.append(merged)
    return sets


def expand(text: str) -> list[dict[str, Any]]:
    """Every suite a data file stands for, parsed."""
    header = _yaml.load(text)
    constants = header.get("constants") or {}
    parameter_sets = _parameter_sets(header.get("parameters"))
    if not constants and not parameter_sets:
        return [header]
    if not parameter_sets:
        return [_yaml.load(_substitute(text, constants))]
    suites = []
    for parameters in parameter_sets:
        expanded = _substitute(_substitute(_substitute(text, constants), parameters), constants)
        suites.append(_yaml.load(expanded))
    return suites


def _default_for(sdk_data: dict[str, Any], flag_key: str) -> Any:
    # As the harness: a null default becomes the zero value of the flag's first variation's type.
    flag = (sdk_data.get("flags") or {}).get(flag_key)
    variations = (flag or {}).get("variations") or []
    first = variations[0] if variations else None
    if isinstance(first, bool):
        return False
    if isinstance(first, (int, float)):
        return 0
    if isinstance(first, str):
        return ""
    return None


def load_cases(directory: Path) -> list[Case]:
    """All evaluation cases of every `*.yml` file in `directory`, in file order."""
    cases = []
    for path in sorted(directory.glob("*.yml")):
        for suite in expand(path.read_text()):
            sdk_data = suite.get("sdkData") or {}
            for evaluation in suite.get("evaluations") or []:
                expect = evaluation.get("expect") or {}
                default = evaluation.get("default")
                if default is None:
                    default = _default_for(sdk_data, evaluation["flagKey"])
                cases.append(
                    Case(
                        suite=suite.get("name", ""),
                        file=path.name,
                        name=evaluation.get("name") or evaluation["flagKey"],
                        flag_key=evaluation["flagKey"],
                        context=evaluation.get("context", suite.get("context")),
                        default=default,
                        value_type=evaluation.get("valueType"),
                        expect_value=expect.get("value"),
                        expect_variation=expect.get("variationIndex"),
                        expect_reason=expect.get("reason") or {},
                        sdk_data=sdk_data,
                        require_capability=suite.get("requireCapability"),
                        skip_all_flags=bool(suite.get("skipEvaluateAllFlags")),
                    )
                )
    return cases
