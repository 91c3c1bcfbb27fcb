"""What a registry call knows of its request (k8s genericapirequest context): namespace, user, options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class PhaseRunner(Protocol):
    """Runs one CPU-heavy synchronous phase of a request (the handlers' clock: off the event loop for a big
    request, else on it with a turn for the loop after)."""

    async def run(self, fn: Callable[..., T], *args: Any) -> T: ...


@dataclass(slots=True, frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """authentication/v1 UserInfo as JSON, its empty fields left out (TokenReview, AdmissionReview,
        CSRs, CEL's request.userInfo)."""
        out: dict[str, Any] = {"username": self.name} if self.name else {}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra.items()}
        return out


ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))


@dataclass(slots=True)
class Context:
    namespace: str = ""
    user: UserInfo = ANONYMOUS
    dry_run: bool = False
    field_manager: str = ""
    # Free-form values later layers attach (audit annotations, warnings to return).
    warnings: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    phases: PhaseRunner | None = None

    async def run_phase(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)`, a walk of the whole object (the strategy's checks), as the request runs its phases."""
        if self.phases is None:
            return fn(*args)
        return await self.phases.run(fn, *args)
