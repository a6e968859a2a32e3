"""LaunchDarkly's policy language, pure: resource specifiers parsed and matched against resources,
and policy statements checked and evaluated by LaunchDarkly's documented rules. Webhook and chat
filters use it now, custom roles later. No I/O, no store, no clock.

A specifier names resources parent to child, `type/name;tag,tag:type/name...`:
`proj/*:env/production:flag/*`, `proj/*;mobile`, `proj/*:env/*;{critical:true}:flag/*`.
- A name is a glob: `*` stands for any run of characters, nothing else is special.
- After `;` come tags, every one of which the resource must carry (a tag may be a glob too:
  `env/*;qa_*`); `{key:value}` among them is a property selector (`{critical:true}`).
- `${roleAttribute/name}` inside a name is replaced by each of that attribute's values.
- A specifier names resources of exactly its own type path: `proj/*` is every project, not
  the flags inside them (`proj/*:env/*:flag/*`).

A statement applies to an action on a resource when the action is among `actions` (or not among
`notActions`) and the resource matches one of `resources` (or none of `notResources`). Within one
policy an applying `deny` wins over any `allow`, and what no statement allows is denied; statement
order does not matter. Across several policies (a member's roles) the most permissive one wins.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from flagstaff_server.domain.policy_catalog import (
    LAUNCHDARKLY_ACTIONS,
    NAMELESS_TYPES,
    RESOURCE_PATHS,
)
from flagstaff_server.errors import ValidationError

Effect = Literal["allow", "deny"]
PropertyValue = str | bool
RoleAttributes = Mapping[str, Sequence[str]]

MAX_STATEMENTS = 100
MAX_LIST_ITEMS = 256
"""Actions or specifiers in one statement."""
MAX_SPECIFIER_LENGTH = 1024
MAX_ACTION_LENGTH = 128

STATEMENT_FIELDS = ("effect", "actions", "notActions", "resources", "notResources")
TYPE_PATTERN = re.compile(r"[a-z][a-z-]*")
ROLE_ATTRIBUTE = re.compile(r"\$\{roleAttribute/([A-Za-z0-9_.-]+)\}")
NAME_PATTERN = re.compile(r"[^\s:;,{}$/]+")
"""A name once its role attribute references are taken out (may be empty between them)."""
TAG_PATTERN = re.compile(r"[A-Za-z0-9._*-]+")
PROPERTY_PATTERN = re.compile(r"\{([A-Za-z][A-Za-z0-9_]*):([A-Za-z0-9._-]+)\}")
ACTION_PATTERN = re.compile(r"[A-Za-z0-9*]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Selector:
    """One part of a specifier: resources of `type` whose name matches the glob `name`, carrying
    every tag in `tags` (globs too) and the `properties` given."""

    type: str
    name: str
    tags: tuple[str, ...] = ()
    properties: tuple[tuple[str, PropertyValue], ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceSpecifier:
    text: str
    """As written, for the statement's JSON."""
    selectors: tuple[Selector, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourcePart:
    """One level of a concrete resource: `env/production` with its tags and properties."""

    type: str
    name: str
    tags: frozenset[str] = frozenset()
    properties: Mapping[str, PropertyValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Resource:
    """A concrete resource, parent to child: `proj/shop:env/production:flag/checkout`."""

    parts: tuple[ResourcePart, ...]

    def __str__(self) -> str:
        # `acct` is written bare, as LaunchDarkly writes it (there is one account)
        return ":".join(
            part.type if part.type in NAMELESS_TYPES else f"{part.type}/{part.name}"
            for part in self.parts
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Statement:
    """Exactly one of `actions`/`not_actions` and one of `resources`/`not_resources` is set."""

    effect: Effect
    actions: tuple[str, ...] | None = None
    not_actions: tuple[str, ...] | None = None
    resources: tuple[ResourceSpecifier, ...] | None = None
    not_resources: tuple[ResourceSpecifier, ...] | None = None


# parsing ---------------------------------------------------------------------------------------


def split_outside_braces(text: str, separator: str, *, path: str) -> list[str]:
    """`text` cut at each `separator` outside `{...}` (property selectors and role attribute
    references hold `:` and `/`)."""
    pieces, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                raise ValidationError(f"unbalanced '}}' in {text!r}", path=path)
        elif char == separator and depth == 0:
            pieces.append(text[start:index])
            start = index + 1
    if depth != 0:
        raise ValidationError(f"unbalanced '{{' in {text!r}", path=path)
    pieces.append(text[start:])
    return pieces


def parse_specifier(text: Any, *, path: str) -> ResourceSpecifier:
    """A resource specifier, or a `ValidationError` at `path` saying what is wrong with it."""
    if not isinstance(text, str) or not text:
        raise ValidationError("a resource specifier is a non-empty string", path=path)
    if len(text) > MAX_SPECIFIER_LENGTH:
        raise ValidationError(
            f"a resource specifier has at most {MAX_SPECIFIER_LENGTH} characters", path=path
        )
    selectors = tuple(
        parse_selector(part, path=path) for part in split_outside_braces(text, ":", path=path)
    )
    types = tuple(selector.type for selector in selectors)
    if types not in RESOURCE_PATHS:
        raise ValidationError(
            f"{text!r} names no known resource type ({':'.join(types)}); for example "
            "proj/*, proj/*:env/*, proj/*:env/*:flag/*, proj/*:env/*:segment/*, webhook/*",
            path=path,
        )
    return ResourceSpecifier(text, selectors)


def parse_selector(text: str, *, path: str) -> Selector:
    head, *rest = split_outside_braces(text, ";", path=path)
    if len(rest) > 1:
        raise ValidationError(f"more than one ';' in {text!r}", path=path)
    kind, slash, name = head.partition("/")
    if not TYPE_PATTERN.fullmatch(kind):
        raise ValidationError(f"{text!r} has no resource type before '/'", path=path)
    if not slash:
        if kind not in NAMELESS_TYPES:
            raise ValidationError(f"{text!r} needs a name: {kind}/* or {kind}/<key>", path=path)
        name = "*"
    elif not is_valid_name(name):
        raise ValidationError(
            f"{text!r}: a name is a key, a glob with '*' or a ${{roleAttribute/...}} reference",
            path=path,
        )
    tags: list[str] = []
    properties: list[tuple[str, PropertyValue]] = []
    for item in split_outside_braces(rest[0], ",", path=path) if rest else []:
        found = PROPERTY_PATTERN.fullmatch(item)
        if found:
            value = found.group(2)
            properties.append((found.group(1), {"true": True, "false": False}.get(value, value)))
        elif TAG_PATTERN.fullmatch(item):
            tags.append(item)
        else:
            raise ValidationError(
                f"{text!r}: after ';' come tags (letters, digits, '.', '_', '-', '*') or "
                "property selectors such as {critical:true}, separated by ','",
                path=path,
            )
    return Selector(type=kind, name=name, tags=tuple(tags), properties=tuple(properties))


def is_valid_name(name: str) -> bool:
    if not name:
        return False
    # split() with the group keeps each attribute's name at the odd places
    remainder = [piece for piece in ROLE_ATTRIBUTE.split(name)[::2] if piece]
    return all(NAME_PATTERN.fullmatch(piece) for piece in remainder)


def parse_resource(text: str) -> Resource:
    """A concrete resource from its text (`proj/p:env/e:flag/k`), without tags or properties;
    the caller adds what it knows of them."""
    parts = []
    for piece in text.split(":"):
        kind, _, name = piece.partition("/")
        parts.append(ResourcePart(type=kind, name=name or "*"))
    return Resource(tuple(parts))


def parse_statements(
    value: Any,
    *,
    path: str = "/statements",
    actions: Collection[str] | None = LAUNCHDARKLY_ACTIONS,
) -> tuple[Statement, ...]:
    """A policy (a list of statements; None is an empty one), checked: each field's problem is a
    `ValidationError` at its JSON pointer. `actions` are the action names a statement may use
    (None: any name, for a policy that was checked when it was stored)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValidationError("statements must be an array of policy statements", path=path)
    if len(value) > MAX_STATEMENTS:
        raise ValidationError(f"at most {MAX_STATEMENTS} statements", path=path)
    return tuple(
        parse_statement(item, path=f"{path}/{index}", actions=actions)
        for index, item in enumerate(value)
    )


def parse_statement(value: Any, *, path: str, actions: Collection[str] | None) -> Statement:
    if not isinstance(value, dict):
        raise ValidationError(
            "a statement is an object {effect, actions | notActions, resources | notResources}",
            path=path,
        )
    for name in value:
        if name not in STATEMENT_FIELDS:
            raise ValidationError(f"unknown statement field {name!r}", path=f"{path}/{name}")
    effect = value.get("effect")
    if effect not in ("allow", "deny"):
        raise ValidationError('effect must be "allow" or "deny"', path=f"{path}/effect")
    positive, negated = either(value, "actions", "notActions", path=path)
    action_list = [check_action(item, where, actions) for item, where in positive or negated]
    positive_r, negated_r = either(value, "resources", "notResources", path=path)
    specifiers = tuple(parse_specifier(item, path=where) for item, where in positive_r or negated_r)
    return Statement(
        effect=effect,
        actions=tuple(action_list) if positive else None,
        not_actions=tuple(action_list) if negated else None,
        resources=specifiers if positive_r else None,
        not_resources=specifiers if negated_r else None,
    )


Listed = list[tuple[Any, str]]
"""A list field's items, each with its JSON pointer."""


def either(value: dict[str, Any], name: str, negated: str, *, path: str) -> tuple[Listed, Listed]:
    """The items of `name` or of `negated`: exactly one of them lists something (the other may
    be absent or empty, as LaunchDarkly accepts)."""
    found = {field_name: listed(value, field_name, path=path) for field_name in (name, negated)}
    if found[name] and found[negated]:
        raise ValidationError(f"use either {name} or {negated}, not both", path=f"{path}/{negated}")
    if not found[name] and not found[negated]:
        raise ValidationError(f"a statement needs {name} or {negated}", path=f"{path}/{name}")
    return found[name], found[negated]


def listed(value: dict[str, Any], name: str, *, path: str) -> Listed:
    items = value.get(name)
    where = f"{path}/{name}"
    if items is None:
        return []
    if not isinstance(items, list):
        raise ValidationError(f"{name} must be an array of strings", path=where)
    if len(items) > MAX_LIST_ITEMS:
        raise ValidationError(f"{name} holds at most {MAX_LIST_ITEMS} items", path=where)
    return [(item, f"{where}/{index}") for index, item in enumerate(items)]


def check_action(value: Any, path: str, known: Collection[str] | None) -> str:
    """A known action, or a glob (`*`, `update*`) matching at least one."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ACTION_LENGTH:
        raise ValidationError("an action is a non-empty string", path=path)
    if not ACTION_PATTERN.fullmatch(value):
        raise ValidationError(f"{value!r} is not an action name", path=path)
    if known is None:
        return value
    if "*" in value:
        if not any(glob(value).fullmatch(action) for action in known):
            raise ValidationError(f"the action pattern {value!r} matches no action", path=path)
    elif value not in known:
        raise ValidationError(f"unknown action {value!r}", path=path)
    return value


# JSON ------------------------------------------------------------------------------------------


def statement_json(statement: Statement) -> dict[str, Any]:
    """LaunchDarkly's `Statement`, with the texts as they were given."""
    body: dict[str, Any] = {"effect": statement.effect}
    if statement.resources is not None:
        body["resources"] = [spec.text for spec in statement.resources]
    if statement.not_resources is not None:
        body["notResources"] = [spec.text for spec in statement.not_resources]
    if statement.actions is not None:
        body["actions"] = list(statement.actions)
    if statement.not_actions is not None:
        body["notActions"] = list(statement.not_actions)
    return body


# matching --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def glob(pattern: str) -> re.Pattern[str]:
    """`*` is any run of characters (none included); every other character is itself."""
    return re.compile(".*".join(re.escape(piece) for piece in pattern.split("*")), re.DOTALL)


def name_matches(pattern: str, name: str, attributes: RoleAttributes) -> bool:
    if "${" not in pattern:
        return glob(pattern).fullmatch(name) is not None
    return any(glob(candidate).fullmatch(name) for candidate in substituted(pattern, attributes))


def substituted(pattern: str, attributes: RoleAttributes) -> list[str]:
    """`pattern` with each role attribute reference replaced by each of its values (none when an
    attribute has no value: the specifier then names nothing)."""
    found = ROLE_ATTRIBUTE.search(pattern)
    if found is None:
        return [pattern]
    head, tail = pattern[: found.start()], pattern[found.end() :]
    return [
        f"{head}{value.replace('*', '')}{rest}"
        for value in attributes.get(found.group(1), ())
        for rest in substituted(tail, attributes)
    ]


def selector_matches(selector: Selector, part: ResourcePart, attributes: RoleAttributes) -> bool:
    if selector.type != part.type or not name_matches(selector.name, part.name, attributes):
        return False
    for tag in selector.tags:
        if not any(glob(tag).fullmatch(carried) for carried in part.tags):
            return False
    return all(part.properties.get(key) == value for key, value in selector.properties)


def specifier_matches(
    specifier: ResourceSpecifier, resource: Resource, attributes: RoleAttributes | None = None
) -> bool:
    """Whether `resource` is one of the resources `specifier` names."""
    if len(specifier.selectors) != len(resource.parts):
        return False
    given = attributes or {}
    return all(
        selector_matches(selector, part, given)
        for selector, part in zip(specifier.selectors, resource.parts, strict=True)
    )


def action_matches(patterns: Iterable[str], action: str) -> bool:
    return any(glob(pattern).fullmatch(action) for pattern in patterns)


def statement_applies(
    statement: Statement,
    action: str,
    resource: Resource,
    attributes: RoleAttributes | None = None,
) -> bool:
    if statement.actions is not None:
        acts = action_matches(statement.actions, action)
    else:
        acts = not action_matches(statement.not_actions or (), action)
    if not acts:
        return False
    if statement.resources is not None:
        return any(specifier_matches(s, resource, attributes) for s in statement.resources)
    return not any(
        specifier_matches(s, resource, attributes) for s in statement.not_resources or ()
    )


def allows(
    statements: Iterable[Statement],
    action: str,
    resource: Resource,
    attributes: RoleAttributes | None = None,
) -> bool:
    """One policy's answer: some statement allows, and none denies."""
    allowed = False
    for statement in statements:
        if statement_applies(statement, action, resource, attributes):
            if statement.effect == "deny":
                return False
            allowed = True
    return allowed


def allows_any(
    statements: Sequence[Statement],
    accesses: Iterable[tuple[str, Resource]],
    attributes: RoleAttributes | None = None,
) -> bool:
    """Whether the policy allows at least one of the (action, resource) pairs: a change that
    touches production and test passes a filter for production flags."""
    return any(allows(statements, action, resource, attributes) for action, resource in accesses)


def permitted(
    policies: Iterable[Sequence[Statement]],
    action: str,
    resource: Resource,
    attributes: RoleAttributes | None = None,
) -> bool:
    """Several policies together (a member's roles): the most permissive wins, so one that
    allows is enough, whatever another denies."""
    return any(allows(policy, action, resource, attributes) for policy in policies)
