"""namespaceSelector and objectSelector matching (k8s.io/apiserver/pkg/admission/plugin/webhook/predicates
namespace and object). Shared by the webhook plugins and the admission policies."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...apimachinery import errors, labels
from ...client.informers import SharedInformerFactory
from ..lister import ObjectLookup
from .rules import Request

Object = dict[str, Any]
NamespaceGetter = Callable[[str], Awaitable[Object | None]]


def parse_selector(selector: Any) -> labels.Selector:
    """metav1.LabelSelectorAsSelector; an unusable selector is the apiserver's fault (500)."""
    try:
        return labels.selector_from_label_selector(selector if isinstance(selector, dict) else None)
    except (labels.SelectorParseError, ValueError) as err:
        raise errors.internal_error(err) from None


def _labels_of(obj: Object | None) -> dict[str, str] | None:
    if not isinstance(obj, dict):
        return None
    found = (obj.get("metadata") or {}).get("labels")
    return found if isinstance(found, dict) else {}


def match_object_selector(selector: labels.Selector, request: Request) -> bool:
    """The new object's labels or the old object's match (a missing object matches nothing)."""
    if selector.empty():
        return True
    return any(found is not None and selector.matches(found)
               for found in (_labels_of(request.object), _labels_of(request.old_object)))


class NamespaceLabels:
    """Namespace labels as the namespace lister gives them: from the namespaces' shared informer (when it
    has listed), and read live when it has not seen the namespace yet."""

    def __init__(self, get_namespace: NamespaceGetter):
        self.lookup = ObjectLookup(lambda _, name: get_namespace(name), "namespaces")

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.lookup.set_informers(informers)

    def cached(self, name: str) -> Object | None:
        return self.lookup.cached("", name)

    async def get(self, name: str) -> Object | None:
        return await self.lookup.get("", name)

    async def labels_for(self, request: Request) -> dict[str, str]:
        """GetNamespaceLabels: a namespace being written is its own namespace."""
        if request.resource.resource == "namespaces" and not request.subresource and \
                request.operation in ("CREATE", "UPDATE"):
            return _labels_of(request.object) or {}
        name = request.namespace or (request.name if request.resource.resource == "namespaces" else "")
        namespace = await self.get(name)
        if namespace is None:
            raise errors.not_found("namespaces", "", name)
        return _labels_of(namespace) or {}


async def match_namespace_selector(selector: labels.Selector, request: Request, namespaces: NamespaceLabels) -> bool:
    """MatchNamespaceSelector: cluster-scoped requests (but namespaces themselves) always match."""
    if not request.namespace and request.resource.resource != "namespaces":
        return True
    if selector.empty():
        return True
    return selector.matches(await namespaces.labels_for(request))
