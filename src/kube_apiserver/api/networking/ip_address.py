"""ipaddresses (pkg/registry/networking/ipaddress): an IP address, named by its canonical form, and the
object it is allocated to."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...apimachinery.field import OrderedStruct
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.table import NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .common import (
    GROUP,
    NetworkingStrategy,
    child,
    omit_empty,
    required_segment,
    segment_errors,
    subdomain_errors,
)

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "ipaddresses", "IPAddress", "ipaddress", False)
PARENT_REF_KEYS = ("group", "resource", "namespace", "name")
PARENT_REF_DOC = "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference " \
                 "a parent object."


def validate_name(ip_name: str, prefix: bool) -> list[str]:
    """ValidateIPAddressName: the name is an IP in canonical form (no generated names)."""
    return [err.detail for err in validation.is_valid_ip(None, ip_name)]


def validate_parent_ref(ref: Any, path: field.Path) -> field.ErrorList:
    """validateIPAddressParentReference: required; resource and name are path segments."""
    if not isinstance(ref, dict):
        return [field.required(path, "")]
    errs: field.ErrorList = []
    if ref.get("group"):
        errs += subdomain_errors(ref["group"], path.child("group"))
    errs += required_segment(ref.get("resource") or "", path.child("resource"))
    errs += required_segment(ref.get("name") or "", path.child("name"))
    if ref.get("namespace"):
        errs += segment_errors(ref["namespace"], path.child("namespace"))
    return errs


def _parent_ref(obj: Object) -> Any:
    ref = (obj.get("spec") or {}).get("parentRef")
    if not isinstance(ref, dict):
        return None
    # The internal networking.ParentReference: Go field names, in declaration order.
    return OrderedStruct(tuple((key.capitalize(), ref.get(key) or "") for key in PARENT_REF_KEYS))


class IPAddressStrategy(NetworkingStrategy):
    name_validator = staticmethod(validate_name)

    def default(self, obj: Object) -> None:
        child(obj, "spec")

    def validate_object(self, obj: Object) -> field.ErrorList:
        return self.validate_meta(obj) + validate_parent_ref((obj.get("spec") or {}).get("parentRef"),
                                                             field.Path("spec", "parentRef"))

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidateIPAddress, then ValidateIPAddressUpdate: the parent never changes."""
        errs = self.validate_object(obj) + self.meta_update(ctx, obj, old)
        return errs + validation.validate_immutable_field(_parent_ref(obj), _parent_ref(old),
                                                          field.Path("spec", "parentRef"))

    def canonicalize(self, obj: Object) -> None:
        omit_empty((obj.get("spec") or {}).get("parentRef"), *PARENT_REF_KEYS)


def parent_ref_text(obj: Object) -> str:
    """printIPAddress: resource[.group][/namespace]/name, lower case."""
    ref = (obj.get("spec") or {}).get("parentRef")
    if not isinstance(ref, dict):
        return "<none>"
    resource, group = ref.get("resource") or "", ref.get("group") or ""
    text = (f"{resource}.{group}" if group else resource).lower()
    if ref.get("namespace"):
        text += "/" + ref["namespace"]
    return f"{text}/{ref.get('name') or ''}"


# kube-apiserver defines two columns yet prints three cells (kubectl shows the first two).
TABLE = TableConvertor((
    NAME,
    TableColumn("ParentRef", "string", "", PARENT_REF_DOC),
), lambda o: [name(o), parent_ref_text(o), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    return {"ipaddresses": Store(INFO, IPAddressStrategy(INFO), storage, "/registry/ipaddresses", TABLE)}
