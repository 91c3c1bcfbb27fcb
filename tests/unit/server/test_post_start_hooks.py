"""Post-start hooks at shutdown: one still running stops where it is before the pre-shutdown hooks run."""

from __future__ import annotations

import asyncio

from kube_apiserver.server.hooks import Hooks


def test_a_hook_still_running_is_stopped_before_the_pre_shutdown_hooks() -> None:
    async def main() -> list[str]:
        hooks, seen = Hooks(), []
        starting = asyncio.Event()

        async def slow_start() -> None:
            starting.set()
            try:
                await asyncio.Event().wait()  # a controller waiting for its first sync
            except asyncio.CancelledError:
                seen.append("start stopped")
                raise
            seen.append("started")  # never: it would start after its stop

        async def quick_start() -> None:
            seen.append("quick started")

        async def stop() -> None:
            seen.append("stop")

        hooks.add_post_start_hook("slow", slow_start)
        hooks.add_post_start_hook("quick", quick_start)
        hooks.add_pre_shutdown_hook("stop-slow", stop)
        await hooks.run_post_start_hooks()
        await starting.wait()
        await asyncio.sleep(0)
        await hooks.stop_post_start_hooks()
        await hooks.run_pre_shutdown_hooks()
        # the stopped hook's check passes: nothing is pending, and /livez must not fail while the server drains
        assert hooks.post_start["quick"].done.is_set() and hooks.post_start["slow"].done.is_set()
        return seen

    assert asyncio.run(main()) == ["quick started", "start stopped", "stop"]
