"""FDv2 selector `state` strings: which environment, at which feed position, with which content.

Format `fs2.<environment tag>.<epoch>.<seq>.<content digest>`; `fs1.<tag>.<seq>.<digest>` (what
nodes issued before epochs) reads as epoch 1. SDKs treat it as opaque and send it back as
`basis`; the epoch and the digest let a node reject a basis from another history (a restored or
failed-over database), which then gets a full transfer.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

PREFIX = "fs2"
LEGACY_PREFIX = "fs1"


def environment_tag(project: str, environment: str) -> str:
    """A short stable tag for an environment; also the FDv2 payload id."""
    raw = f"{project}\x00{environment}".encode()
    return hashlib.blake2b(raw, digest_size=6).hexdigest()


def content_digest(body: bytes) -> str:
    """A digest of a data-set body: equal bodies (on any node) give equal digests."""
    return hashlib.blake2b(body, digest_size=8).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class Basis:
    tag: str
    epoch: int = 1
    seq: int
    digest: str


def encode_state(tag: str, epoch: int, seq: int, digest: str) -> str:
    return f"{PREFIX}.{tag}.{epoch}.{seq}.{digest}"


def decode_state(state: str) -> Basis | None:
    """The basis a state string names, or None for anything this node did not issue."""
    parts = state.split(".")
    if len(parts) == 4 and parts[0] == LEGACY_PREFIX:
        parts = [PREFIX, parts[1], "1", parts[2], parts[3]]
    if len(parts) != 5 or parts[0] != PREFIX:
        return None
    _, tag, epoch_text, seq_text, digest = parts
    if not tag or not digest or not _is_number(epoch_text) or not _is_number(seq_text):
        return None
    epoch = int(epoch_text)
    return None if epoch < 1 else Basis(tag=tag, epoch=epoch, seq=int(seq_text), digest=digest)


def _is_number(text: str) -> bool:
    return text.isdigit() and len(text) <= 19 and text.isascii()
