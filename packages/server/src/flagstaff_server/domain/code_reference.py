"""Code references in LaunchDarkly's REST shapes: the checks of a repository (`RepositoryPost`),
a branch with its references (`BranchRep`: references -> hunks) and extinction events, each
failure a `ValidationError` at the JSON pointer of the value. Pure: no store, no clock."""

from __future__ import annotations

from typing import Any

from flagstaff_server.domain.document import KEY_MAX_LENGTH, NAME_MAX_LENGTH, is_valid_key
from flagstaff_server.errors import ValidationError

JsonObject = dict[str, Any]

REPOSITORY_TYPES = ("bitbucket", "custom", "github", "gitlab")
REPOSITORY_FIELDS = (
    "name",
    "type",
    "sourceLink",
    "commitUrlTemplate",
    "hunkUrlTemplate",
    "defaultBranch",
    "enabled",
)
URL_MAX_LENGTH = 2048
PATH_MAX_LENGTH = 4096
LINES_MAX_LENGTH = 64 * 1024
MESSAGE_MAX_LENGTH = 4096


def _text(value: Any, path: str, *, max_length: int, blank: bool = True) -> str:
    if not isinstance(value, str) or len(value) > max_length or (not blank and not value):
        what = "a string" if blank else "a non-empty string"
        raise ValidationError(f"expected {what} of at most {max_length} characters", path=path)
    return value


