"""Password hashing for local accounts: scrypt with a per-hash salt, self-describing format."""

from __future__ import annotations

import pytest
from flagstaff_server.errors import ValidationError
from flagstaff_server.services.password import (
    check_strength,
    decoy_hash,
    hash_password,
    verify_password,
)


def test_hash_verifies_the_password_and_nothing_else() -> None:
    stored = hash_password("correct horse battery")
    assert verify_password("correct horse battery", stored)
    assert not verify_password("correct horse batterY", stored)
    assert not verify_password("", stored)


def test_hash_is_scrypt_with_a_fresh_salt_each_time() -> None:
    first, second = hash_password("same password"), hash_password("same password")
    assert first != second
    scheme, n, r, p, salt, digest = first.split("$")
    assert (scheme, n, r, p) == ("scrypt", "16384", "8", "1")
    assert len(bytes.fromhex(salt)) == 16
    assert len(bytes.fromhex(digest)) == 32
    assert "same password" not in first


def test_cost_parameters_are_read_from_the_stored_hash() -> None:
    # a hash made with other (cheaper) parameters still verifies: the cost can change later
    import hashlib

    salt = bytes(range(16))
    digest = hashlib.scrypt(b"pw-12345678", salt=salt, n=1024, r=8, p=1, dklen=32)
    stored = f"scrypt$1024$8$1${salt.hex()}${digest.hex()}"
    assert verify_password("pw-12345678", stored)
    assert not verify_password("pw-12345679", stored)


@pytest.mark.parametrize(
    "stored", ["", "plain", "bcrypt$1$2$3$00$00", "scrypt$x$8$1$00$00", "scrypt$1024$8$1$zz$00"]
)
def test_malformed_stored_hash_matches_nothing(stored: str) -> None:
    assert not verify_password("anything", stored)


def test_decoy_hash_is_stable_and_matches_no_typical_password() -> None:
    assert decoy_hash() == decoy_hash()
    assert not verify_password("password", decoy_hash())


@pytest.mark.parametrize("password", ["", "short", "x" * 7, "y" * 1025])
def test_weak_or_huge_password_is_refused_naming_the_field(password: str) -> None:
    with pytest.raises(ValidationError) as caught:
        check_strength(password)
    assert caught.value.path == "/password"


def test_reasonable_password_passes() -> None:
    check_strength("eight ch")
