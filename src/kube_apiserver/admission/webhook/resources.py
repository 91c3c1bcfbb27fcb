"""The equivalent resource mapper (k8s runtime.EquivalentResourceMapper) over the served routes:
resources are equivalent when they are one storage served at several group/versions (core and
events.k8s.io events, autoscaling v1 and v2 HPAs). Also converts an object between equivalent versions
and applies a version's defaults, which matchPolicy Equivalent and webhook patches need."""

from __future__ import annotations

from typing import Any

from ..lister import RouteTable
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
    def __init__(self) -> None:
        self.group_versions: RouteTable = {}
        self._by_identity: dict[tuple[str, str], list[GVR]] | None = None
        self._by_kind_version: dict[tuple[str, str, str, str], GVR] = {}
        self._indexed: tuple[Any, ...] = ()

    def bind(self, group_versions: RouteTable) -> None:
        self.group_versions = group_versions
        self._by_identity = None

    def storage(self, resource: GVR, subresource: str) -> Any:
        key = f"{resource.resource}/{subresource}" if subresource else resource.resource
        route = self.group_versions.get((resource.group, resource.version), {}).get(key)
        return route.scope.storage if route is not None else None

    def _index(self) -> dict[tuple[str, str], list[GVR]]:
        # Custom resources come and go: the index follows the routes it was built from.
        current = tuple((gv, id(routes)) for gv, routes in self.group_versions.items())
        if current != self._indexed:
            self._by_identity, self._indexed = None, current
        if self._by_identity is None:
            self._by_identity, self._by_kind_version = {}, {}
            for (group, version), routes in self.group_versions.items():
                for key, route in routes.items():
                    resource, _, sub = key.partition("/")
                    info = route.scope.info
                    if (info.group, info.version) != (group, version):  # a subresource of another kind (scale)
                        self._by_kind_version[(info.group, info.version, resource, sub)] = GVR(group, version, resource)
                    identity = _identity(route.scope.storage)
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

    def convert(self, obj: Object | None, source: GVR, target: GVR, subresource: str) -> Object | None:
        """`obj` as served at `target`, from its form at `source` (through the stored version)."""
        if obj is None or source == target:
            return obj
        _, to_source = _unwrap(self.storage(source, subresource))
        _, to_target = _unwrap(self.storage(target, subresource))
        stored = to_source.to_stored(obj) if to_source is not None else obj
        return to_target.from_stored(stored) if to_target is not None else stored

    def default(self, obj: Object, resource: GVR, subresource: str) -> None:
        """The version's defaults, as decoding a patched object applies them."""
        strategy = getattr(self.storage(resource, subresource), "strategy", None)
        if strategy is not None:
            strategy.default(obj)
