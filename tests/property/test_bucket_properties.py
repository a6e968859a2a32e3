"""Properties of SHA-1 bucketing: range and stability, monotone rollouts, and split proportions.

The bucket function is checked directly and through `evaluate`, so a flag's rollout table is
covered as well as the hash.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from typing import Any

from flagstaff_core import Context, decode_data, evaluate
from flagstaff_core.bucketing import bucket, bucket_prefix
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import note_inputs

seeds = st.none() | st.integers(-(2**63), 2**63 - 1)
bucketable = st.text(max_size=40) | st.integers(-(2**70), 2**70)


def reference_bucket(flag_key: str, salt: str, seed: int | None, value: str | int) -> float:
    """The protocol reference's formula (§3.8), written out independently of the core."""
    prefix = str(seed) if seed is not None else f"{flag_key}.{salt}"
    digest = hashlib.sha1(f"{prefix}.{value}".encode()).hexdigest()
    return int(digest[:15], 16) / float(0xFFFFFFFFFFFFFFF)


@settings(max_examples=300, deadline=None)
@given(flag_key=st.text(max_size=20), salt=st.text(max_size=20), seed=seeds, value=bucketable)
def test_bucket_is_in_unit_interval_stable_and_follows_the_reference_formula(
    flag_key: str, salt: str, seed: int | None, value: str | int
) -> None:
    note_inputs(flag_key=flag_key, salt=salt, seed=seed, value=value)
    first = bucket(bucket_prefix(flag_key, salt, seed), value)
    again = bucket(bucket_prefix(flag_key, salt, seed), value)
    assert 0.0 <= first < 1.0
    assert first == again
    assert first == reference_bucket(flag_key, salt, seed, value)


@settings(max_examples=50, deadline=None)
@given(value=st.floats(allow_nan=False) | st.booleans() | st.none() | st.lists(st.integers()))
def test_values_that_are_neither_strings_nor_integers_bucket_to_zero(value: object) -> None:
    note_inputs(value=value)
    assert bucket(bucket_prefix("flag", "salt", None), value) == 0.0


def two_way_rollout(weight: int, salt: str, seed: int | None, bucket_by: str | None) -> Any:
    """A data set whose only flag serves variation 0 to `weight`/100000 of contexts, else 1."""
    rollout: dict[str, Any] = {
        "variations": [
            {"variation": 0, "weight": weight},
            {"variation": 1, "weight": 100000 - weight},
        ]
    }
    if seed is not None:
        rollout["seed"] = seed
    if bucket_by is not None:
        rollout["bucketBy"] = bucket_by
    flag = {
        "key": "split",
        "version": 1,
        "on": True,
        "variations": ["in", "out"],
        "offVariation": 1,
        "fallthrough": {"rollout": rollout},
        "salt": salt,
    }
    return decode_data({"flags": {"split": flag}, "segments": {}})


@settings(max_examples=150, deadline=None)
@given(
    weights=st.tuples(st.integers(0, 100000), st.integers(0, 100000)).map(sorted),
    salt=st.text(max_size=10),
    seed=seeds,
    bucket_by=st.sampled_from((None, "key", "email")),
    keys=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=40),
)
def test_raising_a_rollout_weight_only_adds_contexts_to_that_variation(
    weights: list[int], salt: str, seed: int | None, bucket_by: str | None, keys: list[str]
) -> None:
    note_inputs(weights=weights, salt=salt, seed=seed, bucket_by=bucket_by, keys=keys)
    low, high = weights
    smaller = two_way_rollout(low, salt, seed, bucket_by)
    larger = two_way_rollout(high, salt, seed, bucket_by)
    for key in keys:
        context = Context(kind="user", key=key, attributes={"email": f"{key}@example.com"})
        before = evaluate(smaller.flags["split"], context, smaller).detail.variation_index
        after = evaluate(larger.flags["split"], context, larger).detail.variation_index
        if before == 0:
            assert after == 0, f"{key!r} left variation 0 when its weight grew {low} -> {high}"


def test_split_over_100000_random_keys_is_within_one_percent_of_the_weights() -> None:
    weights = (10000, 25000, 65000)
    randomness = random.Random(20261129)
    keys = [f"{randomness.getrandbits(64):016x}" for _ in range(100000)]
    prefix = bucket_prefix("checkout-redesign", "b1f3e9", None)
    thresholds = [sum(weights[: i + 1]) / 100000 for i in range(len(weights))]
    counts: Counter[int] = Counter()
    for key in keys:
        point = bucket(prefix, key)
        counts[next(i for i, limit in enumerate(thresholds) if point < limit)] += 1
    for index, weight in enumerate(weights):
        assert abs(counts[index] / len(keys) - weight / 100000) < 0.01, (index, counts)
