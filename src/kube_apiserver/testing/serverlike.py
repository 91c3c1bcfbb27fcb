"""What the helper modules (state, faults, history, crds) need of a server: APIServer, or any object with its
`request` (the suite's own server class, for one)."""

from __future__ import annotations

from typing import Any, Protocol


class ResponseLike(Protocol):
    status: int
    body: bytes

    def json(self) -> Any: ...


class ServerLike(Protocol):
    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> ResponseLike: ...
