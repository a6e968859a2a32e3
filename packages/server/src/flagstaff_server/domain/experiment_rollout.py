"""What an iteration does to its flag, pure: starting it sets the rule's (or the fallthrough's)
rollout to the treatments' allocation with rollout kind `experiment` (so every SDK reports
`inExperiment`); traffic not allocated to a treatment goes to the not-in-experiment variation,
untracked. Stopping it serves again what was served before, or the winner's variation.

The seed comes from the iteration's id, so every iteration randomises anew (LaunchDarkly's
`canReshuffleTraffic`); the iteration keeps what the rule served before it started.
"""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.document import Document, clone
from flagstaff_server.domain.experiment import FALLTHROUGH, TOTAL_WEIGHT, weight_of
from flagstaff_server.errors import Conflict, ValidationError


def variation_index(flag: Document, variation_id: str, path: str) -> int:
    for index, variation in enumerate(flag.get("variations", [])):
        if variation.get("_id") == variation_id:
            return index
    raise ValidationError(f"the flag has no variation {variation_id!r}", path=path)


def target_of(flag: Document, environment: str, rule_id: str) -> dict[str, Any]:
    """The fallthrough or the rule (by `_id`) in `flag`'s environment: a dict to edit in place."""
    config = flag["environments"][environment]
    if rule_id == FALLTHROUGH:
        target: dict[str, Any] = config.setdefault("fallthrough", {})
        return target
    for rule in config.get("rules", []):
        if isinstance(rule, dict) and rule.get("_id") == rule_id:
            found: dict[str, Any] = rule
            return found
    raise ValidationError(
        f"the flag has no rule {rule_id!r} in this environment (or use 'fallthrough')",
        path="/ruleId",
    )


def served(target: dict[str, Any]) -> dict[str, Any]:
    """What a rule or fallthrough serves: {variation} or {rollout}."""
    if target.get("rollout") is not None:
        return {"rollout": clone(target["rollout"])}
    return {"variation": target.get("variation")}


def serve(target: dict[str, Any], what: dict[str, Any]) -> None:
    target.pop("variation", None)
    target.pop("rollout", None)
    target.update(clone(what))


def seed_of(iteration_id: str) -> int:
    return int(iteration_id[:7], 16)


def experiment_rollout(flag: Document, iteration: Document) -> dict[str, Any]:
    """The rollout an iteration sets: treatments by allocation, the rest untracked."""
    [(_flag_key, ref)] = iteration["flags"].items()
    baseline = next(t for t in iteration["treatments"] if t["baseline"])
    outside = ref.get("notInExperimentVariationId", baseline["_id"])
    weights: dict[int, int] = {}
    for treatment in iteration["treatments"]:
        index = variation_index(flag, treatment["_id"], "/treatments")
        weights[index] = weight_of(treatment["allocationPercent"], "/treatments")
    rest = TOTAL_WEIGHT - sum(weights.values())
    variations: list[dict[str, Any]] = [
        {"variation": index, "weight": weight} for index, weight in weights.items()
    ]
    if rest:
        variations.append(
            {
                "variation": variation_index(flag, outside, "/notInExperimentVariationId"),
                "weight": rest,
                "_untracked": True,
            }
        )
    return {
        "kind": "experiment",
        "contextKind": iteration["randomizationUnit"],
        "seed": seed_of(iteration["_id"]),
        "variations": variations,
    }


def started_flag(flag: Document, environment: str, iteration: Document) -> tuple[Document, Any]:
    """The flag with the iteration's rollout on its rule, and what the rule served before."""
    config = flag.get("environments", {}).get(environment)
    if config is None:
        raise ValidationError("the flag is not configured in this environment", path="/flags")
    if not config.get("on", False):
        raise Conflict("turn the flag on before starting an iteration")
    if flag.get("archived"):
        raise Conflict("the flag is archived")
    if not any(weight_of(t["allocationPercent"], "/") > 0 for t in iteration["treatments"]):
        raise Conflict("no treatment has an allocation above 0")
    edited = clone(flag)
    [(_, ref)] = iteration["flags"].items()
    target = target_of(edited, environment, ref["ruleId"])
    before = served(target)
    rollout = before.get("rollout")
    if isinstance(rollout, dict) and rollout.get("kind") == "experiment":
        raise Conflict("the rule already runs an experiment")
    serve(target, {"rollout": experiment_rollout(edited, iteration)})
    return edited, before


def stopped_flag(
    flag: Document, environment: str, iteration: Document, winner: str | None
) -> Document | None:
    """The flag serving what it did before the iteration (or the winner's variation); None when
    its rule no longer carries this iteration's rollout (someone changed it: left alone)."""
    edited: Document = clone(flag)
    [(_, ref)] = iteration["flags"].items()
    try:
        target = target_of(edited, environment, ref["ruleId"])
    except ValidationError:
        return None
    rollout = target.get("rollout")
    if not (
        isinstance(rollout, dict)
        and rollout.get("kind") == "experiment"
        and rollout.get("seed") == seed_of(iteration["_id"])
    ):
        return None
    if winner is not None:
        serve(target, {"variation": variation_index(edited, winner, "/winningTreatmentId")})
    else:
        serve(target, iteration["servedBefore"])
    return edited
