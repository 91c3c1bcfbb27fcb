"""HorizontalPodAutoscaler defaulting: pkg/apis/autoscaling/v2/defaults.go (minReplicas 1, 80% average
CPU utilization when no metric is given, and a behavior filled with the default scaling rules once
any is given) and pkg/apis/autoscaling/v1/defaults.go (minReplicas 1). Quantities are canonicalized
as decoding does; a malformed one fails the request."""

from __future__ import annotations

import copy
from typing import Any

from ...apimachinery import errors, quantity

Object = dict[str, Any]
DEFAULT_CPU_UTILIZATION = 80
V1_METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"  # v1's other metrics (roundtrip.METRIC_SPECS)
SCALE_UP_RULES = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                  "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                               {"type": "Percent", "value": 100, "periodSeconds": 15}]}
# No stabilization window: the controller's --horizontal-pod-autoscaler-downscale-stabilization applies.
SCALE_DOWN_RULES = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
RULE_KEYS = ("stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance")
SOURCES = ("object", "pods", "resource", "containerResource", "external")


def cpu_utilization_metric(utilization: int) -> Object:
    return {"type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}}}


def _scaling_rules(rules: Any, defaults: Object) -> Object:
    """copyHPAScalingRules onto a copy of the defaults: every field given wins."""
    out = copy.deepcopy(defaults)
    for key in RULE_KEYS:
        if isinstance(rules, dict) and rules.get(key) is not None:
            out[key] = rules[key]
    return out


def default_v2(hpa: Object) -> None:
    """SetDefaults_HorizontalPodAutoscaler (autoscaling/v2)."""
    spec = hpa.get("spec")
    if not isinstance(spec, dict):
        spec = hpa["spec"] = {}
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [cpu_utilization_metric(DEFAULT_CPU_UTILIZATION)]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _scaling_rules(behavior.get("scaleUp"), SCALE_UP_RULES)
        behavior["scaleDown"] = _scaling_rules(behavior.get("scaleDown"), SCALE_DOWN_RULES)


def default_v1(hpa: Object) -> None:
    """SetDefaults_HorizontalPodAutoscaler (autoscaling/v1), and the 80% CPU target that decoding's
    conversion to the internal type adds when no metric is given (so the writer owns it in managedFields)."""
    spec = hpa.get("spec")
    if not isinstance(spec, dict):
        spec = hpa["spec"] = {}
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    annotations = (hpa.get("metadata") or {}).get("annotations") or {}
    if spec.get("targetCPUUtilizationPercentage") is None and not annotations.get(V1_METRICS_ANNOTATION):
        spec["targetCPUUtilizationPercentage"] = DEFAULT_CPU_UTILIZATION


def canonical_quantity(parent: Any, key: str) -> None:
    """A quantity as the API returns it ("1000m" is "1")."""
    if isinstance(parent, dict) and parent.get(key) is not None:
        parent[key] = str(quantity.parse(parent[key]))


def canonicalize_v2_quantities(hpa: Object) -> None:
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    for metric in spec.get("metrics") or []:
        for source in SOURCES:
            target = (metric.get(source) or {}).get("target") if isinstance(metric, dict) else None
            canonical_quantity(target, "value")
            canonical_quantity(target, "averageValue")
    for metric in status.get("currentMetrics") or []:
        for source in SOURCES:
            current = (metric.get(source) or {}).get("current") if isinstance(metric, dict) else None
            canonical_quantity(current, "value")
            canonical_quantity(current, "averageValue")
    behavior = spec.get("behavior") or {}
    for direction in ("scaleUp", "scaleDown"):
        canonical_quantity(behavior.get(direction) if isinstance(behavior, dict) else None, "tolerance")


def decode(version: str, default: Any, hpa: Object) -> None:
    """Defaulting happens while decoding: a malformed quantity fails the request (400)."""
    try:
        default(hpa)
    except quantity.QuantityError as err:
        raise errors.bad_request(f'HorizontalPodAutoscaler in version "{version}" cannot be handled as a '
                                 f"HorizontalPodAutoscaler: {err}") from None
