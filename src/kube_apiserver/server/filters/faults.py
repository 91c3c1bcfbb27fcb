"""Fault injection for test suites (--enable-testing-endpoints): rules that make matching requests answer an
error Status, wait, have their watch dropped or expired, or have their storage write fail. Installed in the
handler chain only when testing endpoints are enabled; each server has its own FaultInjector.

A rule matches on the request's info and user (a field left out matches anything); the first matching
rule that fires (its count not used up, its seeded draw under its probability) is applied, and logged."""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ...apimachinery import errors, serializer
from ...endpoints.http import Handler, Request, Response, StreamingResponse
from ...storage.faults import ETCD_TIMEOUT_MESSAGE, WriteFault, failing_writes

log = logging.getLogger("kube_apiserver")

STATUS_CODES = (409, 410, 429, 500, 503, 504)
WATCH_ACTIONS = ("drop", "expire")
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
MAX_LATENCY_SECONDS = 600.0  # bounded: a rule cannot hold a request longer than a watch's timeout would
MATCH_FIELDS = ("verb", "group", "resource", "subresource", "namespace", "name", "user")
PROTOBUF_STREAM = "application/vnd.kubernetes.protobuf;stream=watch"


class RuleError(ValueError):
    """A rule that cannot be applied (answered 400)."""


@dataclass
class FaultRule:
    id: str
    # What it matches; None matches anything ("" is the core group, or no subresource).
    verb: str | None = None
    group: str | None = None
    resource: str | None = None
    subresource: str | None = None
    namespace: str | None = None
    name: str | None = None
    user: str | None = None
    # What it does: an error Status, a watch fault, or a failed storage write; with or without latency.
    status: int | None = None
    message: str | None = None
    retry_after_seconds: int | None = None
    latency_seconds: float = 0.0
    watch: str | None = None  # "drop": the stream ends; "expire": it ends with a 410 Expired ERROR event
    after_events: int = 0
    fail_write: bool = False
    # How often: `count` times at most (None: unbounded), each time with `probability`.
    count: int | None = None
    probability: float | None = None
    seed: int | None = None
    applied: int = 0
    _random: random.Random = field(default_factory=random.Random, repr=False)

    def matches(self, req: Request) -> bool:
        info = req.info
        if info is None or not info.is_resource_request:
            return False
        if self.watch is not None and info.verb != "watch":
            return False
        if self.fail_write and info.verb not in WRITE_VERBS:
            return False
        user = req.user.name if req.user is not None else ""
        wanted = (
            self.verb,
            self.group,
            self.resource,
            self.subresource,
            self.namespace,
            self.name,
            self.user,
        )
        actual = (info.verb, info.api_group, info.resource, info.subresource, info.namespace, info.name, user)
        return all(want is None or want == have for want, have in zip(wanted, actual, strict=True))

    def fires(self) -> bool:
        """Whether it applies to a request it matches; each call is one draw of its seeded random."""
        if self.count is not None and self.applied >= self.count:
            return False
        if self.probability is not None and self._random.random() >= self.probability:
            return False
        self.applied += 1
        return True

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.id}
        for name in MATCH_FIELDS:
            value = getattr(self, name)
            if value is not None:
                body[name] = value
        optional = {
            "status": self.status,
            "message": self.message,
            "retryAfterSeconds": self.retry_after_seconds,
            "watch": self.watch,
            "count": self.count,
            "probability": self.probability,
            "seed": self.seed,
        }
        body.update({key: value for key, value in optional.items() if value is not None})
        if self.latency_seconds:
            body["latencySeconds"] = self.latency_seconds
        if self.watch is not None:
            body["afterEvents"] = self.after_events
        if self.fail_write:
            body["failWrite"] = True
        body["applied"] = self.applied
        if self.count is not None:
            body["remaining"] = max(self.count - self.applied, 0)
        return body

    def describe(self) -> str:
        """What it injects, for the log line."""
        parts = [f"latency {self.latency_seconds}s"] if self.latency_seconds else []
        if self.status is not None:
            parts.append(f"status {self.status}")
        if self.watch == "drop":
            parts.append(f"watch dropped after {self.after_events} events")
        if self.watch == "expire":
            parts.append(f"watch expired (410) after {self.after_events} events")
        if self.fail_write:
            parts.append("storage write failure")
        return ", ".join(parts)


