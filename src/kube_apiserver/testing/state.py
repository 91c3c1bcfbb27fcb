"""State control for tests: snapshots of the whole store, restored on request, and a reset to what the server
held when it became ready, through /debug/testing/snapshots and /debug/testing/reset (the server runs with
--enable-testing-endpoints).

A restore writes the difference as ordinary writes, so the server keeps running and every watch sees it as
DELETED, ADDED and MODIFIED events; the objects that come back have new resourceVersions. The server's own
Leases in kube-system and its endpoint leases are left alone. It holds at most 16 named snapshots: taking
one more forgets the oldest.

    name = state.snapshot(server)
    ...  # the test changes things
    state.restore(server, name)
    state.reset(server)  # as the server started

`server` is anything with `.request(method, path, body=None, headers=None)` answering `.status` and
`.json()` (kube_apiserver.testing.APIServer)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from .serverlike import ServerLike

SNAPSHOTS_PATH = "/debug/testing/snapshots"
RESET_PATH = "/debug/testing/reset"


class StateError(Exception):
    """The server refused: `status` is the HTTP code, `body` its Status (or {} when it sent none)."""

    def __init__(self, status: int, body: dict[str, Any]):
        message = body.get("message") or f"HTTP {status}"
        if status == 404 and not body.get("details", {}).get("name"):
            message += " (is the server running with --enable-testing-endpoints?)"
        super().__init__(message)
        self.status = status
        self.body = body


def _call(server: ServerLike, method: str, path: str, body: Any = None) -> dict[str, Any]:
    resp = server.request(method, path, body)
    try:
        answer = resp.json()
    except ValueError:
        answer = {}
    if not 200 <= resp.status < 300:
        raise StateError(resp.status, answer if isinstance(answer, dict) else {})
    return answer


def snapshot(server: ServerLike, name: str = "") -> str:
    """Takes a snapshot of the whole store; returns its name (`name`, or one the server makes up)."""
    return str(_call(server, "POST", SNAPSHOTS_PATH, {"name": name} if name else None)["name"])


def restore(server: ServerLike, name: str) -> dict[str, Any]:
    """Brings the store back to snapshot `name`; returns how many keys were deleted, created and updated,
    and the resourceVersion after the restore."""
    return _call(server, "POST", f"{SNAPSHOTS_PATH}/{quote(name, safe='')}/restore")


def reset(server: ServerLike) -> dict[str, Any]:
    """Brings the store back to what it held when the server became ready."""
    return _call(server, "POST", RESET_PATH)


def delete_snapshot(server: ServerLike, name: str) -> None:
    _call(server, "DELETE", f"{SNAPSHOTS_PATH}/{quote(name, safe='')}")


def snapshots(server: ServerLike) -> list[str]:
    """The names of the snapshots the server holds, oldest first."""
    return [s["name"] for s in _call(server, "GET", SNAPSHOTS_PATH)["snapshots"]]
