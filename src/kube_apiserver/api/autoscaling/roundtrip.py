"""The annotations that carry what autoscaling/v1 cannot express (pkg/apis/autoscaling/annotations.go):
the other metrics, the current metrics, the conditions and the scaling behavior, so that a v1 client
reading and writing an HPA back loses nothing of it."""

from __future__ import annotations

import json
from typing import Any

from ...apimachinery.field import OrderedStruct, go_json

Object = dict[str, Any]
METRIC_SPECS = "autoscaling.alpha.kubernetes.io/metrics"
METRIC_STATUSES = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
SCALE_DOWN_TOLERANCE = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
SCALE_UP_TOLERANCE = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"
ROUND_TRIP = (METRIC_SPECS, BEHAVIOR, SCALE_DOWN_TOLERANCE, SCALE_UP_TOLERANCE, METRIC_STATUSES, CONDITIONS)


def drop_round_trip(meta: Object) -> None:
    """DropRoundTripHorizontalPodAutoscalerAnnotations on an object's metadata."""
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict) or not any(key in annotations for key in ROUND_TRIP):
        return
    kept = {k: v for k, v in annotations.items() if k not in ROUND_TRIP}
    if kept:
        meta["annotations"] = kept
    else:
        del meta["annotations"]


def annotate(meta: Object, key: str, value: str) -> None:
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    meta["annotations"] = {**annotations, key: value}


def decoded(meta: Object, key: str) -> Any:
    """The JSON an annotation holds; None when absent or not JSON (json.Unmarshal failing)."""
    raw = (meta.get("annotations") or {}).get(key)
    if not isinstance(raw, str):
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


# ---- the behavior: json.Marshal of the internal type, whose fields have no json tags ----

def _rules_struct(rules: Any) -> Any:
    if not isinstance(rules, dict):
        return None
    policies = rules.get("policies")
    policies_out = None if policies is None else [
        OrderedStruct((("Type", p.get("type", "")), ("Value", p.get("value", 0)),
                       ("PeriodSeconds", p.get("periodSeconds", 0)))) for p in policies if isinstance(p, dict)]
    return OrderedStruct((("StabilizationWindowSeconds", rules.get("stabilizationWindowSeconds")),
                          ("SelectPolicy", rules.get("selectPolicy")), ("Policies", policies_out),
                          ("Tolerance", rules.get("tolerance"))))


def behavior_annotation(behavior: Object) -> str:
    return go_json(OrderedStruct((("ScaleUp", _rules_struct(behavior.get("scaleUp"))),
                                  ("ScaleDown", _rules_struct(behavior.get("scaleDown"))))))


def _get(obj: Object, name: str) -> Any:
    """A JSON field as encoding/json matches it: exactly, else ignoring case."""
    if name in obj:
        return obj[name]
    return next((v for k, v in obj.items() if k.lower() == name.lower()), None)


def _rules_from(raw: Any) -> Object | None:
    if not isinstance(raw, dict):
        return None
    out: Object = {}
    for ours, theirs in (("stabilizationWindowSeconds", "StabilizationWindowSeconds"),
                         ("selectPolicy", "SelectPolicy"), ("tolerance", "Tolerance")):
        if _get(raw, theirs) is not None:
            out[ours] = _get(raw, theirs)
    policies = _get(raw, "Policies")
    if isinstance(policies, list):
        out["policies"] = [{"type": _get(p, "Type") or "", "value": _get(p, "Value") or 0,
                            "periodSeconds": _get(p, "PeriodSeconds") or 0} for p in policies if isinstance(p, dict)]
    return out


def behavior_from_annotation(meta: Object) -> Object | None:
    """The behavior a v1 object carries; None unless well-formed and not empty."""
    raw = decoded(meta, BEHAVIOR)
    if not isinstance(raw, dict):
        return None
    out = {}
    for ours, theirs in (("scaleUp", "ScaleUp"), ("scaleDown", "ScaleDown")):
        rules = _rules_from(_get(raw, theirs))
        if rules is not None:
            out[ours] = rules
    return out or None
