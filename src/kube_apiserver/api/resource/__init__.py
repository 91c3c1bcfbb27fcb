"""resource.k8s.io/v1: Dynamic Resource Allocation as kube-apiserver v1.34 serves it (pkg/apis/resource,
pkg/registry/resource): DeviceClasses, ResourceClaims (with /status), ResourceClaimTemplates and
ResourceSlices (selectable by spec.nodeName and spec.driver)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors, fields
from ...registry.context import Context
from ...registry.options import ListQuery
from ...registry.rest import ResourceInfo
from ...registry.store import Store
from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import tables
from .admin import AdminCheckingStore, ClaimStatusREST
from .strategies import (
    DeviceClassStrategy,
    ResourceClaimStatusStrategy,
    ResourceClaimStrategy,
    ResourceClaimTemplateStrategy,
    ResourceSliceStrategy,
    claim_spec_of_claim,
    claim_spec_of_template,
)

GROUP = "resource.k8s.io"
DEVICE_CLASSES = ResourceInfo(GROUP, "v1", "deviceclasses", "DeviceClass", "deviceclass", False)
CLAIMS = ResourceInfo(GROUP, "v1", "resourceclaims", "ResourceClaim", "resourceclaim", True)
TEMPLATES = ResourceInfo(GROUP, "v1", "resourceclaimtemplates", "ResourceClaimTemplate", "resourceclaimtemplate",
                         True)
SLICES = ResourceInfo(GROUP, "v1", "resourceslices", "ResourceSlice", "resourceslice", False)


class ResourceSliceStore(Store):
    """Field selectors name spec.nodeName, spec.driver or metadata.name; any other label is refused
    with the message of the v1 field label conversion."""

    def _check_field_labels(self, query: ListQuery) -> None:
        try:
            selector = fields.parse_field_selector(query.field_selector)
        except ValueError:
            return  # malformed: reported by the generic path
        for requirement in selector.requirements():
            if requirement[0] not in self.supported_fields:
                raise errors.bad_request(f"field label not supported for {GROUP}/v1, Kind=ResourceSlice: "
                                         f"{requirement[0]}")

    async def list(self, ctx: Context, query: ListQuery) -> dict[str, Any]:
        self._check_field_labels(query)
        return await super().list(ctx, query)

    async def watch(self, ctx: Context, query: ListQuery) -> Any:
        self._check_field_labels(query)
        return await super().watch(ctx, query)


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    classes = Store(DEVICE_CLASSES, DeviceClassStrategy(DEVICE_CLASSES), storage, "/registry/deviceclasses",
                    tables.NAME_AGE)
    claim_strategy = ResourceClaimStrategy(CLAIMS)
    claims = AdminCheckingStore(CLAIMS, claim_strategy, storage, "/registry/resourceclaims", tables.CLAIMS,
                                claim_spec_of_claim)
    templates = AdminCheckingStore(TEMPLATES, ResourceClaimTemplateStrategy(TEMPLATES), storage,
                                   "/registry/resourceclaimtemplates", tables.NAME_AGE, claim_spec_of_template)
    slices = ResourceSliceStore(SLICES, ResourceSliceStrategy(SLICES), storage, "/registry/resourceslices", tables.SLICES)
    status = ClaimStatusREST(claims, ResourceClaimStatusStrategy(claim_strategy), storage.store)
    return APIGroupInfo(GROUP, {"v1": {
        "deviceclasses": classes,
        "resourceclaims": claims,
        "resourceclaims/status": status,
        "resourceclaimtemplates": templates,
        "resourceslices": slices,
    }})
