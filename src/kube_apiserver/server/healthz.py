"""/healthz, /livez and /readyz with named checks: ?verbose, ?exclude=, /readyz/<check>
(k8s.io/apiserver/pkg/server/healthz)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..endpoints.http import Request, Response, text
from .mux import PathRecorderMux


class HealthCheckError(Exception):
    pass


CheckFunc = Callable[[], Awaitable[None]]  # raises to fail


@dataclass(frozen=True)
class HealthChecker:
    name: str
    check: CheckFunc


async def _ping() -> None:
    return None


PING = HealthChecker("ping", _ping)


async def _run(checker: HealthChecker) -> str | None:
    try:
        await checker.check()
    except Exception as err:  # noqa: BLE001 - a failing check is reported, not raised
        return str(err) or type(err).__name__
    return None


def install_handler(mux: PathRecorderMux, path: str, checks: Callable[[], list[HealthChecker]]) -> None:
    """`checks` is read per request, so hooks added later appear without reinstalling."""
    name = path.strip("/")

    async def root(req: Request) -> Response:
        excluded = set()
        for value in req.query.get("exclude", []):
            excluded.update(v.strip() for v in value.split(",") if v.strip())
        verbose = "verbose" in req.query and req.param("verbose") not in ("false", "0")
        lines, failed = [], False
        known = {c.name for c in checks()}
        for checker in checks():
            if checker.name in excluded:
                lines.append(f"[+]{checker.name} excluded: ok")
                continue
            err = await _run(checker)
            failed |= err is not None
            lines.append(f"[+]{checker.name} ok" if err is None else f"[-]{checker.name} failed: reason withheld")
        for unknown in sorted(excluded - known):
            lines.append(f"warn: some health checks cannot be excluded: no matches for \"{unknown}\"")
        if failed:
            return text(500, "\n".join(lines) + f"\n{name} check failed\n")
        if verbose:
            return text(200, "\n".join(lines) + f"\n{name} check passed\n")
        return text(200, "ok")

    async def single(req: Request) -> Response:
        check_name = req.path[len(path) + 1:]
        checker = next((c for c in checks() if c.name == check_name), None)
        if checker is None:
            return text(404, "404 page not found\n")
        err = await _run(checker)
        if err is not None:
            return text(500, f"internal server error: {err}\n")
        return text(200, "ok")

    mux.handle(path, root)
    mux.handle_prefix(path + "/", single)
