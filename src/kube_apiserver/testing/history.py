"""The server's request history for assertions, through /debug/testing/requests (the server runs with
--enable-testing-endpoints): every authenticated request, with its user, what it was about, its body and its
answer (bodies cut at 64 KiB), oldest first; the server keeps the last 10,000 or 64 MiB.

    mark = history.last_sequence(server)
    ...  # the controller reconciles
    patches = history.requests(server, since=mark, verb="patch", resource="deployments", subresource="status")
    assert len(patches) == 1 and patches[0].ok
    assert patches[0].request_object()["status"]["replicas"] == 3

    with history.recording(server) as recorded:  # only what happens in the block
        ...
    assert recorded.requests(user="system:serviceaccount:default:op", verb="update") == []

`server` is anything with `.request(method, path, body=None, headers=None)` answering `.status` and
`.json()` (kube_apiserver.testing.APIServer)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from .serverlike import ServerLike

REQUESTS_PATH = "/debug/testing/requests"
FILTERS = ("user", "verb", "group", "version", "resource", "subresource", "namespace", "name")


class HistoryError(RuntimeError):
    """The server refused a history request (a bad filter, testing endpoints not enabled)."""


@dataclass(frozen=True)
class RecordedRequest:
    sequence: int
    time: float  # when it arrived, in seconds since the epoch
    user: str
    groups: list[str]
    verb: str  # get, list, watch, create, update, patch, delete, deletecollection
    group: str
    version: str
    resource: str
    subresource: str
    namespace: str
    name: str  # a create's name comes from its body
    method: str
    path: str
    query: str
    status: int
    request_body: str
    response_body: str
    request_body_truncated: bool = False
    response_body_truncated: bool = False
    streaming: bool = False  # a watch (or an upgrade): no response body is recorded
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, item: dict[str, Any]) -> RecordedRequest:
        return cls(
            item["sequence"], item["time"], item["user"], item["groups"], item["verb"], item["group"],
            item["version"], item["resource"], item["subresource"], item["namespace"], item["name"],
            item["method"], item["path"], item["query"], item["status"], item["requestBody"],
            item["responseBody"], item["requestBodyTruncated"], item["responseBodyTruncated"],
            item["streaming"], item,
        )  # fmt: skip

    @property
    def ok(self) -> bool:
        """Answered with a 2xx."""
        return 200 <= self.status < 300

    def request_object(self) -> Any:
        """The request body as JSON (None if there was none); ValueError if it was cut or is not JSON."""
        return self._json(self.request_body, self.request_body_truncated)

    def response_object(self) -> Any:
        """The answer as JSON (an object, a list, or a Status); ValueError if it was cut or is not JSON."""
        return self._json(self.response_body, self.response_body_truncated)

    @staticmethod
    def _json(body: str, truncated: bool) -> Any:
        if truncated:
            raise ValueError("the body was longer than the history keeps (64 KiB)")
        return json.loads(body) if body else None

    def matches(self, **wanted: Any) -> bool:
        """Whether each given field equals its value (FILTERS, status, method, path...)."""
        return all(getattr(self, key) == value for key, value in wanted.items())

    def __str__(self) -> str:
        target = "/".join(p for p in (self.namespace, self.resource, self.name, self.subresource) if p)
        return f"#{self.sequence} {self.user} {self.verb} {target or self.path} -> {self.status}"


class RequestList(list[RecordedRequest]):
    """Recorded requests, oldest first, with filters that read like assertions."""

    def __init__(self, items: Iterable[RecordedRequest] = ()):
        super().__init__(items)

    def where(self, **wanted: Any) -> RequestList:
        return RequestList(r for r in self if r.matches(**wanted))

    def one(self, **wanted: Any) -> RecordedRequest:
        """The only request matching; AssertionError naming what was found otherwise."""
        found = self.where(**wanted)
        if len(found) != 1:
            raise AssertionError(
                f"expected exactly one request matching {wanted}, found {len(found)}:\n{found}"
            )
        return found[0]

    def verbs(self) -> list[str]:
        return [r.verb for r in self]

    def statuses(self) -> list[int]:
        return [r.status for r in self]

    def __str__(self) -> str:
        return "\n".join(str(r) for r in self) or "(none)"


def _query(server: ServerLike, since: int, limit: int, wanted: dict[str, str]) -> dict[str, Any]:
    unknown = set(wanted) - set(FILTERS)
    if unknown:
        raise TypeError(f"unknown filters {sorted(unknown)}; the server filters on {', '.join(FILTERS)}")
    params = {**wanted, **({"since": since} if since else {}), **({"limit": limit} if limit else {})}
    path = f"{REQUESTS_PATH}?{urlencode(params)}" if params else REQUESTS_PATH
    resp = server.request("GET", path)
    if resp.status != 200:
        raise HistoryError(f"request history: {resp.status} {resp.body[:500]!r}")
    return resp.json()


def requests(server: ServerLike, *, since: int = 0, limit: int = 0, **wanted: str) -> RequestList:
    """The recorded requests after sequence `since` whose fields (FILTERS) equal `wanted`'s."""
    found = _query(server, since, limit, wanted)
    return RequestList(RecordedRequest.from_dict(item) for item in found["items"])


def last_sequence(server: ServerLike) -> int:
    """The sequence number of the latest recorded request: `since=` for what comes after it."""
    return _query(server, 0, 1, {"verb": "-"})["lastSequence"]


def clear(server: ServerLike) -> None:
    resp = server.request("DELETE", REQUESTS_PATH)
    if resp.status != 200:
        raise HistoryError(f"request history: {resp.status} {resp.body[:500]!r}")


@dataclass
class Recording:
    server: ServerLike
    since: int

    def requests(self, **wanted: str) -> RequestList:
        """What was recorded since the recording started (until now)."""
        return requests(self.server, since=self.since, **wanted)


@contextlib.contextmanager
def recording(server: ServerLike) -> Iterator[Recording]:
    """The requests made from here on (the history is not cleared: other recordings are unaffected)."""
    yield Recording(server, last_sequence(server))
