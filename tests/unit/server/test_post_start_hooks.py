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


def test_hooks_that_fail_for_the_store_out_of_reach_say_so_in_one_line(caplog) -> None:
    """etcd gone: the bootstrap controller's first sync and the controllers' stop failed with a traceback each."""
    import logging

    from kube_apiserver.storage.kv import StorageUnavailableError

    async def main() -> None:
        hooks = Hooks()

        async def unreachable() -> None:
            raise StorageUnavailableError("etcd: failed to connect to all addresses")

        hooks.add_post_start_hook("bootstrap-controller", unreachable)
        hooks.add_pre_shutdown_hook("stop-embedded-controllers", unreachable)
        await hooks.run_post_start_hooks()
        await asyncio.gather(*hooks.running.values(), return_exceptions=True)
        await hooks.stop_post_start_hooks()
        await hooks.run_pre_shutdown_hooks()

    with caplog.at_level(logging.ERROR, logger="kube_apiserver"):
        asyncio.run(main())
    assert [(r.getMessage(), r.exc_info) for r in caplog.records] == [
        ("PostStartHook 'bootstrap-controller' failed: etcd: failed to connect to all addresses", None),
        ("PreShutdownHook 'stop-embedded-controllers' failed: etcd: failed to connect to all addresses", None),
    ]
