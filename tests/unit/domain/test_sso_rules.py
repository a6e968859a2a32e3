"""Single sign-on's pure rules: what a validated ID token says about the member, and the team
moves a member's groups imply (properties: a team is never both joined and left, only mapped
teams move, and after the moves the member is in exactly the mapped teams of their groups)."""

from __future__ import annotations

import pytest
from flagstaff_server.domain.sso import identity_of, team_changes
from flagstaff_server.errors import ValidationError
from hypothesis import given
from hypothesis import strategies as st

GROUPS = st.sampled_from(["eng", "ops", "sales", "all"])
TEAMS = st.sampled_from(["t1", "t2", "t3", "t4"])


@given(
    group_teams=st.dictionaries(GROUPS, TEAMS),
    groups=st.lists(GROUPS),
    current=st.lists(TEAMS, unique=True),
)
def test_team_moves_leave_the_member_in_exactly_the_mapped_teams_of_their_groups(
    group_teams: dict[str, str], groups: list[str], current: list[str]
) -> None:
    join, leave = team_changes(group_teams, groups, current)
    assert not join & leave
    mapped = set(group_teams.values())
    assert join | leave <= mapped
    after = (set(current) | join) - leave
    assert after & mapped == {group_teams[g] for g in groups if g in group_teams}
    assert after - mapped == set(current) - mapped


def test_the_identity_has_the_groups_that_are_strings() -> None:
    claims = {"iss": "i", "sub": "s", "email": "a@b.c", "roles": ["eng", 7, None]}
    assert identity_of(claims, "roles").groups == ("eng",)
    assert identity_of({**claims, "roles": "eng"}, "roles").groups == ()


@pytest.mark.parametrize(
    "claims",
    [{"iss": "i", "sub": "s"}, {"iss": "i", "sub": "s", "email": "a@b.c", "email_verified": False}],
)
def test_an_identity_needs_a_verified_email(claims: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        identity_of(claims, "groups")
