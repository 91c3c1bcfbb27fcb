"""The internal resource types as Go's json.Marshal renders them in a validation error's bad value.

Internal types carry no JSON tags, so a field is printed under its Go name, in declaration order,
with zero values where the request left a field out (nil pointers, slices and maps as null).
Equality follows apiequality.Semantic.DeepEqual: nil and empty slices or maps are equal.

Notation, one struct per entry: `json[=GoName]:type` where type is a scalar (string, int, bool),
a well-known type (Quantity, Time, RawExtension), a struct name, `T?` (pointer), `T[]` (slice),
`map<T>`; `^T` embeds T's fields (Go's anonymous struct fields)."""

from __future__ import annotations

from typing import Any

from ...apimachinery import quantity
from ...apimachinery.field import OrderedStruct

STRUCTS_NOTATION = {
    "ResourceClaimSpec": "devices:DeviceClaim",
    "DeviceClaim": "requests:DeviceRequest[] constraints:DeviceConstraint[] config:DeviceClaimConfiguration[]",
    "DeviceRequest": "name:string exactly:ExactDeviceRequest? firstAvailable:DeviceSubRequest[]",
    "ExactDeviceRequest": "deviceClassName:string selectors:DeviceSelector[] allocationMode:string count:int "
                          "adminAccess:bool? tolerations:DeviceToleration[] capacity:CapacityRequirements?",
    "DeviceSubRequest": "name:string deviceClassName:string selectors:DeviceSelector[] allocationMode:string "
                        "count:int tolerations:DeviceToleration[] capacity:CapacityRequirements?",
    "CapacityRequirements": "requests:map<Quantity>",
    "DeviceSelector": "cel=CEL:CELDeviceSelector?",
    "CELDeviceSelector": "expression:string",
    "DeviceToleration": "key:string operator:string value:string effect:string tolerationSeconds:int?",
    "DeviceConstraint": "requests:string[] matchAttribute:string? distinctAttribute:string?",
    "DeviceClaimConfiguration": "requests:string[] ^DeviceConfiguration",
    "DeviceConfiguration": "opaque:OpaqueDeviceConfiguration?",
    "OpaqueDeviceConfiguration": "driver:string parameters:RawExtension",
    "AllocationResult": "devices:DeviceAllocationResult nodeSelector:NodeSelector? allocationTimestamp:Time?",
    "DeviceAllocationResult": "results:DeviceRequestAllocationResult[] config:DeviceAllocationConfiguration[]",
    "DeviceRequestAllocationResult": "request:string driver:string pool:string device:string adminAccess:bool? "
                                     "tolerations:DeviceToleration[] bindingConditions:string[] "
                                     "bindingFailureConditions:string[] shareID=ShareID:string? "
                                     "consumedCapacity:map<Quantity>",
    "DeviceAllocationConfiguration": "source:string requests:string[] ^DeviceConfiguration",
    "NodeSelector": "nodeSelectorTerms:NodeSelectorTerm[]",
    "NodeSelectorTerm": "matchExpressions:NodeSelectorRequirement[] matchFields:NodeSelectorRequirement[]",
    "NodeSelectorRequirement": "key:string operator:string values:string[]",
    "DeviceAttribute": "int=IntValue:int? bool=BoolValue:bool? string=StringValue:string? "
                       "version=VersionValue:string?",
    "ResourceClaimTemplateSpec": "metadata:ObjectMeta^ spec:ResourceClaimSpec",
}
Field = tuple[str, str, str]  # json name, Go name, type


def _parse(body: str) -> list[Field]:
    fields = []
    for spec in body.split():
        if spec.startswith("^"):
            fields.append(("", "", spec))
            continue
        names, _, ftype = spec.partition(":")
        json_name, _, go_name = names.partition("=")
        fields.append((json_name, go_name or json_name[:1].upper() + json_name[1:], ftype))
    return fields


STRUCTS: dict[str, list[Field]] = {name: _parse(body) for name, body in STRUCTS_NOTATION.items()}
ZEROS: dict[str, Any] = {"string": "", "int": 0, "bool": False}
# ObjectMeta keeps its JSON tags when embedded: these keys, each omitted when empty (omitempty, and
# omitzero for creationTimestamp since v1.34).
META_KEYS = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
             "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
             "ownerReferences", "finalizers")


def render(ftype: str, value: Any) -> Any:
    """`value` (decoded JSON) as Go would marshal the internal type `ftype`."""
    if ftype.endswith("?"):
        return None if value is None else render(ftype[:-1], value)
    if ftype.endswith("[]"):
        return None if value is None else [render(ftype[:-2], v) for v in value]
    if ftype.startswith("map<"):
        return None if value is None else {str(k): render(ftype[4:-1], v) for k, v in value.items()}
    if ftype in ZEROS:
        return ZEROS[ftype] if value is None else value
    return _well_known(ftype, value) if ftype in WELL_KNOWN else _struct(ftype, value)


def _struct(name: str, value: Any) -> OrderedStruct:
    return OrderedStruct(tuple(_struct_items(name, value if isinstance(value, dict) else {})))


def _struct_items(name: str, value: dict[str, Any]) -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for json_name, go_name, ftype in STRUCTS[name]:
        if ftype.startswith("^"):
            items += _struct_items(ftype[1:], value)
        elif ftype == "ObjectMeta^":
            items += _meta_items(value.get(json_name) or {})
        else:
            items.append((go_name, render(ftype, value.get(json_name))))
    return items


def _meta_items(meta: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(key, meta.get(key)) for key in META_KEYS if meta.get(key)]


def _quantity(value: Any) -> str:
    try:
        return str(quantity.parse(value if value is not None else "0"))
    except quantity.QuantityError:
        return str(value)


def _raw(value: Any) -> Any:
    """RawExtension.MarshalJSON: the bytes as received, so object keys keep their order."""
    if isinstance(value, dict):
        return OrderedStruct(tuple((str(k), _raw(v)) for k, v in value.items()))
    if isinstance(value, list):
        return [_raw(v) for v in value]
    return value


def _well_known(ftype: str, value: Any) -> Any:
    if ftype == "Quantity":
        return _quantity(value)
    if ftype == "RawExtension":
        return _raw(value)
    return value  # Time: RFC 3339 text, or null when unset


WELL_KNOWN = ("Quantity", "RawExtension", "Time")


def _normal(value: Any) -> Any:
    """A rendered value in a form where Semantic.DeepEqual's equal values compare equal."""
    if isinstance(value, OrderedStruct):
        return tuple((k, _normal(v)) for k, v in value.items)
    if isinstance(value, dict):
        return None if not value else tuple(sorted((k, _normal(v)) for k, v in value.items()))
    if isinstance(value, list):
        return None if not value else tuple(_normal(v) for v in value)
    return value


def semantic_equal(ftype: str, a: Any, b: Any) -> bool:
    return bool(_normal(render(ftype, a)) == _normal(render(ftype, b)))
