"""Admin access to devices (pkg/registry/resource/utils.go): a claim or template asking for it, or a
status granting it, is allowed only in a namespace labelled resource.kubernetes.io/admin-access=true.

Validation is synchronous, the namespace lookup is not: the stores look the namespace up first
(only when admin access is asked for) and leave what they found on the request context."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from ...registry.context import Context
from ...registry.rest import ResourceInfo, UpdatedObjectInfo, ValidateObjectFunc, ValidateObjectUpdateFunc
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.subresource import StatusREST
from ...registry.table import TableConvertor
from ...storage import interface as storage
from ...storage.factory import StorageFactory
from .common import as_dict, as_list

Object = dict[str, Any]
LABEL = "resource.kubernetes.io/admin-access"
LABELS_KEY = "resource.k8s.io/namespace-labels"
FORBIDDEN = f"admin access to devices requires the `{LABEL}: true` label on the containing namespace"


def requested_index(claim_spec: Object) -> int | None:
    """The first request asking for admin access (only exact requests can)."""
    for i, request in enumerate(as_list(as_dict(claim_spec.get("devices")).get("requests"))):
        if as_dict(as_dict(request).get("exactly")).get("adminAccess") is True:
            return i
    return None


def granted_index(claim: Object | None) -> int | None:
    """The first allocation result granting admin access."""
    status = as_dict((claim or {}).get("status"))
    results = as_list(as_dict(as_dict(status.get("allocation")).get("devices")).get("results"))
    for i, result in enumerate(results):
        if as_dict(result).get("adminAccess") is True:
            return i
    return None


async def load_namespace(ctx: Context, objects: storage.Interface, namespace: str) -> None:
    try:
        ns = await objects.get(f"/registry/namespaces/{namespace}")
        ctx.values[LABELS_KEY] = (ns.get("metadata") or {}).get("labels") or {}
    except storage.KeyNotFoundError:
        ctx.values[LABELS_KEY] = f'namespaces "{namespace}" not found'


def namespace_errors(ctx: Context, path: Path) -> ErrorList:
    """Why the namespace the store looked up does not allow admin access (nothing if not looked up)."""
    if LABELS_KEY not in ctx.values:
        return []
    labels = ctx.values[LABELS_KEY]
    if isinstance(labels, str):
        return [field.internal(path, f"could not retrieve namespace to verify admin access: {labels}")]
    if labels.get(LABEL) != "true":
        return [field.forbidden(path, FORBIDDEN)]
    return []


def spec_errors(ctx: Context, claim_spec: Object) -> ErrorList:
    """AuthorizedForAdmin (the path is the claim's even for a template)."""
    index = requested_index(claim_spec)
    if index is None:
        return []
    return namespace_errors(ctx, Path("spec", "devices", "requests").index(index).child("adminAccess"))


def status_errors(ctx: Context, claim: Object, old: Object) -> ErrorList:
    """AuthorizedForAdminStatus: only when this update grants admin access for the first time."""
    index = granted_index(claim)
    if index is None or granted_index(old) is not None:
        return []
    path = Path("status", "allocation", "devices", "results").index(index).child("adminAccess")
    return namespace_errors(ctx, path)


def with_lookup(obj_info: UpdatedObjectInfo, objects: storage.Interface,
                needs: Callable[[Object, Object | None], bool]) -> UpdatedObjectInfo:
    """obj_info, looking the namespace up once the new object is known, when `needs` says so."""
    async def look_up(ctx: Context, obj: Object, old: Object | None) -> Object:
        ctx.values.pop(LABELS_KEY, None)
        if needs(obj, old):
            await load_namespace(ctx, objects, ctx.namespace)
        return obj

    return UpdatedObjectInfo(obj_info.name, obj_info.transform, [*obj_info.admission, look_up])


class AdminCheckingStore(Store):
    """Creates (also by apply) look up the namespace when the new object asks for admin access."""

    def __init__(self, info: ResourceInfo, strategy: Strategy, factory: StorageFactory, key_prefix: str,
                 table: TableConvertor, claim_spec_of: Callable[[Object], Object]):
        super().__init__(info, strategy, factory, key_prefix, table)
        self.objects: storage.Interface = factory.store
        self.claim_spec_of = claim_spec_of

    def _asks_on_create(self, obj: Object, old: Object | None) -> bool:
        # Updates cannot change the spec: only a create needs the lookup.
        return not old and requested_index(self.claim_spec_of(obj)) is not None

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        ctx.values.pop(LABELS_KEY, None)
        if self._asks_on_create(obj, None):
            await load_namespace(ctx, self.objects, ctx.namespace)
        return await super().create(ctx, obj, create_validation, options)

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        info = with_lookup(obj_info, self.objects, self._asks_on_create)
        return await super().update(ctx, name, info, create_validation, update_validation, force_allow_create,
                                    options)


class ClaimStatusREST(StatusREST):
    """/status: an update granting admin access looks the namespace up first."""

    def __init__(self, parent: Store, strategy: Any, objects: storage.Interface):
        super().__init__(parent, strategy=strategy)
        self.objects = objects

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        info = with_lookup(obj_info, self.objects,
                           lambda obj, old: granted_index(obj) is not None and granted_index(old) is None)
        return await super().update(ctx, name, info, create_validation, update_validation, False, options)
