"""HorizontalPodAutoscaler between autoscaling/v2, the stored version, and autoscaling/v1
(Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler and its inverse,
pkg/apis/autoscaling/v1/conversion.go). v1 has one metric, the target CPU utilization; every other
metric, the current metrics, the behavior and the conditions travel in annotations."""

from __future__ import annotations

import copy
from typing import Any

from ...apimachinery import quantity
from ...apimachinery.field import OrderedStruct, go_json
from . import roundtrip as notes
from .defaults import DEFAULT_CPU_UTILIZATION, canonicalize_v2_quantities, cpu_utilization_metric, default_v2
from .metrics import spec_to_v1, spec_to_v2, status_to_v1, status_to_v2

Object = dict[str, Any]
GROUP = "autoscaling"
KIND = "HorizontalPodAutoscaler"


def _is_cpu(metric: Any) -> bool:
    return isinstance(metric, dict) and metric.get("type") == "Resource" and \
        (metric.get("resource") or {}).get("name") == "cpu"


def _cpu_utilization(metric: Any, key: str) -> int | None:
    return ((metric.get("resource") or {}).get(key) or {}).get("averageUtilization") if _is_cpu(metric) else None


def _ref(ref: Any) -> Object:
    ref = ref if isinstance(ref, dict) else {}
    out = {"kind": ref.get("kind", ""), "name": ref.get("name", "")}
    if ref.get("apiVersion"):
        out["apiVersion"] = ref["apiVersion"]
    return out


def normalize_v2_status(hpa: Object) -> None:
    """The v2 status as Go marshals it: desiredReplicas and currentMetrics always, currentReplicas if set."""
    status = hpa.get("status") if isinstance(hpa.get("status"), dict) else {}
    status.setdefault("desiredReplicas", 0)
    status.setdefault("currentMetrics", None)
    if not status.get("currentReplicas"):
        status.pop("currentReplicas", None)
    hpa["status"] = status


# ---- v2 -> v1 ----

def to_v1(hpa: Object) -> Object:
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    meta = copy.deepcopy(hpa.get("metadata") or {})
    notes.drop_round_trip(meta)
    out = {"apiVersion": f"{GROUP}/v1", "kind": KIND, "metadata": meta, "spec": _spec_to_v1(spec),
           "status": _status_to_v1(status)}
    metrics = spec.get("metrics") or []
    others = [spec_to_v1(m) for m in metrics if _cpu_utilization(m, "target") is None]
    if others:
        notes.annotate(meta, notes.METRIC_SPECS, go_json(others))
    if status.get("currentMetrics"):
        notes.annotate(meta, notes.METRIC_STATUSES, go_json([status_to_v1(m) for m in status["currentMetrics"]]))
    if isinstance(spec.get("behavior"), dict):
        notes.annotate(meta, notes.BEHAVIOR, notes.behavior_annotation(spec["behavior"]))
    if status.get("conditions"):
        notes.annotate(meta, notes.CONDITIONS, go_json([_condition_struct(c) for c in status["conditions"]]))
    return out


def _spec_to_v1(spec: Object) -> Object:
    out: Object = {"scaleTargetRef": _ref(spec.get("scaleTargetRef"))}
    if spec.get("minReplicas") is not None:
        out["minReplicas"] = spec["minReplicas"]
    out["maxReplicas"] = spec.get("maxReplicas", 0)
    cpu = next((m for m in spec.get("metrics") or [] if _is_cpu(m)), None)
    if cpu is not None and _cpu_utilization(cpu, "target") is not None:
        out["targetCPUUtilizationPercentage"] = _cpu_utilization(cpu, "target")
    return out


def _status_to_v1(status: Object) -> Object:
    out = {k: status[k] for k in ("observedGeneration", "lastScaleTime") if status.get(k) is not None}
    out.update(currentReplicas=status.get("currentReplicas") or 0, desiredReplicas=status.get("desiredReplicas") or 0)
    for metric in status.get("currentMetrics") or []:
        if _cpu_utilization(metric, "current") is not None:
            out["currentCPUUtilizationPercentage"] = _cpu_utilization(metric, "current")
    return out


def _condition_struct(condition: Object) -> OrderedStruct:
    """A v1 HorizontalPodAutoscalerCondition as json.Marshal writes it."""
    items = [("type", condition.get("type", "")), ("status", condition.get("status", "")),
             ("lastTransitionTime", condition.get("lastTransitionTime"))]
    items += [(k, condition[k]) for k in ("reason", "message") if condition.get(k)]
    return OrderedStruct(tuple(items))


# ---- v1 -> v2 ----

def to_v2(hpa: Object) -> Object:
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    meta = copy.deepcopy(hpa.get("metadata") or {})
    out_spec, out_status = _spec_to_v2(spec), _status_to_v2(status)
    others = notes.decoded(meta, notes.METRIC_SPECS)
    if isinstance(others, list):
        out_spec["metrics"] = [spec_to_v2(m) for m in others if isinstance(m, dict)] + out_spec.get("metrics", [])
    behavior = notes.behavior_from_annotation(meta)
    if behavior is not None:
        out_spec["behavior"] = behavior
    current = notes.decoded(meta, notes.METRIC_STATUSES)
    if isinstance(current, list):
        out_status["currentMetrics"] = [status_to_v2(m) for m in current if isinstance(m, dict)]
    if not out_spec.get("metrics"):
        out_spec["metrics"] = [cpu_utilization_metric(DEFAULT_CPU_UTILIZATION)]
    conditions = notes.decoded(meta, notes.CONDITIONS)
    if isinstance(conditions, list):
        out_status["conditions"] = [_condition(c) for c in conditions if isinstance(c, dict)]
    notes.drop_round_trip(meta)
    out = {"apiVersion": f"{GROUP}/v2", "kind": KIND, "metadata": meta, "spec": out_spec, "status": out_status}
    _canonical(out)
    default_v2(out)
    normalize_v2_status(out)
    return out


def _spec_to_v2(spec: Object) -> Object:
    out: Object = {"scaleTargetRef": _ref(spec.get("scaleTargetRef"))}
    if spec.get("minReplicas") is not None:
        out["minReplicas"] = spec["minReplicas"]
    out["maxReplicas"] = spec.get("maxReplicas", 0)
    if spec.get("targetCPUUtilizationPercentage") is not None:
        out["metrics"] = [cpu_utilization_metric(spec["targetCPUUtilizationPercentage"])]
    return out


def _status_to_v2(status: Object) -> Object:
    out = {k: status[k] for k in ("observedGeneration", "lastScaleTime") if status.get(k) is not None}
    out.update(currentReplicas=status.get("currentReplicas") or 0, desiredReplicas=status.get("desiredReplicas") or 0)
    if status.get("currentCPUUtilizationPercentage") is not None:
        out["currentMetrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "current": {"averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
    return out


def _condition(condition: Object) -> Object:
    out = {"type": condition.get("type", ""), "status": condition.get("status", "")}
    out.update({k: condition[k] for k in ("lastTransitionTime", "reason", "message") if condition.get(k)})
    return out


def _canonical(hpa: Object) -> None:
    """Quantities from the annotations as decoding prints them; a malformed one stays as written."""
    try:
        canonicalize_v2_quantities(hpa)
    except quantity.QuantityError:
        pass
