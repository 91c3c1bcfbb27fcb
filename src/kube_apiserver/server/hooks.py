"""Post-start and pre-shutdown hooks; each post-start hook is also a readiness check
`poststarthook/<name>` that passes once the hook has finished (k8s server/hooks.go)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ..apimachinery.runtime import log_failure
from .healthz import HealthChecker

log = logging.getLogger(__name__)
Hook = Callable[[], Awaitable[None]]


class HookError(Exception):
    pass


@dataclass
class PostStartHook:
    name: str
    hook: Hook
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def health_check(self) -> HealthChecker:
        async def check() -> None:
            if not self.done.is_set():
                raise HookError("not finished")
        return HealthChecker(f"poststarthook/{self.name}", check)


@dataclass
class Hooks:
    post_start: dict[str, PostStartHook] = field(default_factory=dict)
    pre_shutdown: dict[str, Hook] = field(default_factory=dict)
    running: dict[str, asyncio.Task[None]] = field(default_factory=dict)  # the post-start hooks' tasks

    def add_post_start_hook(self, name: str, hook: Hook) -> None:
        if name in self.post_start:
            raise HookError(f"unable to add {name!r} because it was already registered")
        self.post_start[name] = PostStartHook(name, hook)

    def add_pre_shutdown_hook(self, name: str, hook: Hook) -> None:
        if name in self.pre_shutdown:
            raise HookError(f"unable to add {name!r} because it was already registered")
        self.pre_shutdown[name] = hook

    def merge(self, other: Hooks) -> None:
        for name, hook in other.post_start.items():
            if name in self.post_start:
                raise HookError(f"unable to add {name!r} because it was already registered")
            self.post_start[name] = hook
        for name, pre in other.pre_shutdown.items():
            self.add_pre_shutdown_hook(name, pre)

    async def run_post_start_hooks(self) -> None:
        loop = asyncio.get_running_loop()
        self.running = {name: loop.create_task(self._run(hook)) for name, hook in self.post_start.items()}

    async def stop_post_start_hooks(self) -> None:
        """The server stops: a hook still running stops where it is, as upstream's hooks see their context
        end, before the pre-shutdown hooks stop what the post-start ones started (else a controller still
        starting would start after its stop, and run on past the storage's close). Its check then passes:
        nothing is pending any more, and a /livez failing while the server drains would have it killed."""
        unfinished = {name: task for name, task in self.running.items() if not task.done()}
        for task in unfinished.values():
            task.cancel()
        await asyncio.gather(*unfinished.values(), return_exceptions=True)
        for name in unfinished:
            self.post_start[name].done.set()

    @staticmethod
    async def _run(hook: PostStartHook) -> None:
        try:
            await hook.hook()
        except Exception:
            log_failure(log, "PostStartHook %r failed", hook.name)
            raise
        hook.done.set()

    async def run_pre_shutdown_hooks(self) -> None:
        for name, hook in self.pre_shutdown.items():
            try:
                await hook()
            except Exception:  # noqa: BLE001 - one failing hook does not stop the others
                log_failure(log, "PreShutdownHook %r failed", name)
