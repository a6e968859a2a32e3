"""The REST flag document: its kind, the configuration a flag gets in each environment (and in
a new or removed environment), id filling, and the response decoration (`_links`, `_site`,
`_summary`). Creating one from a body is `flag_creation`'s, patching it `flag_patch`'s. Pure: the
caller passes `now_ms` and an id factory; `flag_validation` checks the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from flagstaff_server.domain.document import Document, IdFactory, clone, json_equal, pointer
from flagstaff_server.errors import AlreadyExists, NotFound


def flag_kind(variations: Sequence[Any]) -> str:
    """'boolean' for the true/false pair, 'multivariate' for anything else."""
    values = [
        variation.get("value") if isinstance(variation, dict) else None for variation in variations
    ]
    is_pair = len(values) == 2 and all(isinstance(value, bool) for value in values)
    return "boolean" if is_pair and values[0] is not values[1] else "multivariate"


def new_environment_config(
    document: Document, environment_name: str, *, now_ms: int, new_id: IdFactory
) -> dict[str, Any]:
    """The configuration a flag gets in a new environment: off, serving the flag's defaults."""
    defaults = document.get("defaults") or {"onVariation": 0, "offVariation": 0}
    return {
        "on": False,
        "archived": bool(document.get("archived", False)),
        "salt": new_id().replace("-", ""),
        "sel": new_id().replace("-", ""),
        "lastModified": now_ms,
        "version": 1,
        "targets": [],
        "contextTargets": [],
        "rules": [],
        "fallthrough": {"variation": defaults["onVariation"]},
        "offVariation": defaults["offVariation"],
        "prerequisites": [],
        "trackEvents": False,
        "trackEventsFallthrough": False,
        "_environmentName": environment_name,
    }


def add_environment_to_flag(
    document: Document,
    environment_key: str,
    environment_name: str,
    *,
    now_ms: int,
    new_id: IdFactory,
) -> Document:
    """A copy of the flag with a default configuration for a newly created environment."""
    if environment_key in document.get("environments", {}):
        raise AlreadyExists(
            f"flag {document.get('key')!r} already has environment {environment_key!r}",
            path=pointer("environments", environment_key),
        )
    result: Document = clone(document)
    result.setdefault("environments", {})[environment_key] = new_environment_config(
        result, environment_name, now_ms=now_ms, new_id=new_id
    )
    return result


def remove_environment_from_flag(document: Document, environment_key: str) -> Document:
    """A copy of the flag without the configuration of a deleted environment."""
    if environment_key not in document.get("environments", {}):
        raise NotFound(
            f"flag {document.get('key')!r} has no environment {environment_key!r}",
            path=pointer("environments", environment_key),
        )
    result: Document = clone(document)
    del result["environments"][environment_key]
    return result


def fill_flag_ids(document: Document, *, new_id: IdFactory) -> Document:
    """Give variations, rules and clauses lacking an `_id` a fresh one, and fill the defaults
    LaunchDarkly fills (`negate`, `trackEvents`, empty lists), so that JSON Patch may add a rule
    the way the REST API documents it. Leaves wrongly typed parts for validation to report."""
    result: Document = clone(document)
    variations = result.get("variations")
    if isinstance(variations, list):
        for variation in variations:
            if isinstance(variation, dict) and not variation.get("_id"):
                variation["_id"] = new_id()
        result["kind"] = flag_kind(variations)
    environments = result.get("environments")
    if isinstance(environments, dict):
        for config in environments.values():
            if isinstance(config, dict):
                _fill_environment(config, new_id)
    return result


def _fill_environment(config: dict[str, Any], new_id: IdFactory) -> None:
    for name in ("targets", "contextTargets", "rules", "prerequisites"):
        config.setdefault(name, [])
    for name in ("trackEvents", "trackEventsFallthrough", "archived"):
        config.setdefault(name, False)
    if isinstance(config["rules"], list):
        for rule in config["rules"]:
            if isinstance(rule, dict):
                if not rule.get("_id"):
                    rule["_id"] = new_id()
                rule.setdefault("trackEvents", False)
                fill_clause_ids(rule.get("clauses"), new_id)


def fill_clause_ids(clauses: Any, new_id: IdFactory) -> None:
    if isinstance(clauses, list):
        for clause in clauses:
            if isinstance(clause, dict):
                if not clause.get("_id"):
                    clause["_id"] = new_id()
                clause.setdefault("negate", False)


SUMMARY_OMITS = ("prerequisites", "targets", "contextTargets", "rules")
"""What LaunchDarkly's `summary` listing leaves out of each environment (`_summary` counts them)."""


def present_flag(
    document: Document,
    *,
    project_key: str,
    environment_keys: Iterable[str] | None = None,
    summary: bool = False,
) -> Document:
    """The flag as the REST API answers it: links, per-environment `_site` and `_summary`.

    `environment_keys` limits the environments shown (LaunchDarkly's `env` query parameter);
    `summary` leaves out each environment's prerequisites, targets and rules (its `summary`).
    Only what is returned is copied: a listing of 1,000 flags for one environment copied every
    environment's rules before (bench/ui.py).
    """
    key = document["key"]
    result: Document = {k: clone(v) for k, v in document.items() if k != "environments"}
    result["_links"] = {
        "self": {"href": f"/api/v2/flags/{project_key}/{key}", "type": "application/json"},
        "parent": {"href": f"/api/v2/flags/{project_key}", "type": "application/json"},
    }
    result.setdefault("customProperties", {})
    result.setdefault("experiments", {"baselineIdx": 0, "items": []})
    result.setdefault("archived", False)
    result.setdefault("deprecated", False)
    stored: dict[str, Any] = document.get("environments", {})
    wanted = None if environment_keys is None else set(environment_keys)
    variation_count = len(result.get("variations", []))
    environments: dict[str, Any] = {}
    for env_key, source in stored.items():
        if wanted is not None and env_key not in wanted:
            continue
        if summary:
            config = {k: clone(v) for k, v in source.items() if k not in SUMMARY_OMITS}
        else:
            config = clone(source)
        config["_site"] = {"href": f"/{project_key}/{env_key}/features/{key}", "type": "text/html"}
        config["_summary"] = summarize_environment(source, variation_count)
        config.setdefault("_environmentName", env_key)
        environments[env_key] = config
    if "environments" in document or wanted is not None:
        result["environments"] = environments
    return result


def summarize_environment(config: dict[str, Any], variation_count: int) -> dict[str, Any]:
    """LaunchDarkly's `_summary`: per variation, how many rules and targets serve it."""
    variations: dict[str, dict[str, Any]] = {
        str(index): {"rules": 0, "nullRules": 0, "targets": 0, "contextTargets": 0}
        for index in range(variation_count)
    }
    for rule in config.get("rules", []):
        entry = variations.get(str(rule.get("variation")))
        if entry is not None:
            entry["rules"] += 1
            if not rule.get("clauses"):
                entry["nullRules"] += 1
    for name in ("targets", "contextTargets"):
        for target in config.get(name, []):
            entry = variations.get(str(target.get("variation")))
            if entry is not None:
                entry[name] += len(target.get("values", []))
    fallthrough = variations.get(str((config.get("fallthrough") or {}).get("variation")))
    if fallthrough is not None:
        fallthrough["isFallthrough"] = True
    off = variations.get(str(config.get("offVariation")))
    if off is not None:
        off["isOff"] = True
    return {"variations": variations, "prerequisites": len(config.get("prerequisites", []))}


def same_variation_values(left: Sequence[Any], right: Sequence[Any]) -> bool:
    return len(left) == len(right) and all(map(json_equal, left, right))
