"""DefaultIngressClass (plugin/pkg/admission/network/defaultingressclass): an Ingress created with
neither spec.ingressClassName nor the kubernetes.io/ingress.class annotation gets the default
IngressClass (annotated ingressclass.kubernetes.io/is-default-class: "true"; the newest when several)."""

from __future__ import annotations

from typing import Any

from .interfaces import CREATE, Attributes
from .lister import NamespacedLister

Object = dict[str, Any]
CLASS_ANNOTATION = "kubernetes.io/ingress.class"
DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"


def default_class(classes: list[Object]) -> Object | None:
    """getDefaultClass: of the classes marked default, the newest (then the first by name)."""
    marked = [c for c in classes
              if ((c.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true"]
    marked.sort(key=lambda c: c["metadata"].get("name", ""))
    marked.sort(key=lambda c: c["metadata"].get("creationTimestamp") or "", reverse=True)
    return marked[0] if marked else None


class DefaultIngressClass:
    name = "DefaultIngressClass"

    def __init__(self, classes: NamespacedLister):
        self.classes = classes

    def handles(self, operation: str) -> bool:
        return operation == CREATE

    async def admit(self, attrs: Attributes) -> None:
        if attrs.group != "networking.k8s.io" or attrs.resource != "ingresses" or attrs.subresource:
            return
        obj = attrs.object
        if not isinstance(obj, dict):
            return
        spec = obj.setdefault("spec", {})
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if spec.get("ingressClassName") is not None or CLASS_ANNOTATION in annotations:
            return
        chosen = default_class(await self.classes.list(""))
        if chosen is not None:
            spec["ingressClassName"] = chosen["metadata"]["name"]
