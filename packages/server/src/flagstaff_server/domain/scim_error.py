"""The SCIM errors use cases raise (RFC 7644 §3.12): a `ValidationError` that also carries the
SCIM `scimType` (`invalidFilter`, `invalidValue`, `invalidPath`, `noTarget`, `mutability`,
`invalidSyntax`, `tooMany`) the SCIM endpoints answer with."""

from __future__ import annotations

from flagstaff_server.errors import ValidationError


class ScimInvalid(ValidationError):
    def __init__(self, message: str, *, scim_type: str, path: str | None = None) -> None:
        super().__init__(message, path=path)
        self.scim_type = scim_type


__all__ = ["ScimInvalid"]
