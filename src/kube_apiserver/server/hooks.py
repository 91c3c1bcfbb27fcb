"""Post-start, post-ready and pre-shutdown hooks; each post-start hook is also a readiness check
`poststarthook/<name>` that passes once the hook has finished (k8s server/hooks.go). A post-ready hook runs
once the server is ready (every post-start hook done, every readiness check passing): work readiness does
not wait for, which would only slow it down, as the embedded controllers (kube-controller-manager starts
once its API server answers)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

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
    post_ready: dict[str, Hook] = field(default_factory=dict)
    pre_shutdown: dict[str, Hook] = field(default_factory=dict)

    def add_post_start_hook(self, name: str, hook: Hook) -> None:
        if name in self.post_start:
            raise HookError(f"unable to add {name!r} because it was already registered")
        self.post_start[name] = PostStartHook(name, hook)

    def add_post_ready_hook(self, name: str, hook: Hook) -> None:
        if name in self.post_ready:
            raise HookError(f"unable to add {name!r} because it was already registered")
        self.post_ready[name] = hook

    def add_pre_shutdown_hook(self, name: str, hook: Hook) -> None:
        if name in self.pre_shutdown:
            raise HookError(f"unable to add {name!r} because it was already registered")
        self.pre_shutdown[name] = hook

    def merge(self, other: Hooks) -> None:
        for name, hook in other.post_start.items():
            if name in self.post_start:
                raise HookError(f"unable to add {name!r} because it was already registered")
            self.post_start[name] = hook
        for name, after_ready in other.post_ready.items():
            self.add_post_ready_hook(name, after_ready)
        for name, pre in other.pre_shutdown.items():
            self.add_pre_shutdown_hook(name, pre)

    async def run_post_start_hooks(self) -> None:
        for hook in self.post_start.values():
            asyncio.get_running_loop().create_task(self._run(hook))

    @staticmethod
    async def _run(hook: PostStartHook) -> None:
        try:
            await hook.hook()
        except Exception:
            log.exception("PostStartHook %r failed", hook.name)
            raise
        hook.done.set()

    async def post_start_hooks_done(self) -> None:
        """Until every post-start hook has finished (a failed one never does)."""
        await asyncio.gather(*(hook.done.wait() for hook in self.post_start.values()))

    async def run_post_ready_hooks(self) -> None:
        """Runs them together; one failing is logged and does not stop the others."""
        await asyncio.gather(*(self._run_post_ready(name, hook) for name, hook in self.post_ready.items()))

    @staticmethod
    async def _run_post_ready(name: str, hook: Hook) -> None:
        try:
            await hook()
        except Exception:  # noqa: BLE001 - logged; the server stays up, as after a failed controller start
            log.exception("PostReadyHook %r failed", name)

    async def run_pre_shutdown_hooks(self) -> None:
        for name, hook in self.pre_shutdown.items():
            try:
                await hook()
            except Exception:  # noqa: BLE001 - one failing hook does not stop the others
                log.exception("PreShutdownHook %r failed", name)
