"""--deterministic (apimachinery/clock.py): the server's clock stands still at --deterministic-start until a
test advances it, and UIDs and generated names come from --deterministic-seed, so the objects a test records
are byte-identical run to run. With --enable-testing-endpoints the test drives the clock:

  GET  /debug/testing/clock                         -> {"now": RFC 3339 with microseconds, "deterministic": bool}
  POST /debug/testing/clock {"advance": "90s" | 90} -> the same, after the clock moved on (a Go duration or
                                                       seconds)
  POST /debug/testing/clock {"set": RFC 3339}       -> the same, at that time (never before now)

A POST to a server without --deterministic (its clock is the wall's), a bad body or a move back is a 400."""

from __future__ import annotations

import datetime
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..apimachinery import clock, errors, serializer
from ..apimachinery.goduration import parse_duration
from ..endpoints.http import Handler, Request, Response

if TYPE_CHECKING:
    from ..cli.flagset import FlagSet
    from ..server.generic_api_server import GenericAPIServer
    from .server import ServerConfig

CLOCK_PATH = "/debug/testing/clock"
MAX_BODY_BYTES = 4096
MAX_ADVANCE_SECONDS = 100 * 365 * 86400.0  # a century: past it datetime arithmetic overflows soon
DEFAULT_START = "2025-01-01T00:00:00Z"


@dataclass
class DeterministicOptions:
    enabled: bool = False
    seed: int = 0
    start: str = DEFAULT_START

    def add_flags(self, fs: FlagSet) -> None:
        fs.bool_var(
            self,
            "enabled",
            "deterministic",
            "For tests: a clock that stands still at --deterministic-start until the test advances it "
            "(POST /debug/testing/clock with --enable-testing-endpoints), and UIDs and generated names derived "
            "from --deterministic-seed, so the objects a test writes are the same bytes run to run. "
            "Never enable it in production.",
        )
        fs.int_var(
            self, "seed", "deterministic-seed", "With --deterministic: the seed of UIDs and generated names."
        )
        fs.string_var(
            self,
            "start",
            "deterministic-start",
            "With --deterministic: the clock's time at start (RFC 3339).",
        )

    def validate(self) -> list[str]:
        try:
            parse_time(self.start)
        except ValueError as err:
            return [f"--deterministic-start: {err}"]
        return []

    def sources(self) -> clock.Sources | None:
        """The clock and ids a server with these options installs; None: the real ones."""
        if not self.enabled:
            return None
        return clock.deterministic(self.seed, parse_time(self.start))


def parse_time(text: str) -> datetime.datetime:
    """An RFC 3339 time (a zone is required: a clock's time is absolute)."""
    try:
        when = datetime.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f'invalid time "{text}": expected RFC 3339, e.g. {DEFAULT_START}') from None
    if when.tzinfo is None:
        raise ValueError(f'invalid time "{text}": RFC 3339 needs a zone (Z or +hh:mm)')
    return when.astimezone(datetime.UTC)


def micro_time(when: datetime.datetime) -> str:
    return when.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def install_testing_clock(config: ServerConfig, server: GenericAPIServer) -> None:
    """The clock is the one the server's context holds now (cmd/server.py `run` installed it first)."""
    server.handler.non_restful_mux.handle_unlisted(CLOCK_PATH, clock_handler(clock.current_clock()))


def clock_handler(server_clock: clock.Clock) -> Handler:
    def state() -> Response:
        body = {"now": micro_time(server_clock.now()), "deterministic": server_clock.deterministic}
        return Response(200, serializer.encode_json(body))

    async def serve(req: Request) -> Response:
        try:
            method = req.method.upper()
            if method == "POST":
                move(server_clock, await req.body(MAX_BODY_BYTES))
            elif method != "GET":
                raise errors.method_not_allowed()
            return state()
        except errors.StatusError as err:
            return Response(err.code, serializer.encode_json(err.status()))

    return serve


def move(server_clock: clock.Clock, raw: bytes) -> None:
    if not isinstance(server_clock, clock.FakeClock):
        raise errors.bad_request(
            "the server's clock is the wall clock: start it with --deterministic to move it"
        )
    body = _parse_body(raw)
    try:
        if "advance" in body:
            server_clock.advance(_seconds(body["advance"]))
        else:
            target = body["set"]
            if not isinstance(target, str):
                raise ValueError(f"set: must be an RFC 3339 time, not {json.dumps(target)}")
            server_clock.set(parse_time(target))
    except (ValueError, OverflowError) as err:
        raise errors.bad_request(str(err)) from None


def _parse_body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw or b"null")
    except ValueError as err:
        raise errors.bad_request(f"the clock request is not JSON: {err}") from None
    if not isinstance(body, dict) or len(body) != 1 or not {"advance", "set"} & set(body):
        raise errors.bad_request(
            'the clock request must be {"advance": "90s" | seconds} or {"set": RFC 3339}'
        )
    return body


def _seconds(value: Any) -> float:
    if isinstance(value, str):
        seconds = parse_duration(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise ValueError(f'advance: must be a duration ("90s") or seconds, not {json.dumps(value)}')
    if not math.isfinite(seconds) or seconds > MAX_ADVANCE_SECONDS:
        raise ValueError(f"advance: {value} is more than a century")
    return seconds
