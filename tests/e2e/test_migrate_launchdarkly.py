"""`flagstaff migrate launchdarkly` from one Flagstaff (speaking LaunchDarkly's REST API v2) into
another: a dry run writes nothing, the migration keeps keys and salts so the official LaunchDarkly
SDK on both sides gives 10,000 random contexts the same value for every flag, and a re-run
changes nothing."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from flagstaff_server.cli import main
from flagstaff_server.settings import Settings
from ldclient import Context
from support.deadlines import wait_until
from support.in_process import serve_flagstaff
from support.management import ok, sdk_client

TOKEN = "migration-admin-token"
ENVIRONMENTS = ("production", "staging")
CONTEXTS = {"production": 10_000, "staging": 2_000}


def rollout(weights: list[int], **extra: Any) -> dict[str, Any]:
    return {"variations": [{"variation": i, "weight": w} for i, w in enumerate(weights)], **extra}


def clause(attribute: str, op: str, values: list[Any], **extra: Any) -> dict[str, Any]:
    return {"attribute": attribute, "op": op, "values": values, "negate": False, **extra}


def targeting(environment: str) -> dict[str, Any]:
    """SDK data for one environment: rollouts keyed by salts, rules, targets, segments,
    prerequisites and a second context kind, different in each environment."""
    shift = 0 if environment == "production" else 17_000
    flags = {
        "checkout": {
            "key": "checkout",
            "on": True,
            "variations": ["old", "new", "beta"],
            "salt": f"checkout-salt-{environment}",
            "offVariation": 0,
            "fallthrough": {"rollout": rollout([30_000 + shift, 50_000 - shift, 20_000])},
            "rules": [
                {"id": "vip-rule", "variation": 2, "clauses": [clause("", "segmentMatch", ["vip"])]}
            ],
            "targets": [{"variation": 1, "values": ["user-7", "user-11"]}],
        },
        "banner": {
            "key": "banner",
            "on": True,
            "variations": ["red", "blue"],
            "salt": "banner-salt",
            "offVariation": 0,
            "fallthrough": {"variation": 0},
            "rules": [
                {
                    "id": "by-country",
                    "rollout": rollout([40_000, 60_000], bucketBy="country"),
                    "clauses": [clause("country", "in", ["de", "fr", "nl"])],
                },
                {
                    "id": "by-org",
                    "rollout": rollout([25_000, 75_000], contextKind="org"),
                    "clauses": [clause("key", "startsWith", ["org-"], contextKind="org")],
                },
            ],
            "contextTargets": [{"contextKind": "org", "variation": 1, "values": ["org-3"]}],
        },
        "limits": {
            "key": "limits",
            "on": environment == "production",
            "variations": [10, 100, 1000],
            "salt": "",
            "offVariation": 1,
            "fallthrough": {"rollout": rollout([33_333, 33_333, 33_334])},
            "prerequisites": [{"key": "checkout", "variation": 1}],
        },
        "dark-mode": {
            "key": "dark-mode",
            "on": True,
            "variations": [True, False],
            "salt": "dm",
            "offVariation": 1,
            "fallthrough": {"rollout": rollout([50_000, 50_000], kind="experiment", seed=61)},
            "rules": [
                {"id": "age", "variation": 0, "clauses": [clause("age", "greaterThan", [60])]}
            ],
        },
    }
    segments = {
        "vip": {
            "key": "vip",
            "salt": f"vip-salt-{environment}",
            "included": ["user-3"],
            "rules": [
                {"id": "gold", "weight": 50_000, "clauses": [clause("plan", "in", ["gold"])]}
            ],
        }
    }
    return {"flags": flags, "segments": segments}


def make_source(api: httpx.Client) -> None:
    environments = [{"key": e, "name": e.title(), "color": "417505"} for e in ENVIRONMENTS]
    ok(
        api.post(
            "/api/v2/projects",
            json={"key": "shop", "name": "Shop", "tags": ["web"], "environments": environments},
        )
    )
    for key, variations in (
        ("checkout", ["old", "new", "beta"]),
        ("banner", ["red", "blue"]),
        ("limits", [10, 100, 1000]),
        ("dark-mode", [True, False]),
    ):
        body = {
            "key": key,
            "name": f"The {key}",
            "tags": ["migrated"],
            "variations": [{"value": v, "name": f"v{v}"} for v in variations],
        }
        ok(api.post("/api/v2/flags/shop", json=body))
    ok(api.post("/api/v2/flags/shop", json={"key": "retired", "name": "Retired"}))
    semantic = {"Content-Type": "application/json; domain-model=launchdarkly.semanticpatch"}
    ok(
        api.patch(
            "/api/v2/flags/shop/retired",
            headers=semantic,
            content=json.dumps({"instructions": [{"kind": "archiveFlag"}]}),
        )
    )
    for environment in ENVIRONMENTS:
        ok(api.post(f"/api/v2/segments/shop/{environment}", json={"key": "vip", "name": "VIPs"}))
        ok(
            api.post(
                f"/api/v2/projects/shop/environments/{environment}/import",
                json=targeting(environment),
            )
        )


def random_context(rng: random.Random) -> Context:
    user = (
        Context.builder(f"user-{rng.randrange(50_000)}")
        .set("country", rng.choice(["de", "fr", "nl", "us", "jp"]))
        .set("plan", rng.choice(["gold", "silver", "free"]))
        .set("age", rng.randrange(15, 90))
        .build()
    )
    if rng.random() < 0.3:
        return Context.create_multi(user, Context.create(f"org-{rng.randrange(40)}", "org"))
    return user


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[str, str]]:
    with ExitStack() as stack:
        urls = []
        for name in ("source", "target"):
            settings = Settings(data_dir=tmp_path / name, admin_token=TOKEN, seed_demo=False)
            urls.append(stack.enter_context(serve_flagstaff(settings)).url)
        yield urls[0], urls[1]


def migrate(source: str, target: str, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    capsys.readouterr()
    argv = [
        "migrate",
        "launchdarkly",
        "--source-url",
        source,
        "--source-token",
        TOKEN,
        "--url",
        target,
        "--token",
        TOKEN,
        *extra,
    ]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def sdk_keys(api: httpx.Client) -> dict[str, str]:
    items = ok(api.get("/api/v2/projects/shop/environments"))["items"]
    return {item["key"]: item["apiKey"] for item in items}


def served(url: str, sdk_key: str) -> dict[str, Any]:
    return httpx.get(f"{url}/sdk/latest-all", headers={"Authorization": sdk_key}, timeout=10).json()


def test_migration_keeps_every_evaluation_and_a_rerun_changes_nothing(
    servers: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    source_url, target_url = servers
    with (
        httpx.Client(base_url=source_url, headers={"Authorization": TOKEN}, timeout=30) as source,
        httpx.Client(base_url=target_url, headers={"Authorization": TOKEN}, timeout=30) as target,
    ):
        make_source(source)
        dry = json.loads(migrate(source_url, target_url, capsys, "--dry-run", "-o", "json"))
        assert dry["dryRun"] is True
        assert dry["changes"] > 0
        assert target.get("/api/v2/projects/shop").status_code == 404

        first = migrate(source_url, target_url, capsys)
        assert "create project shop" in first
        assert "write targeting in shop/production: 5 flags, 1 segments" in first

        again = json.loads(migrate(source_url, target_url, capsys, "-o", "json"))
        assert again["changes"] == 0, again["log"]
        assert again["unchanged"] == 12  # 5 flags and 1 segment in each environment
        assert "nothing to change" in migrate(source_url, target_url, capsys)

        flag = ok(target.get("/api/v2/flags/shop/checkout"))
        assert flag["name"] == "The checkout"
        assert [v["name"] for v in flag["variations"]] == ["vold", "vnew", "vbeta"]
        assert ok(target.get("/api/v2/flags/shop/retired"))["archived"] is True
        assert ok(target.get("/api/v2/segments/shop/production/vip"))["name"] == "VIPs"
        source_keys, target_keys = sdk_keys(source), sdk_keys(target)

    for environment in ENVIRONMENTS:
        for name in ("flags", "segments"):
            wait_for_salts(source_url, target_url, source_keys, target_keys, environment, name)
        compare_with_the_sdk(source_url, target_url, source_keys, target_keys, environment)


def salts(url: str, sdk_key: str, name: str) -> dict[str, str]:
    return {key: item["salt"] for key, item in served(url, sdk_key)[name].items()}


def wait_for_salts(
    source_url: str,
    target_url: str,
    source_keys: dict[str, str],
    target_keys: dict[str, str],
    environment: str,
    name: str,
) -> None:
    """Until the target's delivery serves the source's flags or segments with the same salts."""
    wanted = salts(source_url, source_keys[environment], name)
    assert wanted
    wait_until(
        lambda: salts(target_url, target_keys[environment], name) == wanted,
        timeout=30,
        what=f"the target's delivery serving the migrated {name} of {environment}",
    )


def compare_with_the_sdk(
    source_url: str,
    target_url: str,
    source_keys: dict[str, str],
    target_keys: dict[str, str],
    environment: str,
) -> None:
    rng = random.Random(f"migration-{environment}")
    before = sdk_client(source_url, source_keys[environment])
    after = sdk_client(target_url, target_keys[environment])
    try:
        assert before.is_initialized()
        assert after.is_initialized()
        seen: dict[str, set[Any]] = {}
        for _ in range(CONTEXTS[environment]):
            context = random_context(rng)
            expected = before.all_flags_state(context).to_values_map()
            assert set(expected) == {"checkout", "banner", "limits", "dark-mode", "retired"}
            assert after.all_flags_state(context).to_values_map() == expected, context
            for key, value in expected.items():
                seen.setdefault(key, set()).add(json.dumps(value))
        # the rollouts really split the population, so salts and bucketing were exercised
        assert len(seen["checkout"]) == 3
        assert len(seen["banner"]) == 2
        assert len(seen["dark-mode"]) == 2
    finally:
        before.close()
        after.close()
