"""The in-memory store's access tokens, local accounts and browser sessions. Keeps no references
to callers' objects."""

from __future__ import annotations

import copy
from datetime import datetime

from flagstaff_server.adapters.memory_journal import UndoJournal, stored
from flagstaff_server.adapters.memory_state import MemoryState
from flagstaff_server.errors import AlreadyExists, NotFound
from flagstaff_server.services.ports import AccountRecord, SessionRecord, TokenRecord


class InMemoryTokens:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def get(self, token_id: str) -> TokenRecord | None:
        return copy.deepcopy(self._state.tokens.get(token_id))

    def find_by_secret_hash(self, secret_hash: str) -> TokenRecord | None:
        for token in self._state.tokens.values():
            if token.secret_hash == secret_hash:
                return copy.deepcopy(token)
        return None

    def list(self) -> list[TokenRecord]:
        tokens = sorted(self._state.tokens.values(), key=lambda t: (t.created, t.id))
        return copy.deepcopy(tokens)

    def add(self, record: TokenRecord) -> None:
        if record.id in self._state.tokens:
            raise AlreadyExists(f"token {record.id!r} already exists")
        if any(t.secret_hash == record.secret_hash for t in self._state.tokens.values()):
            raise AlreadyExists("a token with this secret already exists")
        self._journal.put(self._state.tokens, record.id, stored(record))

    def replace(self, record: TokenRecord) -> None:
        if record.id not in self._state.tokens:
            raise NotFound(f"token {record.id!r} not found")
        self._journal.put(self._state.tokens, record.id, stored(record))


class InMemoryAccounts:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def get(self, account_id: str) -> AccountRecord | None:
        return copy.deepcopy(self._state.accounts.get(account_id))

    def find_by_email(self, email: str) -> AccountRecord | None:
        for account in self._state.accounts.values():
            if account.email == email:
                return copy.deepcopy(account)
        return None

    def list(self) -> list[AccountRecord]:
        return copy.deepcopy(sorted(self._state.accounts.values(), key=lambda a: a.email))

    def add(self, record: AccountRecord) -> None:
        if record.id in self._state.accounts:
            raise AlreadyExists(f"account {record.id!r} already exists")
        if any(a.email == record.email for a in self._state.accounts.values()):
            raise AlreadyExists(f"an account for {record.email!r} already exists")
        self._journal.put(self._state.accounts, record.id, stored(record))

    def replace(self, record: AccountRecord) -> None:
        if record.id not in self._state.accounts:
            raise NotFound(f"account {record.id!r} not found")
        self._journal.put(self._state.accounts, record.id, stored(record))

    def delete(self, account_id: str) -> None:
        if account_id not in self._state.accounts:
            raise NotFound(f"account {account_id!r} not found")
        self._journal.remove(self._state.accounts, account_id)


class InMemorySessions:
    def __init__(self, state: MemoryState, journal: UndoJournal) -> None:
        self._state, self._journal = state, journal

    def get(self, id_hash: str) -> SessionRecord | None:
        return copy.deepcopy(self._state.sessions.get(id_hash))

    def add(self, record: SessionRecord) -> None:
        if record.id_hash in self._state.sessions:
            raise AlreadyExists("session already exists")
        self._journal.put(self._state.sessions, record.id_hash, stored(record))

    def delete(self, id_hash: str) -> None:
        if id_hash in self._state.sessions:
            self._journal.remove(self._state.sessions, id_hash)

    def delete_subject(self, subject: str) -> None:
        for id_hash, session in list(self._state.sessions.items()):
            if session.subject == subject:
                self._journal.remove(self._state.sessions, id_hash)

    def delete_expired(self, now: datetime) -> None:
        for id_hash, session in list(self._state.sessions.items()):
            if session.expires <= now:
                self._journal.remove(self._state.sessions, id_hash)