def _whole(value: Any, path: str, *, least: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValidationError(f"expected a whole number of at least {least}", path=path)
    return value


def _object(value: Any, path: str) -> JsonObject:
    if not isinstance(value, dict):
        raise ValidationError("expected an object", path=path or "/")
    return value


def _no_unknown(body: JsonObject, known: tuple[str, ...], at: str) -> None:
    for name in body:
        if name not in known:
            raise ValidationError(f"unknown field {name!r}", path=f"{at}/{name}")


def check_repository_name(value: Any, path: str = "/name") -> str:
    if not is_valid_key(value):
        raise ValidationError(
            f"a repository name is 1 to {KEY_MAX_LENGTH} letters, digits, '.', '_' or '-'",
            path=path,
        )
    name: str = value
    return name


def check_branch_name(value: Any, path: str) -> str:
    return _text(value, path, max_length=NAME_MAX_LENGTH, blank=False)


def check_repository(body: Any) -> JsonObject:
    """A `RepositoryPost` (or a repository after a patch, its derived fields removed): every
    field of the stored document, defaults filled in."""
    body = _object(body, "")
    _no_unknown(body, REPOSITORY_FIELDS, "")
    if "name" not in body:
        raise ValidationError("'name' is required", path="/name")
    kind = body.get("type", "custom")
    if kind not in REPOSITORY_TYPES:
        raise ValidationError(f"type is one of {', '.join(REPOSITORY_TYPES)}", path="/type")
    enabled = body.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ValidationError("expected true or false", path="/enabled")
    doc: JsonObject = {"name": check_repository_name(body["name"]), "type": kind}
    for name in ("sourceLink", "commitUrlTemplate", "hunkUrlTemplate"):
        doc[name] = _text(body.get(name, ""), f"/{name}", max_length=URL_MAX_LENGTH)
    doc["defaultBranch"] = check_branch_name(body.get("defaultBranch", "main"), "/defaultBranch")
    doc["enabled"] = enabled
    return doc


def check_hunk(value: Any, at: str) -> JsonObject:
    hunk = _object(value, at)
    _no_unknown(
        hunk,
        ("startingLineNumber", "lines", "projKey", "flagKey", "aliases", "contentHash"),
        at,
    )
    for required in ("startingLineNumber", "projKey", "flagKey"):
        if required not in hunk:
            raise ValidationError(f"'{required}' is required", path=f"{at}/{required}")
    aliases = hunk.get("aliases", [])
    if not isinstance(aliases, list):
        raise ValidationError("aliases must be an array of strings", path=f"{at}/aliases")
    for index, alias in enumerate(aliases):
        _text(alias, f"{at}/aliases/{index}", max_length=NAME_MAX_LENGTH, blank=False)
    return {
        "startingLineNumber": _whole(
            hunk["startingLineNumber"], f"{at}/startingLineNumber", least=1
        ),
        "lines": _text(hunk.get("lines", ""), f"{at}/lines", max_length=LINES_MAX_LENGTH),
        "projKey": _key(hunk["projKey"], f"{at}/projKey"),
        "flagKey": _key(hunk["flagKey"], f"{at}/flagKey"),
        "aliases": list(aliases),
        "contentHash": _text(hunk.get("contentHash", ""), f"{at}/contentHash", max_length=128),
    }


def _key(value: Any, path: str) -> str:
    if not is_valid_key(value):
        raise ValidationError(
            f"a key is 1 to {KEY_MAX_LENGTH} letters, digits, '.', '_' or '-'", path=path
        )
    key: str = value
    return key


def check_reference(value: Any, at: str) -> JsonObject:
    reference = _object(value, at)
    _no_unknown(reference, ("path", "hint", "hunks"), at)
    if "path" not in reference:
        raise ValidationError("'path' is required", path=f"{at}/path")
    hunks = reference.get("hunks", [])
    if not isinstance(hunks, list):
        raise ValidationError("hunks must be an array", path=f"{at}/hunks")
    return {
        "path": _text(reference["path"], f"{at}/path", max_length=PATH_MAX_LENGTH, blank=False),
        "hint": _text(reference.get("hint", ""), f"{at}/hint", max_length=NAME_MAX_LENGTH),
        "hunks": [check_hunk(h, f"{at}/hunks/{i}") for i, h in enumerate(hunks)],
    }


def check_branch(body: Any, name: str) -> JsonObject:
    """A `BranchRep` PUT to `.../branches/{name}`: its `name`, when given, must be `name`."""
    body = _object(body, "")
    _no_unknown(
        body, ("name", "head", "updateSequenceId", "syncTime", "references", "commitTime"), ""
    )
    if body.get("name", name) != name:
        raise ValidationError("the branch name differs from the one in the path", path="/name")
    if "head" not in body:
        raise ValidationError("'head' is required", path="/head")
    sequence = body.get("updateSequenceId")
    references = body.get("references", [])
    if not isinstance(references, list):
        raise ValidationError("references must be an array", path="/references")
    commit_time = body.get("commitTime")
    return {
        "name": name,
        "head": _text(body["head"], "/head", max_length=NAME_MAX_LENGTH, blank=False),
        "updateSequenceId": None if sequence is None else _whole(sequence, "/updateSequenceId"),
        "syncTime": _whole(body.get("syncTime", 0), "/syncTime"),
        "commitTime": None if commit_time is None else _whole(commit_time, "/commitTime"),
        "references": [check_reference(r, f"/references/{i}") for i, r in enumerate(references)],
    }


def check_extinctions(body: Any) -> list[JsonObject]:
    """The array of `Extinction`s POSTed to `.../branches/{branch}/extinction-events`."""
    if not isinstance(body, list):
        raise ValidationError("expected an array of extinction events", path="/")
    events: list[JsonObject] = []
    for index, value in enumerate(body):
        at = f"/{index}"
        event = _object(value, at)
        _no_unknown(event, ("revision", "message", "time", "flagKey", "projKey"), at)
        for required in ("revision", "time", "flagKey", "projKey"):
            if required not in event:
                raise ValidationError(f"'{required}' is required", path=f"{at}/{required}")
        events.append(
            {
                "revision": _text(
                    event["revision"], f"{at}/revision", max_length=NAME_MAX_LENGTH, blank=False
                ),
                "message": _text(
                    event.get("message", ""), f"{at}/message", max_length=MESSAGE_MAX_LENGTH
                ),
                "time": _whole(event["time"], f"{at}/time"),
                "flagKey": _key(event["flagKey"], f"{at}/flagKey"),
                "projKey": _key(event["projKey"], f"{at}/projKey"),
            }
        )
    return events


def flag_hunks(branch: JsonObject, project: str, flag: str) -> list[tuple[str, JsonObject]]:
    """(path, hunk) of every hunk of `branch` that references the flag."""
    return [
        (reference["path"], hunk)
        for reference in branch.get("references", [])
        for hunk in reference["hunks"]
        if hunk["projKey"] == project and hunk["flagKey"] == flag
    ]


def referenced_flags(branch: JsonObject, project: str) -> dict[str, tuple[int, int]]:
    """Per flag key of the project: (hunks, files) in `branch`."""
    hunks: dict[str, int] = {}
    files: dict[str, set[str]] = {}
    for reference in branch.get("references", []):
        for hunk in reference["hunks"]:
            if hunk["projKey"] != project:
                continue
            key = hunk["flagKey"]
            hunks[key] = hunks.get(key, 0) + 1
            files.setdefault(key, set()).add(reference["path"])
    return {key: (count, len(files[key])) for key, count in hunks.items()}
