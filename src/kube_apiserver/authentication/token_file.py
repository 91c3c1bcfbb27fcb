"""--token-auth-file: a CSV of token,user,uid[,"group1,group2"] (k8s tokenfile authenticator)."""

from __future__ import annotations

import csv

from ..registry.context import UserInfo


class TokenFileError(ValueError):
    pass


class StaticTokenAuthenticator:
    def __init__(self, tokens: dict[str, UserInfo], implicit_audiences: tuple[str, ...] = ()):
        self.tokens = tokens
        # Static tokens carry no audience: they are good for the API audiences only
        # (authenticator.WrapAudienceAgnosticToken).
        self.implicit_audiences = implicit_audiences

    @classmethod
    def from_file(cls, path: str) -> StaticTokenAuthenticator:
        tokens: dict[str, UserInfo] = {}
        with open(path, newline="") as f:
            for number, record in enumerate(csv.reader(f), start=1):
                if not record or (len(record) == 1 and not record[0].strip()):
                    continue
                if len(record) < 3:
                    raise TokenFileError(f"token file '{path}' must have at least 3 columns (token, user name, "
                                         f"user uid), found {len(record)}")
                token = record[0].strip()
                if not token:
                    raise TokenFileError(f"token file '{path}', line {number}: empty token")
                groups = tuple(g.strip() for g in record[3].split(",") if g.strip()) if len(record) > 3 else ()
                tokens[token] = UserInfo(record[1], record[2], groups)
        return cls(tokens)

    def add(self, token: str, user: UserInfo) -> None:
        self.tokens[token] = user

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> UserInfo | None:
        if audiences and self.implicit_audiences and not set(audiences) & set(self.implicit_audiences):
            return None
        return self.tokens.get(token)
