"""Request history for test suites (--enable-testing-endpoints): every authenticated request with what it
was about, its body and its answer, kept in a ring bounded by entries and bytes, so a test can assert what a
controller did ("it patched the status exactly once"). Installed only when testing endpoints are enabled."""

from __future__ import annotations

import itertools
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import orjson

from ...apimachinery import errors
from ...endpoints.handlers.responses import write_status_error
from ...endpoints.http import Handler, Request, Response, StreamingResponse

DEFAULT_MAX_ENTRIES = 10_000
DEFAULT_MAX_BYTES = 64 << 20
DEFAULT_MAX_BODY_BYTES = 64 << 10  # what is kept of each request and response body
FILTER_FIELDS = ("user", "verb", "group", "version", "resource", "subresource", "namespace", "name")


@dataclass(slots=True)
class RequestRecord:
    sequence: int
    time: float
    user: str
    groups: list[str]
    verb: str
    group: str
    version: str
    resource: str
    subresource: str
    namespace: str
    name: str
    method: str
    path: str
    query: str
    request_body: bytes
    request_body_size: int
    status: int
    response_body: bytes
    response_body_size: int
    streaming: bool

    @property
    def size(self) -> int:
        """What it holds in memory, roughly: its bodies and its strings."""
        return len(self.request_body) + len(self.response_body) + len(self.path) + len(self.query) + 256

    def matches(self, wanted: dict[str, str]) -> bool:
        return all(getattr(self, key) == value for key, value in wanted.items())

    def to_dict(self) -> dict[str, Any]:
        return {
            "sequence": self.sequence,
            "time": self.time,
            "user": self.user,
            "groups": self.groups,
            "verb": self.verb,
            "group": self.group,
            "version": self.version,
            "resource": self.resource,
            "subresource": self.subresource,
            "namespace": self.namespace,
            "name": self.name,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "requestBody": self.request_body.decode("utf-8", "replace"),
            "requestBodySize": self.request_body_size,
            "requestBodyTruncated": len(self.request_body) < self.request_body_size,
            "status": self.status,
            "responseBody": self.response_body.decode("utf-8", "replace"),
            "responseBodySize": self.response_body_size,
            "responseBodyTruncated": len(self.response_body) < self.response_body_size,
            "streaming": self.streaming,
        }


def _created_name(verb: str, body: bytes) -> str:
    """A create's name is in its body, not its path (as audit's objectRef has it); "" if not JSON."""
    if verb != "create" or not body.startswith(b"{"):
        return ""
    try:
        meta = orjson.loads(body).get("metadata")
    except orjson.JSONDecodeError:
        return ""
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


class RequestHistory:
    """One server's recent requests, oldest first; the oldest go once there are more than `max_entries` or
    they hold more than `max_bytes`."""

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.max_body_bytes = max_body_bytes
        self.records: deque[RequestRecord] = deque()
        self.bytes = 0
        self._sequence = itertools.count(1)
        self.last_sequence = 0

    def add(self, record: RequestRecord) -> None:
        self.records.append(record)
        self.bytes += record.size
        while self.records and (len(self.records) > self.max_entries or self.bytes > self.max_bytes):
            self.bytes -= self.records.popleft().size

    def record(self, req: Request, resp: Response, received: float, request_body: bytes | None) -> None:
        info, user = req.info, req.user
        streaming = isinstance(resp, StreamingResponse) or resp.status == 101
        body = request_body or b""
        self.last_sequence = next(self._sequence)
        self.add(
            RequestRecord(
                self.last_sequence,
                received,
                user.name if user is not None else "",
                list(user.groups) if user is not None else [],
                info.verb,
                info.api_group,
                info.api_version,
                info.resource,
                info.subresource,
                info.namespace,
                info.name or _created_name(info.verb, body),
                req.method,
                req.path,
                req.query_string.decode("latin-1"),
                body[: self.max_body_bytes],
                len(body),
                resp.status,
                resp.body[: self.max_body_bytes],
                len(resp.body),
                streaming,
            )
        )

    def query(self, since: int = 0, limit: int = 0, **wanted: str) -> list[RequestRecord]:
        """Records after sequence `since` whose fields equal `wanted`'s (FILTER_FIELDS), oldest first."""
        unknown = set(wanted) - set(FILTER_FIELDS)
        if unknown:
            raise ValueError(f"unknown filters: {', '.join(sorted(unknown))}")
        found = [r for r in self.records if r.sequence > since and r.matches(wanted)]
        return found[:limit] if limit > 0 else found

    def clear(self) -> None:
        self.records.clear()
        self.bytes = 0


def with_request_history(handler: Handler, history: RequestHistory, exempt_prefix: str) -> Handler:
    """Records each request (but those under `exempt_prefix`) with its answer; an error raised inside is
    answered here, as the chain's recovery would, so its Status is recorded."""

    async def recording(req: Request) -> Response:
        if req.info is None or req.path.startswith(exempt_prefix):
            return await handler(req)
        received = time.time()
        try:
            resp = await handler(req)
        except errors.StatusError as err:
            resp = write_status_error(req, err)
        history.record(req, resp, received, req.received_body)
        return resp

    return recording
