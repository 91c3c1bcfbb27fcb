"""Policy parameters (policy/generic policy_source.go ensureParamsForPolicyLocked and
policy_dispatcher.go CollectParams): the resource a paramKind names, and the params a binding's
paramRef selects from it, read from the resource's shared informer (started when first needed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...apimachinery import labels
from ...apimachinery.schema import parse_group_version
from ...client.informers import Lister, SharedIndexInformer, SharedInformerFactory
from ..lister import RouteTable

Object = dict[str, Any]


class ParamError(Exception):
    """A binding that cannot be configured: "failed to configure binding: <this>"."""


@dataclass(frozen=True)
class ParamSource:
    """The informer of a paramKind, and whether its resource is namespaced."""

    informer: SharedIndexInformer
    namespaced: bool

    async def list(self, namespace: str) -> list[Object]:
        return await Lister(self.informer).list(namespace if self.namespaced else "")


class ParamResolver:
    """The REST mapper over the served routes: the kube-apiserver's and (bound when served) the custom
    resources'. Looked up per request, so that a CRD established later is found."""

    def __init__(self) -> None:
        self.tables: list[RouteTable] = []
        self.informers: SharedInformerFactory | None = None

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.informers = informers

    def bind(self, *tables: RouteTable) -> None:
        self.tables = [table for table in tables if table is not None]

    def resolve(self, param_kind: Object) -> ParamSource:
        """The paramKind's resource; ParamError (a configuration error of the policy) when unknown."""
        api_version, kind = str(param_kind.get("apiVersion") or ""), str(param_kind.get("kind") or "")
        group, version = parse_group_version(api_version) or ("", "")
        for table in self.tables:
            for key, route in table.get((group, version), {}).items():
                info = route.scope.info
                if "/" not in key and info.kind == kind and self.informers is not None:
                    return ParamSource(self.informers.for_resource(group, version, key), info.namespaced)
        raise ParamError(f"failed to find resource referenced by paramKind: '{group}/{version}, Kind={kind}'")


def _selector(selector: Any) -> labels.Selector:
    try:
        return labels.selector_from_label_selector(selector if isinstance(selector, dict) else None)
    except (labels.SelectorParseError, ValueError) as err:
        raise ParamError(str(err)) from None


async def collect_params(param_kind: Object | None, source: ParamSource | None, param_ref: Object | None,
                         namespace: str) -> list[Object | None]:
    """CollectParams: [None] when the policy or binding has no params, else the params found (an
    empty list lets the request through unless parameterNotFoundAction is Deny)."""
    if param_kind is None or param_ref is None or source is None:
        return [None]
    ref_namespace = str(param_ref.get("namespace") or "")
    if source.namespaced:
        namespace = ref_namespace or namespace
        if not namespace:
            raise ParamError("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
    elif ref_namespace:
        raise ParamError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
    name, selector = param_ref.get("name") or "", param_ref.get("selector")
    if name:
        if selector is not None:
            raise ParamError("paramRef.name and paramRef.selector are mutually exclusive")
        params = [p for p in await source.list(namespace) if (p.get("metadata") or {}).get("name") == name]
    elif selector is not None:
        parsed = _selector(selector)
        params = [p for p in await source.list(namespace)
                  if parsed.matches((p.get("metadata") or {}).get("labels") or {})]
    else:
        raise ParamError("one of name or selector must be provided")
    if not params and param_ref.get("parameterNotFoundAction") == "Deny":
        raise ParamError("no params found for policy binding with `Deny` parameterNotFoundAction")
    return list(params)