_RULE_KEYS = frozenset(
    {
        *MATCH_FIELDS,
        "status",
        "message",
        "retryAfterSeconds",
        "latencySeconds",
        "watch",
        "afterEvents",
        "failWrite",
        "count",
        "probability",
        "seed",
        "id",
    }
)


def _string(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise RuleError(f"{key}: must be a string")
    return value


def _integer(body: dict[str, Any], key: str, minimum: int) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RuleError(f"{key}: must be an integer of at least {minimum}")
    return value


def _number(body: dict[str, Any], key: str) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RuleError(f"{key}: must be a number")
    return float(value)


def parse_rule(rule_id: str, body: Any) -> FaultRule:
    """A rule from its JSON form (camelCase keys); RuleError says what is wrong with it."""
    if not isinstance(body, dict):
        raise RuleError("a fault rule must be a JSON object")
    unknown = sorted(set(body) - _RULE_KEYS)
    if unknown:
        raise RuleError(f"unknown fields: {', '.join(unknown)}")
    rule = FaultRule(rule_id, **{name: _string(body, name) for name in MATCH_FIELDS})
    rule.status = _integer(body, "status", 0)
    if rule.status is not None and rule.status not in STATUS_CODES:
        raise RuleError(f"status: must be one of {', '.join(map(str, STATUS_CODES))}")
    rule.message = _string(body, "message")
    rule.retry_after_seconds = _integer(body, "retryAfterSeconds", 1)
    latency = _number(body, "latencySeconds") or 0.0
    if not 0 <= latency <= MAX_LATENCY_SECONDS:
        raise RuleError(f"latencySeconds: must be between 0 and {MAX_LATENCY_SECONDS:g}")
    rule.latency_seconds = latency
    rule.watch = _string(body, "watch")
    if rule.watch is not None and rule.watch not in WATCH_ACTIONS:
        raise RuleError(f"watch: must be one of {', '.join(WATCH_ACTIONS)}")
    rule.after_events = _integer(body, "afterEvents", 0) or 0
    fail_write = body.get("failWrite", False)
    if not isinstance(fail_write, bool):
        raise RuleError("failWrite: must be a boolean")
    rule.fail_write = fail_write
    _check_actions(rule)
    _parse_frequency(rule, body)
    return rule


def _check_actions(rule: FaultRule) -> None:
    actions = [
        name
        for name, on in (
            ("status", rule.status is not None),
            ("watch", rule.watch is not None),
            ("failWrite", rule.fail_write),
        )
        if on
    ]
    if len(actions) > 1:
        raise RuleError(f"only one of status, watch and failWrite may be set, not {' and '.join(actions)}")
    if not actions and not rule.latency_seconds:
        raise RuleError("a fault rule needs an action: status, latencySeconds, watch or failWrite")
    if rule.watch is not None and rule.verb not in (None, "watch"):
        raise RuleError("watch: applies to watch requests only (verb must be watch or left out)")
    if rule.fail_write and rule.verb is not None and rule.verb not in WRITE_VERBS:
        raise RuleError(f"failWrite: applies to writes only ({', '.join(sorted(WRITE_VERBS))})")


def _parse_frequency(rule: FaultRule, body: dict[str, Any]) -> None:
    rule.count = _integer(body, "count", 1)
    rule.probability = _number(body, "probability")
    if rule.probability is not None and not 0 < rule.probability <= 1:
        raise RuleError("probability: must be in (0, 1]")
    rule.seed = _integer(body, "seed", 0)
    rule._random = random.Random(rule.seed)


class FaultInjector:
    """One server's rules, in the order they were added."""

    def __init__(self) -> None:
        self.rules: dict[str, FaultRule] = {}
        self._ids = itertools.count(1)

    def add(self, body: Any) -> FaultRule:
        rule = parse_rule(f"fault-{next(self._ids)}", body)
        self.rules[rule.id] = rule
        return rule

    def remove(self, rule_id: str) -> bool:
        return self.rules.pop(rule_id, None) is not None

    def clear(self) -> None:
        self.rules.clear()

    def pick(self, req: Request) -> FaultRule | None:
        for rule in self.rules.values():
            if rule.matches(req) and rule.fires():
                return rule
        return None


def _status_error(rule: FaultRule, req: Request) -> errors.StatusError:
    """The Status Kubernetes answers with for the rule's code."""
    info, message = req.info, rule.message
    if rule.status == 409:
        return errors.conflict(
            info.resource, info.api_group, info.name, message or errors.OPTIMISTIC_LOCK_MESSAGE
        )
    if rule.status == 410:
        return errors.expired(message or _too_old(req))
    if rule.status == 429:
        return errors.StatusError(
            429,
            "TooManyRequests",
            message or "Too many requests, please try again later.",
            {"retryAfterSeconds": rule.retry_after_seconds or 1},
        )
    if rule.status == 503:
        return errors.service_unavailable(message or "the server is currently unable to handle the request")
    if rule.status == 504:
        err = errors.timeout(
            message or "request did not complete within requested timeout - context deadline exceeded"
        )
        if rule.retry_after_seconds:
            err.details = {"retryAfterSeconds": rule.retry_after_seconds}
        return err
    return errors.internal_error(message or "injected fault")


def _too_old(req: Request) -> str:
    """The watch cache's text for a resourceVersion it no longer has."""
    requested = req.param("resourceVersion")
    version = int(requested) if requested.isdigit() else 1
    return f"too old resource version: {version} ({version + 1})"


def _log(rule: FaultRule, req: Request) -> None:
    user = req.user.name if req.user is not None else ""
    uri = req.path + (f"?{req.query_string.decode('latin-1')}" if req.query_string else "")
    log.info(
        'Injected fault rule="%s" verb="%s" URI="%s" user="%s" fault="%s"',
        rule.id,
        req.info.verb,
        uri,
        user,
        rule.describe(),
    )


def _log_write(rule: FaultRule, key: str) -> None:
    log.info('Injected fault rule="%s" failed the storage write of key="%s"', rule.id, key)


def with_fault_injection(handler: Handler, injector: FaultInjector, exempt_prefix: str) -> Handler:
    """Applies the first firing rule to a request (none to those under `exempt_prefix`)."""

    async def injecting(req: Request) -> Response:
        if not injector.rules or req.path.startswith(exempt_prefix):
            return await handler(req)
        rule = injector.pick(req)
        if rule is None:
            return await handler(req)
        _log(rule, req)
        if rule.latency_seconds:
            await asyncio.sleep(rule.latency_seconds)
        if rule.status is not None:
            raise _status_error(rule, req)
        if rule.fail_write:
            fault = WriteFault(rule.message or ETCD_TIMEOUT_MESSAGE, lambda key: _log_write(rule, key))
            with failing_writes(fault):
                return await handler(req)
        resp = await handler(req)
        if rule.watch is not None and isinstance(resp, StreamingResponse) and resp.status == 200:
            return _faulted_watch(req, resp, rule)
        return resp

    return injecting


def _faulted_watch(req: Request, resp: StreamingResponse, rule: FaultRule) -> StreamingResponse:
    protobuf = dict(resp.headers).get("content-type", "") == PROTOBUF_STREAM
    resp.chunks = _watch_events(req, resp.chunks, rule, protobuf)
    return resp


async def _watch_events(
    req: Request, inner: AsyncIterator[bytes], rule: FaultRule, protobuf: bool
) -> AsyncIterator[bytes]:
    """The watch's first `after_events` events, then its end (and a 410 ERROR event when it expires)."""
    req.chunk_writer = None  # no direct delivery: one chunk per event, so they can be counted
    sent = 0
    try:
        while sent < rule.after_events:
            try:
                chunk = await inner.__anext__()
            except StopAsyncIteration:
                return
            yield chunk
            sent += 1
        if rule.watch == "expire":
            yield _error_event(errors.expired(rule.message or _too_old(req)).status(), protobuf)
    finally:
        await inner.aclose()  # type: ignore[attr-defined]


def _error_event(status: dict[str, Any], protobuf: bool) -> bytes:
    if protobuf:
        from ...apimachinery import protobuf as pb  # loaded by the first protobuf client

        return pb.watch_frame("ERROR", pb.encode(status))
    return serializer.encode_json({"type": "ERROR", "object": status})
