"""FDv2 selector `state` strings: which environment, at which feed position, with which content.

Format `fs1.<environment tag>.<seq>.<content digest>`. SDKs treat it as opaque and send it back as
`basis`; the digest lets a node reject a basis from another history (a reset feed reusing seqs).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

PREFIX = "fs1"


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
    seq: int
    digest: str


def encode_state(tag: str, seq: int, digest: str) -> str:
    return f"{PREFIX}.{tag}.{seq}.{digest}"


def decode_state(state: str) -> Basis | None:
    """The basis a state string names, or None for anything this node did not issue."""
    parts = state.split(".")
    if len(parts) != 4 or parts[0] != PREFIX:
        return None
    _, tag, seq_text, digest = parts
    if not seq_text.isdigit() or len(seq_text) > 19 or not tag or not digest:
        return None
    return Basis(tag=tag, seq=int(seq_text), digest=digest)
