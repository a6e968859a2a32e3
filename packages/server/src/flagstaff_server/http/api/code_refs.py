"""Code-reference endpoints in LaunchDarkly's REST v2 shapes (`/api/v2/code-refs/...`, what
`ld-find-code-refs` and `flagstaff code-refs` call), and the per-flag usage the flag page reads.
Handlers parse, call one use case in `services.code_refs` or `services.code_ref_usage`, answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Plane, ProjectKey, Reader, Writer
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import code_ref_usage, code_refs

router = PrefixedRouter(prefix="/code-refs", tags=["Code references"])

Repo = Annotated[str, Path(alias="repo", description="The repository's name")]
Branch = Annotated[str, Path(alias="branch", description="The branch name (may contain '/')")]
FlagKey = Annotated[str, Path(alias="featureFlagKey", description="The flag key")]


def body(description: str, kind: str = "object") -> dict[str, object]:
    return {
        "requestBody": {
            "required": True,
            "description": description,
            "content": {"application/json": {"schema": {"type": kind}}},
        }
    }


REPOSITORY_POST = body(
    "`RepositoryPost`: {name, type (bitbucket|custom|github|gitlab), sourceLink, "
    "commitUrlTemplate, hunkUrlTemplate, defaultBranch}"
)
REPOSITORY_PATCH = body(
    "A JSON Patch array of the repository, or a JSON Merge Patch object (as ld-find-code-refs "
    "sends)",
    "array",
)
BRANCH_PUT = body(
    "`PutBranch`: {name, head, updateSequenceId, syncTime, commitTime, references: "
    "[{path, hint, hunks: [{startingLineNumber, lines, projKey, flagKey, aliases, contentHash}]}]}"
)
EXTINCTIONS = body("An array of `Extinction`: {revision, message, time, flagKey, projKey}", "array")
BRANCH_NAMES = body("An array of branch names to delete", "array")


@router.get("/repositories", summary="List code-references repositories")
async def list_repositories(
    plane: Plane,
    actor: Reader,
    withBranches: bool = False,  # noqa: N803 - LaunchDarkly's parameter names
    withReferencesForDefaultBranch: bool = False,  # noqa: N803
    projKey: str | None = None,  # noqa: N803
    flagKey: str | None = None,  # noqa: N803
) -> Response:
    listed = await run_in_threadpool(
        lambda: code_refs.list_repositories(
            plane,
            actor,
            with_branches=withBranches,
            with_references=withReferencesForDefaultBranch,
            project=projKey,
            flag=flagKey,
        )
    )
    return json_response(listed)


@router.post(
    "/repositories",
    status_code=200,
    summary="Create a code-references repository",
    openapi_extra=REPOSITORY_POST,
)
async def create_repository(request: Request, plane: Plane, actor: Writer) -> Response:
    given = await read_json(request)
    return json_response(await run_in_threadpool(code_refs.create_repository, plane, actor, given))


@router.get("/repositories/{repo}", summary="Get a code-references repository")
async def get_repository(repo: Repo, plane: Plane, actor: Reader) -> Response:
    return json_response(await run_in_threadpool(code_refs.get_repository, plane, actor, repo))


@router.patch(
    "/repositories/{repo}",
    summary="Edit a code-references repository",
    openapi_extra=REPOSITORY_PATCH,
)
async def patch_repository(repo: Repo, request: Request, plane: Plane, actor: Writer) -> Response:
    given = await read_json(request)
    updated = await run_in_threadpool(code_refs.patch_repository, plane, actor, repo, given)
    return json_response(updated)


@router.delete(
    "/repositories/{repo}", status_code=204, summary="Delete a repository and its references"
)
async def delete_repository(repo: Repo, plane: Plane, actor: Writer) -> Response:
    await run_in_threadpool(code_refs.delete_repository, plane, actor, repo)
    return Response(status_code=204)


@router.get("/repositories/{repo}/branches", summary="List a repository's branches")
async def list_branches(repo: Repo, plane: Plane, actor: Reader) -> Response:
    return json_response(await run_in_threadpool(code_refs.list_branches, plane, actor, repo))


@router.post(
    "/repositories/{repo}/branch-delete-tasks",
    status_code=204,
    summary="Delete branches of a repository",
    openapi_extra=BRANCH_NAMES,
)
async def delete_branches(repo: Repo, request: Request, plane: Plane, actor: Writer) -> Response:
    given = await read_json(request)
    await run_in_threadpool(code_refs.delete_branches, plane, actor, repo, given)
    return Response(status_code=204)


@router.post(
    "/repositories/{repo}/branches/{branch:path}/extinction-events",
    status_code=200,
    summary="Record flag keys that vanished from a branch",
    openapi_extra=EXTINCTIONS,
)
async def post_extinctions(
    repo: Repo, branch: Branch, request: Request, plane: Plane, actor: Writer
) -> Response:
    given = await read_json(request)
    await run_in_threadpool(code_refs.post_extinctions, plane, actor, repo, branch, given)
    return json_response({})


@router.get("/repositories/{repo}/branches/{branch:path}", summary="Get a branch's references")
async def get_branch(repo: Repo, branch: Branch, plane: Plane, actor: Reader) -> Response:
    return json_response(await run_in_threadpool(code_refs.get_branch, plane, actor, repo, branch))


@router.put(
    "/repositories/{repo}/branches/{branch:path}",
    summary="Upload a branch's references (replacing the stored ones)",
    openapi_extra=BRANCH_PUT,
)
async def put_branch(
    repo: Repo, branch: Branch, request: Request, plane: Plane, actor: Writer
) -> Response:
    given = await read_json(request)
    stored = await run_in_threadpool(code_refs.put_branch, plane, actor, repo, branch, given)
    return json_response(stored)


@router.get("/extinctions", summary="List extinction events, grouped by flag key")
async def list_extinctions(
    plane: Plane,
    actor: Reader,
    repoName: str | None = None,  # noqa: N803 - LaunchDarkly's parameter names
    branchName: str | None = None,  # noqa: N803
    projKey: str | None = None,  # noqa: N803
    flagKey: str | None = None,  # noqa: N803
    start: Annotated[int | None, Query(alias="from", ge=0)] = None,
    end: Annotated[int | None, Query(alias="to", ge=0)] = None,
) -> Response:
    listed = await run_in_threadpool(
        lambda: code_refs.list_extinctions(
            plane,
            actor,
            repository=repoName,
            branch=branchName,
            project=projKey,
            flag=flagKey,
            start=start,
            end=end,
        )
    )
    return json_response(listed)


@router.get(
    "/statistics/{projectKey}",
    summary="Per flag of the project: references in each repository; and stale flags referenced "
    "nowhere (`_safeToRemove`)",
)
async def statistics(
    project: ProjectKey,
    plane: Plane,
    actor: Reader,
    flagKey: str | None = None,  # noqa: N803
) -> Response:
    found = await run_in_threadpool(code_ref_usage.statistics, plane, actor, project, flagKey)
    return json_response(found)


@router.get(
    "/usage/{projectKey}/{featureFlagKey}",
    summary="Where a flag is used: hunks per repository, extinctions, safe to remove",
)
async def flag_usage(project: ProjectKey, flag: FlagKey, plane: Plane, actor: Reader) -> Response:
    found = await run_in_threadpool(code_ref_usage.flag_usage, plane, actor, project, flag)
    return json_response(found)
