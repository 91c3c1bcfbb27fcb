"""Cells the apps/v1 printers share (pkg/printers/internalversion/printers.go): container names and
images of the pod template, and selectors printed as kubectl prints them."""

from __future__ import annotations

from typing import Any

from ...apimachinery import labels
from ...registry.rest import TableColumn

Object = dict[str, Any]
READY = TableColumn("Ready", "string", "", "Number of the pod with ready state")
CONTAINERS = TableColumn("Containers", "string", "", "Names of each container in the template.", 1)
IMAGES = TableColumn("Images", "string", "", "Images referenced by each container in the template.", 1)


def spec_of(obj: Object) -> Object:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def status_of(obj: Object) -> Object:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def pod_spec(obj: Object) -> Object:
    template = spec_of(obj).get("template")
    spec = template.get("spec") if isinstance(template, dict) else None
    return spec if isinstance(spec, dict) else {}


def container_cells(obj: Object) -> list[str]:
    """layoutContainerCells: names and images, comma-separated."""
    containers = [c for c in pod_spec(obj).get("containers") or [] if isinstance(c, dict)]
    return [",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers)]


def format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector."""
    try:
        text = str(labels.selector_from_label_selector(selector))
    except labels.SelectorParseError:
        return "<error>"
    return text or "<none>"


def format_labels(values: Any) -> str:
    """labels.FormatLabels: sorted key=value pairs, or <none>."""
    if not isinstance(values, dict) or not values:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(values.items()))


def count(status: Object, key: str) -> int:
    value = status.get(key)
    return value if isinstance(value, int) else 0
