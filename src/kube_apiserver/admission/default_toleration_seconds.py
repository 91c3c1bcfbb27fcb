"""DefaultTolerationSeconds: a pod that does not tolerate the not-ready and unreachable NoExecute taints gets
tolerations of them for 300 seconds (plugin/pkg/admission/defaulttolerationseconds)."""

from __future__ import annotations

from typing import Any

from .interfaces import CREATE, UPDATE, Attributes

Object = dict[str, Any]
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_SECONDS = 300  # --default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds


def tolerates(tolerations: list[Any], key: str) -> bool:
    """Some toleration of `key` (or of every key) with the NoExecute effect (or every effect)."""
    return any(isinstance(t, dict) and t.get("key", "") in (key, "") and t.get("effect", "") in ("NoExecute", "")
               for t in tolerations)


class DefaultTolerationSeconds:
    name = "DefaultTolerationSeconds"

    def __init__(self, not_ready_seconds: int = DEFAULT_SECONDS, unreachable_seconds: int = DEFAULT_SECONDS):
        self.seconds = {NOT_READY: not_ready_seconds, UNREACHABLE: unreachable_seconds}

    def handles(self, operation: str) -> bool:
        return operation in (CREATE, UPDATE)

    async def admit(self, attrs: Attributes) -> None:
        if attrs.group or attrs.resource != "pods" or attrs.subresource or not isinstance(attrs.object, dict):
            return
        spec = attrs.object.get("spec")
        if not isinstance(spec, dict):
            return
        tolerations = spec.get("tolerations") if isinstance(spec.get("tolerations"), list) else []
        added = [{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
                 for key, seconds in self.seconds.items() if not tolerates(tolerations, key)]
        if added:
            spec["tolerations"] = [*tolerations, *added]
