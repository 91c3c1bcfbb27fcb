"""Post-ready hooks (server/hooks.py): they run once the server is ready, as /readyz would answer 200 (every
post-start hook done, every readiness check passing), and not at all when the server stops before."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from kube_apiserver.server import healthz
from kube_apiserver.server.generic_api_server import PreparedGenericAPIServer
from kube_apiserver.server.hooks import HookError, Hooks


def _server(hooks: Hooks, passing: list[bool]) -> PreparedGenericAPIServer:
    async def check() -> None:
        if not passing[0]:
            raise healthz.HealthCheckError("not yet")

    return PreparedGenericAPIServer(
        SimpleNamespace(hooks=hooks), lambda: [healthz.HealthChecker("informer-sync", check)]
    )


def test_a_post_ready_hook_waits_for_the_post_start_hooks_and_the_readiness_checks():
    async def scenario() -> list[str]:
        hooks, gate, ran, passing = Hooks(), asyncio.Event(), [], [False]
        hooks.add_post_start_hook("slow", gate.wait)

        async def after() -> None:
            ran.append("after")

        hooks.add_post_ready_hook("after", after)
        prepared, stop = _server(hooks, passing), asyncio.Event()
        await hooks.run_post_start_hooks()
        waiting = asyncio.ensure_future(prepared._when_ready(stop))
        await asyncio.sleep(0.05)
        assert ran == []  # a post-start hook is not done
        gate.set()
        await asyncio.sleep(0.05)
        assert ran == []  # a readiness check fails
        passing[0] = True
        await asyncio.wait_for(waiting, 5)
        return ran

    assert asyncio.run(scenario()) == ["after"]


def test_a_server_stopped_before_it_is_ready_runs_no_post_ready_hook():
    async def scenario() -> list[str]:
        hooks, ran = Hooks(), []

        async def after() -> None:
            ran.append("after")

        hooks.add_post_ready_hook("after", after)
        prepared, stop = _server(hooks, [False]), asyncio.Event()
        waiting = asyncio.ensure_future(prepared._when_ready(stop))
        await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(waiting, 5)
        return ran

    assert asyncio.run(scenario()) == []


def test_post_ready_hooks_merge_into_the_outer_server_and_keep_unique_names():
    inner, outer = Hooks(), Hooks()

    async def hook() -> None:
        return None

    inner.add_post_ready_hook("start-embedded-controllers", hook)
    outer.merge(inner)
    assert list(outer.post_ready) == ["start-embedded-controllers"]
    with pytest.raises(HookError):
        outer.add_post_ready_hook("start-embedded-controllers", hook)
