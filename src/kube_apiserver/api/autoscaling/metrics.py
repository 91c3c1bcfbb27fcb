"""Metric specs and statuses between autoscaling/v2 (stored) and autoscaling/v1's annotation form
(the per-source conversions of pkg/apis/autoscaling/v1/conversion.go). Toward v1 the result is a Go
struct in field order, ready for json.Marshal; toward v2 it is a plain object."""

from __future__ import annotations

from typing import Any

from ...apimachinery.field import OrderedStruct
from ..policy.poddisruptionbudget import selector_struct

Object = dict[str, Any]
ZERO = "0"  # a resource.Quantity that is not a pointer marshals as "0" when unset


def _struct(*items: tuple[str, Any], optional: tuple[str, ...] = ()) -> OrderedStruct:
    """A struct whose `optional` (omitempty) fields are left out when unset."""
    return OrderedStruct(tuple((k, v) for k, v in items if not (k in optional and v is None)))


def _ref_v1(ref: Any) -> OrderedStruct:
    ref = ref if isinstance(ref, dict) else {}
    return _struct(("kind", ref.get("kind", "")), ("name", ref.get("name", "")), ("apiVersion", ref.get("apiVersion")),
                   optional=("apiVersion",))


def _ref_v2(ref: Any) -> Object:
    ref = ref if isinstance(ref, dict) else {}
    out = {"kind": ref.get("kind", ""), "name": ref.get("name", "")}
    if ref.get("apiVersion"):
        out["apiVersion"] = ref["apiVersion"]
    return out


def _identifier(name: Any, selector: Any) -> Object:
    return {"name": name or ""} | ({"selector": selector} if selector is not None else {})


def _dict(src: Any, key: str) -> Object:
    value = src.get(key) if isinstance(src, dict) else None
    return value if isinstance(value, dict) else {}


# ---- specs ----

def spec_to_v1(metric: Object) -> OrderedStruct:
    items: list[tuple[str, Any]] = [("type", metric.get("type", ""))]
    for key, convert in (("object", _object_to_v1), ("pods", _pods_to_v1), ("resource", _resource_to_v1),
                         ("containerResource", _container_resource_to_v1), ("external", _external_to_v1)):
        if isinstance(metric.get(key), dict):
            items.append((key, convert(metric[key])))
    return OrderedStruct(tuple(items))


def _object_to_v1(src: Object) -> OrderedStruct:
    target, metric = _dict(src, "target"), _dict(src, "metric")
    return _struct(("target", _ref_v1(src.get("describedObject"))), ("metricName", metric.get("name", "")),
                   ("targetValue", target.get("value") or ZERO), ("selector", selector_struct(metric.get("selector"))),
                   ("averageValue", target.get("averageValue")), optional=("selector", "averageValue"))


def _pods_to_v1(src: Object) -> OrderedStruct:
    target, metric = _dict(src, "target"), _dict(src, "metric")
    return _struct(("metricName", metric.get("name", "")), ("targetAverageValue", target.get("averageValue") or ZERO),
                   ("selector", selector_struct(metric.get("selector"))), optional=("selector",))


def _resource_to_v1(src: Object, container: bool = False) -> OrderedStruct:
    target = _dict(src, "target")
    items = [("name", src.get("name", "")), ("targetAverageUtilization", target.get("averageUtilization")),
             ("targetAverageValue", target.get("averageValue"))]
    if container:
        items.append(("container", src.get("container") or ""))
    return _struct(*items, optional=("targetAverageUtilization", "targetAverageValue"))


def _container_resource_to_v1(src: Object) -> OrderedStruct:
    return _resource_to_v1(src, container=True)


def _external_to_v1(src: Object) -> OrderedStruct:
    target, metric = _dict(src, "target"), _dict(src, "metric")
    return _struct(("metricName", metric.get("name", "")), ("metricSelector", selector_struct(metric.get("selector"))),
                   ("targetValue", target.get("value")), ("targetAverageValue", target.get("averageValue")),
                   optional=("metricSelector", "targetValue", "targetAverageValue"))


def spec_to_v2(metric: Object) -> Object:
    out: Object = {"type": metric.get("type", "")}
    for key, convert in (("object", _object_to_v2), ("pods", _pods_to_v2), ("resource", _resource_to_v2),
                         ("containerResource", _resource_to_v2), ("external", _external_to_v2)):
        if isinstance(metric.get(key), dict):
            out[key] = convert(metric[key], key)
    return out


def _target(kind: str, **values: Any) -> Object:
    return {"type": kind, **{k: v for k, v in values.items() if v is not None}}


def _object_to_v2(src: Object, _key: str) -> Object:
    average = src.get("averageValue")
    target = _target("AverageValue" if average is not None else "Value", value=src.get("targetValue") or ZERO,
                     averageValue=average)
    return {"describedObject": _ref_v2(src.get("target")), "target": target,
            "metric": _identifier(src.get("metricName"), src.get("selector"))}


