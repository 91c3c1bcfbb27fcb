"""What a Pod Security check is and returns, and the helpers the checks share (pod-security-admission's
policy/checks.go, helpers.go and visitor.go). Pods are plain dicts: a missing or null field is Go's nil."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...apimachinery.field import go_quote
from .api import BASELINE, RESTRICTED, Version

Object = dict[str, Any]
UNKNOWN_FORBIDDEN_REASON = "unknown forbidden reason"


@dataclass(frozen=True, slots=True)
class CheckResult:
    allowed: bool = True
    forbidden_reason: str = ""
    forbidden_detail: str = ""


ALLOWED = CheckResult()
CheckPod = Callable[[Object, Object], CheckResult]  # (pod metadata, pod spec) -> result


def forbid(reason: str, detail: str = "") -> CheckResult:
    return CheckResult(False, reason, detail)


@dataclass(frozen=True, slots=True)
class VersionedCheck:
    minimum_version: Version
    check_pod: CheckPod
    # Baseline checks this restricted check replaces (at and after its minimum version).
    override_check_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    level: str  # baseline or restricted
    versions: tuple[VersionedCheck, ...]

    def __post_init__(self) -> None:
        assert self.level in (BASELINE, RESTRICTED), self.level


def v1(minor: int) -> Version:
    return Version(minor)


@dataclass(slots=True)
class AggregateCheckResult:
    allowed: bool = True
    forbidden_reasons: list[str] = field(default_factory=list)
    forbidden_details: list[str] = field(default_factory=list)

    def forbidden_reason(self) -> str:
        """`host ports, privileged`: the reasons alone, as a namespace's pods are summarized."""
        return ", ".join(self.forbidden_reasons)

    def forbidden_detail(self) -> str:
        """`host ports (8080, 9090), privileged (...)`: each reason with its detail, for one pod."""
        return ", ".join(f"{reason} ({detail})" if detail else reason
                         for reason, detail in zip(self.forbidden_reasons, self.forbidden_details, strict=True))


def aggregate_check_results(results: list[CheckResult]) -> AggregateCheckResult:
    out = AggregateCheckResult()
    for result in results:
        if not result.allowed:
            out.forbidden_reasons.append(result.forbidden_reason or UNKNOWN_FORBIDDEN_REASON)
            out.forbidden_details.append(result.forbidden_detail)
    out.allowed = not out.forbidden_reasons
    return out


# --- helpers shared by the checks ---

def sub(obj: Object | None, key: str) -> Object | None:
    """obj.key when it is set (a struct pointer that is not nil)."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else None


def containers(spec: Object) -> Iterator[Object]:
    """Init containers, containers, then ephemeral containers (visitContainers)."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(key) or ():
            if isinstance(container, dict):
                yield container


def name_of(container: Object) -> str:
    return str(container.get("name") or "")


def join_quote(items: list[str]) -> str:
    """`"a", "b"`."""
    return ", ".join(f'"{item}"' for item in items)


def pluralize(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def containers_phrase(names: list[str]) -> str:
    """`container "a"` or `containers "a", "b"`."""
    return f"{pluralize('container', 'containers', len(names))} {join_quote(names)}"


def is_windows(spec: Object) -> bool:
    return (sub(spec, "os") or {}).get("name") == "windows"


def annotation(key: str, value: str) -> str:
    """`key="value"` as Go's %s=%q prints it."""
    return f"{key}={go_quote(value)}"
