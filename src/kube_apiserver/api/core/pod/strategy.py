"""The pod strategy (pkg/registry/core/pod/strategy.go): defaults, status on create, validation on
create and update, graceful deletion, field selectors."""

from __future__ import annotations

from typing import Any

from ....apimachinery import errors, field, quantity
from ....apimachinery.meta import now_rfc3339, spec_of, status_of
from ....registry.context import Context
from ....registry.rest import ResourceInfo
from ....registry.strategy import Strategy
from ..podspec import PodValidationOptions, compute_qos, default_pod
from .affinity import apply_match_label_keys
from .update import validate_pod_update
from .validation import validate_pod

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "pods", "Pod", "pod", True, short_names=("po",), categories=("all",))
POD_OPTIONS = PodValidationOptions(resource_is_pod=True)
SCHEDULING_GATED = {"type": "PodScheduled", "status": "False", "lastProbeTime": None, "reason": "SchedulingGated",
                    "message": "Scheduling is blocked due to non-empty scheduling gates"}
TERMINAL_PHASES = ("Failed", "Succeeded")


def decode_defaults(kind: str, default: Any, obj: Object) -> None:
    """Defaulting happens while decoding in Kubernetes: a malformed quantity fails the request (400)."""
    try:
        default(obj)
    except quantity.QuantityError as err:
        raise errors.bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: {err}') from None


class PodStrategy(Strategy):
    tracks_generation = True
    has_status_subresource = True
    selectable_fields = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                         "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName")

    def default(self, obj: Object) -> None:
        decode_defaults("Pod", default_pod, obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        spec = spec_of(obj)
        obj["status"] = {"phase": "Pending", "qosClass": compute_qos(spec)}
        if spec.get("schedulingGates"):
            obj["status"]["conditions"] = [dict(SCHEDULING_GATED, lastTransitionTime=now_rfc3339())]
        apply_match_label_keys(spec, (obj["metadata"].get("labels") or {}))

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        # An update's object carries the stored resourceVersion; a new pod has none.
        creating = not obj["metadata"].get("resourceVersion")
        return validate_pod(obj, POD_OPTIONS, creating)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return super().validate_update(ctx, obj, old) + validate_pod_update(obj, old)

    def check_graceful_delete(self, obj: Object, options: Any) -> bool:
        """CheckGracefulDelete: unscheduled and terminated pods go at once; others wait the request's
        grace period, else their terminationGracePeriodSeconds."""
        if options is None:
            return False
        period = options.grace_period_seconds
        if period is None:
            period = spec_of(obj).get("terminationGracePeriodSeconds") or 0
        if not spec_of(obj).get("nodeName") or status_of(obj).get("phase") in TERMINAL_PHASES:
            period = 0
        options.grace_period_seconds = 1 if period < 0 else period
        return True

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        spec, status = spec_of(obj), status_of(obj)
        for key in ("nodeName", "restartPolicy", "schedulerName", "serviceAccountName"):
            fields[f"spec.{key}"] = spec.get(key) or ""
        fields["spec.hostNetwork"] = "true" if spec.get("hostNetwork") else "false"
        ips = status.get("podIPs") or []
        fields["status.podIP"] = (ips[0].get("ip") or "") if ips and isinstance(ips[0], dict) else ""
        fields["status.phase"] = status.get("phase") or ""
        fields["status.nominatedNodeName"] = status.get("nominatedNodeName") or ""
        return fields

