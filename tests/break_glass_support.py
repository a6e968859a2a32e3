"""Test support for the break-glass kill switch: an operator's key pair (written as key files
like `flagstaff killswitch keygen` does) and documents signed with it, untouched or tampered.

Shared by tests/unit/break_glass and tests/e2e/break_glass; asserts nothing itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flagstaff_server.break_glass.document import (
    CLEAR,
    OFF,
    OVERRIDE,
    Action,
    canonical_bytes,
    unsigned_document,
)
from flagstaff_server.break_glass.signing import (
    Keyring,
    generate_key_pair,
    key_id,
    load_private_key,
    load_public_keys,
    sign,
)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class Operator:
    """A key pair on disk and the documents it signs."""

    private_path: Path
    public_path: Path
    private_key: Ed25519PrivateKey

    @classmethod
    def create(cls, directory: Path, name: str = "break-glass") -> Operator:
        pair = generate_key_pair()
        directory.mkdir(parents=True, exist_ok=True)
        private_path, public_path = directory / f"{name}.key", directory / f"{name}.pub"
        private_path.write_bytes(pair.private_pem)
        private_path.chmod(0o600)
        public_path.write_bytes(pair.public_pem)
        return cls(private_path, public_path, load_private_key(private_path))

    @property
    def key_id(self) -> str:
        return key_id(self.private_key.public_key())

    def keyring(self) -> Keyring:
        return load_public_keys([self.public_path])

    def override(
        self,
        flag: str,
        action: Action = OFF,
        *,
        project: str = "default",
        environment: str = "production",
        issued_at: int | None = None,
        expires_at: int | None = None,
    ) -> dict[str, Any]:
        document = unsigned_document(
            kind=OVERRIDE,
            key_id=self.key_id,
            project=project,
            environment=environment,
            flag=flag,
            issued_at=issued_at or now_ms(),
            action=action,
            expires_at=expires_at,
        )
        return self.signed(document)

    def clear(
        self,
        flag: str,
        *,
        project: str = "default",
        environment: str = "production",
        issued_at: int | None = None,
    ) -> dict[str, Any]:
        document = unsigned_document(
            kind=CLEAR,
            key_id=self.key_id,
            project=project,
            environment=environment,
            flag=flag,
            issued_at=issued_at or now_ms(),
        )
        return self.signed(document)

    def signed(self, document: dict[str, Any]) -> dict[str, Any]:
        """`document` with a valid signature (over whatever it holds now)."""
        unsigned = {k: v for k, v in document.items() if k != "signature"}
        return {**unsigned, "signature": sign(self.private_key, canonical_bytes(unsigned))}
