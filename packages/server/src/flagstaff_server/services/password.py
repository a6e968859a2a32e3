"""Password hashing for local accounts: scrypt with a random per-account salt, stored as
`scrypt$n$r$p$salt_hex$hash_hex` so the cost can rise later without breaking old hashes.

Owns only hashing and checking; it never stores or logs a password.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets

from flagstaff_server.errors import ValidationError

SCHEME = "scrypt"
# scrypt cost: N = 2**14, r = 8 takes 16 MiB and tens of milliseconds, enough to make guessing
# a leaked hash slow while keeping a sign-in quick (sign-ins are rare; API calls never hash).
COST_N = 2**14
BLOCK_R = 8
PARALLEL_P = 1
SALT_BYTES = 16
HASH_BYTES = 32
MAX_MEMORY = 64 * 1024 * 1024

MIN_LENGTH = 8
MAX_LENGTH = 1024


def check_strength(password: str, path: str = "/password") -> None:
    if len(password) < MIN_LENGTH:
        raise ValidationError(f"the password needs at least {MIN_LENGTH} characters", path=path)
    if len(password) > MAX_LENGTH:
        raise ValidationError(f"the password may have at most {MAX_LENGTH} characters", path=path)


def derive(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        password.encode(), salt=salt, n=n, r=r, p=p, maxmem=MAX_MEMORY, dklen=HASH_BYTES
    )


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(SALT_BYTES)
    digest = derive(password, salt, COST_N, BLOCK_R, PARALLEL_P)
    return f"{SCHEME}${COST_N}${BLOCK_R}${PARALLEL_P}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches `stored`; a malformed stored hash matches nothing."""
    parts = stored.split("$")
    if len(parts) != 6 or parts[0] != SCHEME:
        return False
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt, expected = bytes.fromhex(parts[4]), bytes.fromhex(parts[5])
    except ValueError:
        return False
    if len(password) > MAX_LENGTH:
        return False
    return hmac.compare_digest(derive(password, salt, n, r, p), expected)


@functools.cache
def decoy_hash() -> str:
    """Checked against when the email is unknown, so a sign-in takes as long either way and its
    timing does not tell which emails have accounts."""
    return hash_password(secrets.token_urlsafe(16))