def _pods_to_v2(src: Object, _key: str) -> Object:
    return {"metric": _identifier(src.get("metricName"), src.get("selector")),
            "target": _target("AverageValue", averageValue=src.get("targetAverageValue") or ZERO)}


def _resource_to_v2(src: Object, key: str) -> Object:
    utilization = src.get("targetAverageUtilization")
    target = _target("Utilization" if utilization is not None else "AverageValue",
                     averageValue=src.get("targetAverageValue"), averageUtilization=utilization)
    out = {"name": src.get("name", ""), "target": target}
    if key == "containerResource":
        out["container"] = src.get("container") or ""
    return out


def _external_to_v2(src: Object, _key: str) -> Object:
    value = src.get("targetValue")
    target = _target("Value" if value is not None else "AverageValue", value=value,
                     averageValue=src.get("targetAverageValue"))
    return {"metric": _identifier(src.get("metricName"), src.get("metricSelector")), "target": target}


# ---- statuses ----

def status_to_v1(metric: Object) -> OrderedStruct:
    items: list[tuple[str, Any]] = [("type", metric.get("type", ""))]
    for key, convert in (("object", _object_status_to_v1), ("pods", _pods_status_to_v1),
                         ("resource", _resource_status_to_v1), ("containerResource", _container_status_to_v1),
                         ("external", _external_status_to_v1)):
        if isinstance(metric.get(key), dict):
            items.append((key, convert(metric[key])))
    return OrderedStruct(tuple(items))


def _object_status_to_v1(src: Object) -> OrderedStruct:
    current, metric = _dict(src, "current"), _dict(src, "metric")
    return _struct(("target", _ref_v1(src.get("describedObject"))), ("metricName", metric.get("name", "")),
                   ("currentValue", current.get("value") or ZERO), ("selector", selector_struct(metric.get("selector"))),
                   ("averageValue", current.get("averageValue")), optional=("selector", "averageValue"))


def _pods_status_to_v1(src: Object) -> OrderedStruct:
    current, metric = _dict(src, "current"), _dict(src, "metric")
    return _struct(("metricName", metric.get("name", "")),
                   ("currentAverageValue", current.get("averageValue") or ZERO), ("selector", selector_struct(metric.get("selector"))),
                   optional=("selector",))


def _resource_status_to_v1(src: Object, container: bool = False) -> OrderedStruct:
    current = _dict(src, "current")
    items = [("name", src.get("name", "")), ("currentAverageUtilization", current.get("averageUtilization")),
             ("currentAverageValue", current.get("averageValue") or ZERO)]
    if container:
        items.append(("container", src.get("container") or ""))
    return _struct(*items, optional=("currentAverageUtilization",))


def _container_status_to_v1(src: Object) -> OrderedStruct:
    return _resource_status_to_v1(src, container=True)


def _external_status_to_v1(src: Object) -> OrderedStruct:
    current, metric = _dict(src, "current"), _dict(src, "metric")
    return _struct(("metricName", metric.get("name", "")), ("metricSelector", selector_struct(metric.get("selector"))),
                   ("currentValue", current.get("value") or ZERO), ("currentAverageValue", current.get("averageValue")),
                   optional=("metricSelector", "currentAverageValue"))


def status_to_v2(metric: Object) -> Object:
    out: Object = {"type": metric.get("type", "")}
    for key in ("object", "pods", "resource", "containerResource", "external"):
        src = metric.get(key)
        if isinstance(src, dict):
            out[key] = _status_source_to_v2(src, key)
    return out


def _current(**values: Any) -> Object:
    return {k: v for k, v in values.items() if v is not None}


def _status_source_to_v2(src: Object, key: str) -> Object:
    if key == "object":
        return {"metric": _identifier(src.get("metricName"), src.get("selector")),
                "current": _current(value=src.get("currentValue") or ZERO, averageValue=src.get("averageValue")),
                "describedObject": _ref_v2(src.get("target"))}
    if key == "pods":
        return {"metric": _identifier(src.get("metricName"), src.get("selector")),
                "current": _current(averageValue=src.get("currentAverageValue") or ZERO)}
    if key == "external":
        return {"metric": _identifier(src.get("metricName"), src.get("metricSelector")),
                "current": _current(value=src.get("currentValue") or ZERO,
                                    averageValue=src.get("currentAverageValue"))}
    out = {"name": src.get("name", ""),
           "current": _current(averageValue=src.get("currentAverageValue") or ZERO,
                               averageUtilization=src.get("currentAverageUtilization"))}
    if key == "containerResource":
        out["container"] = src.get("container") or ""
    return out
