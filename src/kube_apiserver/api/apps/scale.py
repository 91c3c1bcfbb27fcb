"""The scale subresource of deployments, replicasets and statefulsets (pkg/registry/apps/*/storage
ScaleREST): spec.replicas, with the status's replicas and the selector as a string."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors, labels
from ...registry import scale
from ...registry.store import Store

Object = dict[str, Any]


def _status(obj: Object) -> Object:
    """scaleFromDeployment (and its ReplicaSet and StatefulSet twins)."""
    try:
        selector = str(labels.selector_from_label_selector((obj.get("spec") or {}).get("selector")))
    except labels.SelectorParseError as err:
        raise errors.bad_request(str(err)) from None
    status: Object = {"replicas": (obj.get("status") or {}).get("replicas") or 0}
    if selector:
        status["selector"] = selector
    return status


VIEW = scale.ScaleView(("spec", "replicas"), _status, "apps/v1")


class ScaleREST(scale.ScaleREST):
    def __init__(self, parent: Store):
        super().__init__(parent, VIEW)
