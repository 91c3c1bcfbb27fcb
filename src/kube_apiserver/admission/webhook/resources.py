"""The equivalent resource mapper (k8s runtime.EquivalentResourceMapper) over the server's equivalent
resource registry (what the API installer registered as it installed each group version, custom
resources' included): resources are equivalent when they are one storage served at several group/versions
(core and events.k8s.io events, autoscaling v1 and v2 HPAs). Also converts an object between equivalent
versions and applies a version's defaults (the request scopes' object interfaces), which matchPolicy
Equivalent and webhook patches need."""

from __future__ import annotations

from typing import Any

from ...apimachinery.equivalence import EquivalentResourceRegistry
from .rules import GVK, GVR, Request

Object = dict[str, Any]
MAX_WRAPPING = 4  # a served REST wraps its Store a few times at most (converted status of a subresource)


def _unwrap(storage: Any) -> tuple[Any, Any]:
    """(the innermost storage, the conversion on the way there, if any)."""
    conversion = None
    for _ in range(MAX_WRAPPING):
        conversion = conversion or getattr(storage, "conversion", None)
        inner = getattr(storage, "inner", None) or getattr(storage, "converted", None)
        if inner is None:
            break
        storage = inner
    return storage, conversion


def _identity(storage: Any) -> str | None:
    inner, _ = _unwrap(storage)
    prefix = getattr(inner, "key_prefix", None) or getattr(getattr(inner, "store", None), "key_prefix", None)
    return prefix if isinstance(prefix, str) else None


class ResourceMapper:
    def __init__(self, registry: EquivalentResourceRegistry | None = None) -> None:
        self.registry = registry if registry is not None else EquivalentResourceRegistry()
        self._by_identity: dict[tuple[str, str], list[GVR]] | None = None
        self._by_kind_version: dict[tuple[str, str, str, str], GVR] = {}
        self._indexed = -1

    def storage(self, resource: GVR, subresource: str) -> Any:
        key = f"{resource.resource}/{subresource}" if subresource else resource.resource
        scope = self.registry.scope(resource.group, resource.version, key)
        return scope.storage if scope is not None else None

    def _index(self) -> dict[tuple[str, str], list[GVR]]:
        # Custom resources come and go: the index follows the registry's generation it was built from.
        if self.registry.generation != self._indexed:
            self._by_identity, self._indexed = None, self.registry.generation
        if self._by_identity is None:
            self._by_identity, self._by_kind_version = {}, {}
            for (group, version), scopes in self.registry.group_versions.items():
                for key, scope in scopes.items():
                    resource, _, sub = key.partition("/")
                    info = scope.info
                    if (info.group, info.version) != (group, version):  # a subresource of another kind (scale)
                        self._by_kind_version[(info.group, info.version, resource, sub)] = GVR(group, version, resource)
                    identity = _identity(scope.storage)
                    if identity is not None:
                        self._by_identity.setdefault((identity, sub), []).append(GVR(group, version, resource))
        return self._by_identity

    def served_resource(self, request: Request) -> Request:
        """The request with the URL's group and version when the attributes carry the kind's instead
        (deployments/scale is autoscaling/v1 Scale, served at apps/v1)."""
        if not request.subresource:
            return request
        self._index()
        key = (request.resource.group, request.resource.version, request.resource.resource, request.subresource)
        served = self._by_kind_version.get(key)
        return request if served is None else request.with_resource(served)

    def equivalents(self, resource: GVR, subresource: str) -> list[GVR]:
        """EquivalentResourcesFor: the resource itself and the others sharing its storage."""
        identity = _identity(self.storage(resource, subresource))
        if identity is None:
            return [resource]
        return self._index().get((identity, subresource), [resource])

    def kind_for(self, resource: GVR, subresource: str) -> GVK | None:
        storage = self.storage(resource, subresource)
        info = getattr(storage, "info", None)
        return None if info is None else GVK(info.group, info.version, info.kind)

    async def convert(self, obj: Object | None, source: GVR, target: GVR, subresource: str) -> Object | None:
        """`obj` as served at `target`, from its form at `source` (through the stored version; a custom
        resource through its CRD's converter, its webhook included)."""
        if obj is None or source == target:
            return obj
        inner, _ = _unwrap(self.storage(target, subresource))
        converter = getattr(getattr(inner, "storage", None), "converter", None)
        if converter is not None:  # a custom resource's versions convert into each other directly
            api_version = f"{target.group}/{target.version}" if target.group else target.version
            return (await converter.convert([obj], api_version))[0]
        _, to_source = _unwrap(self.storage(source, subresource))
        _, to_target = _unwrap(self.storage(target, subresource))
        stored = to_source.to_stored(obj) if to_source is not None else obj
        return to_target.from_stored(stored) if to_target is not None else stored

    def default(self, obj: Object, resource: GVR, subresource: str) -> None:
        """The version's defaults, as decoding a patched object applies them."""
        strategy = getattr(self.storage(resource, subresource), "strategy", None)
        if strategy is not None:
            strategy.default(obj)
