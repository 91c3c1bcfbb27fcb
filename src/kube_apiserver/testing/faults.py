"""Fault injection for tests: rules that make the server's matching requests fail, through
/debug/testing/faults (the server runs with --enable-testing-endpoints). Every injected fault is logged by
the server ("Injected fault rule=...").

    rule = faults.inject(server, verb="update", resource="configmaps", status=409, count=2)
    with faults.injected(server, resource="pods", verb="watch", watch="drop", after_events=3):
        ...  # the controller's watch of pods ends after 3 events; the rule is removed at the end
    with faults.injected(server, verb="create", resource="secrets", fail_write=True):
        ...  # admission and validation run, then the commit fails: 500, nothing written

A rule matches on verb, group ("" is the core group), resource, subresource, namespace, name and user (a
field left out matches anything). Its action is one of: `status` (409, 410, 429 with `retry_after`, 500, 503,
504, answered with the Status Kubernetes sends for it, `message` replacing its text), `watch` ("drop": the
stream ends after `after_events` events; "expire": it then ends with a 410 Expired ERROR event) or
`fail_write`; `latency` (seconds) may come alone or with any. It applies `count` times (default: always),
each time with `probability` drawn from a random seeded with `seed`, so a run is reproducible.

`server` is anything with `.request(method, path, body=None, headers=None)` answering `.status`, `.body`
and `.json()` (kube_apiserver.testing.APIServer)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from .serverlike import ResponseLike, ServerLike

FAULTS_PATH = "/debug/testing/faults"
JSON_HEADERS = {"Content-Type": "application/json"}


class FaultError(RuntimeError):
    """The server refused a fault request (a bad rule, an unknown id, testing endpoints not enabled)."""

    def __init__(self, action: str, resp: ResponseLike):
        self.status = resp.status
        try:
            message = resp.json().get("message", "")
        except ValueError:
            message = resp.body.decode("utf-8", "replace")
        super().__init__(f"{action}: {resp.status} {message}")


def _checked(resp: ResponseLike, action: str, ok: int = 200) -> ResponseLike:
    if resp.status != ok:
        raise FaultError(action, resp)
    return resp


def rule_body(
    *,
    verb: str | None = None,
    group: str | None = None,
    resource: str | None = None,
    subresource: str | None = None,
    namespace: str | None = None,
    name: str | None = None,
    user: str | None = None,
    status: int | None = None,
    message: str | None = None,
    retry_after: int | None = None,
    latency: float | None = None,
    watch: str | None = None,
    after_events: int | None = None,
    fail_write: bool = False,
    count: int | None = None,
    probability: float | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """The JSON rule /debug/testing/faults takes, from keyword arguments (None ones left out)."""
    fields = {
        "verb": verb, "group": group, "resource": resource, "subresource": subresource,
        "namespace": namespace, "name": name, "user": user, "status": status, "message": message,
        "retryAfterSeconds": retry_after, "latencySeconds": latency, "watch": watch,
        "afterEvents": after_events, "failWrite": fail_write or None, "count": count,
        "probability": probability, "seed": seed,
    }  # fmt: skip
    return {key: value for key, value in fields.items() if value is not None}


def inject(server: ServerLike, **rule: Any) -> str:
    """Adds a rule (rule_body's keywords); returns its id."""
    body = json.dumps(rule_body(**rule)).encode()
    resp = _checked(server.request("POST", FAULTS_PATH, body, JSON_HEADERS), "inject fault", ok=201)
    return resp.json()["id"]


def remove(server: ServerLike, rule_id: str) -> None:
    _checked(server.request("DELETE", f"{FAULTS_PATH}/{quote(rule_id, safe='')}"), f"remove fault {rule_id}")


def clear(server: ServerLike) -> None:
    """Removes every rule."""
    _checked(server.request("DELETE", FAULTS_PATH), "clear faults")


def rules(server: ServerLike) -> list[dict[str, Any]]:
    """The rules in the order they apply, each with `applied` (how often it fired) and, with a count,
    `remaining`."""
    return _checked(server.request("GET", FAULTS_PATH), "list faults").json()["items"]


def get(server: ServerLike, rule_id: str) -> dict[str, Any]:
    return _checked(
        server.request("GET", f"{FAULTS_PATH}/{quote(rule_id, safe='')}"), f"get fault {rule_id}"
    ).json()


@contextlib.contextmanager
def injected(server: ServerLike, **rule: Any) -> Iterator[str]:
    """A rule for the block's duration: its id inside, removed at the end (if still there)."""
    rule_id = inject(server, **rule)
    try:
        yield rule_id
    finally:
        with contextlib.suppress(FaultError):
            remove(server, rule_id)


def drop_watch(server: ServerLike, after_events: int = 0, **match: Any) -> str:
    """Matching watches end after `after_events` events (a client reconnects from its last resourceVersion)."""
    return inject(server, watch="drop", after_events=after_events, **match)


def expire_watch(server: ServerLike, after_events: int = 0, **match: Any) -> str:
    """Matching watches end with a 410 Expired ERROR event after `after_events` events (a client relists)."""
    return inject(server, watch="expire", after_events=after_events, **match)


def fail_writes(server: ServerLike, **match: Any) -> str:
    """Matching writes fail at the commit (500, etcd's "request timed out"), after admission and validation."""
    return inject(server, fail_write=True, **match)
