"""Ed25519 keys for break-glass documents, through the `cryptography` package (never by hand):
generating a key pair, reading key files, the key id (a short hash of the public key), signing a
document's canonical bytes and verifying a received document against the trusted public keys.

Key files are PEM: the private key PKCS#8 (unencrypted, so a script can sign while everything
else is down; the file is mode 0600), the public key SubjectPublicKeyInfo. A public-key file may
hold several keys, one PEM block after another.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from flagstaff_server.errors import Forbidden, ValidationError

SIGNATURE_BYTES = 64
_PEM_BLOCK = re.compile(
    rb"-----BEGIN PUBLIC KEY-----\s+.*?-----END PUBLIC KEY-----", flags=re.DOTALL
)


class Signed(Protocol):
    """A decoded break-glass document: an override or clear (`document.Document`), or a signed
    notice (`notice_document.NoticeDocument`)."""

    @property
    def key_id(self) -> str: ...
    @property
    def signature(self) -> str: ...
    def signed_bytes(self) -> bytes: ...


class KeyFileError(ValueError):
    """A key file is missing, unreadable or not an Ed25519 key; the message names the file."""


def key_id(public_key: Ed25519PublicKey) -> str:
    """16 hex digits of SHA-256 over the raw 32-byte public key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class KeyPair:
    private_pem: bytes
    public_pem: bytes
    key_id: str


def generate_key_pair() -> KeyPair:
    private = Ed25519PrivateKey.generate()
    public = private.public_key()
    return KeyPair(
        private_pem=private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        public_pem=public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
        key_id=key_id(public),
    )


def load_private_key(path: Path) -> Ed25519PrivateKey:
    data = _read(path)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"{path} is not an unencrypted PEM private key: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path} holds a {type(key).__name__}, not an Ed25519 key")
    return key


def load_public_keys(paths: Iterable[Path]) -> Keyring:
    """Every public key in `paths`, by key id."""
    keys: dict[str, Ed25519PublicKey] = {}
    for path in paths:
        blocks = _PEM_BLOCK.findall(_read(path))
        if not blocks:
            raise KeyFileError(f"{path} holds no PEM public key")
        for block in blocks:
            try:
                key = serialization.load_pem_public_key(block)
            except ValueError as exc:
                raise KeyFileError(f"{path} holds an unreadable public key: {exc}") from None
            if not isinstance(key, Ed25519PublicKey):
                raise KeyFileError(f"{path} holds a {type(key).__name__}, not an Ed25519 key")
            keys[key_id(key)] = key
    return Keyring(keys)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise KeyFileError(f"cannot read {path}: {exc.strerror or exc}") from None


def sign(private_key: Ed25519PrivateKey, payload: bytes) -> str:
    """The base64 (standard alphabet, padded) Ed25519 signature of `payload`."""
    return base64.b64encode(private_key.sign(payload)).decode("ascii")


@dataclass(frozen=True, slots=True)
class Keyring:
    """The public keys a node trusts, by key id."""

    keys: Mapping[str, Ed25519PublicKey]

    def verify(self, document: Signed) -> None:
        """Raise unless `document` carries a valid signature by a trusted key: ValidationError
        for a signature that is not 64 bytes of base64, Forbidden for an unknown key or a
        signature that does not match (a tampered or foreign document)."""
        try:
            signature = base64.b64decode(document.signature, validate=True)
        except (binascii.Error, ValueError):
            signature = b""
        if len(signature) != SIGNATURE_BYTES:
            raise ValidationError(
                f"signature must be a base64 Ed25519 signature ({SIGNATURE_BYTES} bytes)",
                path="/signature",
            )
        key = self.keys.get(document.key_id)
        if key is None:
            trusted = ", ".join(sorted(self.keys)) or "none (FLAGSTAFF_BREAK_GLASS_KEYS is unset)"
            raise Forbidden(
                f"key {document.key_id} is not trusted by this node (trusted: {trusted})",
                path="/keyId",
            )
        try:
            key.verify(signature, document.signed_bytes())
        except InvalidSignature:
            raise Forbidden(
                f"the signature does not match the document for key {document.key_id}: "
                "it was changed after signing, or signed by another key",
                path="/signature",
            ) from None
