"""The server's clock under --deterministic (cmd/testing_clock.py), through /debug/testing/clock: it stands
still at --deterministic-start until the test moves it, and what the cluster does on time (CronJob
schedules, TTLs, lease renewals, work queue delays) happens as the test moves it.

    server = APIServer(deterministic=True)      # or args=["--deterministic", "--deterministic-seed=3"]
    server.clock.now()                           # datetime(2025, 1, 1, tzinfo=UTC)
    server.clock.advance(3600)                   # or a timedelta; returns the new now
    server.clock.set(datetime(2025, 2, 1, tzinfo=UTC))

`server` is anything with `.request(method, path, body=None, headers=None)` (kube_apiserver.testing.APIServer)."""

from __future__ import annotations

import datetime
from typing import Any

from .serverlike import ServerLike

CLOCK_PATH = "/debug/testing/clock"


class ClockError(Exception):
    """The server refused: `status` is the HTTP code, `body` its Status (or {})."""

    def __init__(self, status: int, body: dict[str, Any]):
        message = body.get("message") or f"HTTP {status}"
        if status == 404:
            message += " (is the server running with --enable-testing-endpoints?)"
        super().__init__(message)
        self.status = status
        self.body = body


class ServerClock:
    def __init__(self, server: ServerLike):
        self.server = server

    def _call(self, method: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.server.request(method, CLOCK_PATH, body)
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        if response.status != 200:
            raise ClockError(response.status, answer if isinstance(answer, dict) else {})
        return answer

    @property
    def deterministic(self) -> bool:
        """Whether the server runs with --deterministic (else its clock is the wall's and cannot move)."""
        return bool(self._call("GET")["deterministic"])

    def now(self) -> datetime.datetime:
        return _parse(self._call("GET")["now"])

    def advance(self, seconds: float | datetime.timedelta) -> datetime.datetime:
        """Moves the clock forward; what was due by then fires. Returns the new now."""
        if isinstance(seconds, datetime.timedelta):
            seconds = seconds.total_seconds()
        return _parse(self._call("POST", {"advance": seconds})["now"])

    def set(self, when: datetime.datetime | str) -> datetime.datetime:
        """Moves the clock to `when` (timezone-aware or RFC 3339; not before now)."""
        if isinstance(when, datetime.datetime):
            if when.tzinfo is None:
                raise ValueError("the time to set must be timezone-aware")
            when = when.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return _parse(self._call("POST", {"set": when})["now"])


def _parse(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
