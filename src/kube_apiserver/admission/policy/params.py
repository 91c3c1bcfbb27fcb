"""Policy parameters (policy/generic policy_source.go ensureParamsForPolicyLocked and
policy_dispatcher.go CollectParams): the resource a paramKind names (through the discovery REST mapper), and
the params a binding's paramRef selects from it, read from the resource's shared informer on the loopback
client (started when first needed; any resource, custom resources included)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...apimachinery import errors, labels
from ...apimachinery.schema import parse_group_version
from ...client.discovery import GroupVersionKind, NoMatchError, RESTMapper
from ...client.informers import Lister, SharedIndexInformer, SharedInformerFactory

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
    """The paramKind's resource, found with the discovery REST mapper (WantsRESTMapper), whose informer
    holds the params. Looked up per request, so that a CRD established later is found: a kind the
    mapper does not know makes it read discovery again."""

    def __init__(self) -> None:
        self.rest_mapper: RESTMapper | None = None
        self.informers: SharedInformerFactory | None = None

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.informers = informers

    def set_rest_mapper(self, rest_mapper: RESTMapper) -> None:
        self.rest_mapper = rest_mapper

    async def resolve(self, param_kind: Object) -> ParamSource:
        """The paramKind's resource; ParamError (a configuration error of the policy) when unknown."""
        api_version, kind = str(param_kind.get("apiVersion") or ""), str(param_kind.get("kind") or "")
        group, version = parse_group_version(api_version) or ("", "")
        not_found = ParamError(f"failed to find resource referenced by paramKind: '{group}/{version}, Kind={kind}'")
        if self.rest_mapper is None or self.informers is None:
            raise not_found
        try:
            mapping = await self.rest_mapper.rest_mapping(GroupVersionKind(group, version, kind))
        except (NoMatchError, errors.StatusError):
            raise not_found from None
        resource = mapping.resource
        informer = self.informers.for_resource(resource.group, resource.version, resource.resource)
        return ParamSource(informer, mapping.namespaced)


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
