"""ingressclasses (pkg/apis/networking, pkg/registry/networking/ingressclass), and the default class the
DefaultIngressClass admission plugin gives Ingresses that name none."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field, validation
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .common import GROUP, NetworkingStrategy, child, required_segment, subdomain_errors

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "ingressclasses", "IngressClass", "ingressclass", False)
MAX_CONTROLLER_LENGTH = 250
SCOPES = ("Cluster", "Namespace")  # sets.List(): sorted
DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"


def validate_spec(spec: Object, path: field.Path) -> field.ErrorList:
    """validateIngressClassSpec."""
    errs: field.ErrorList = []
    controller = spec.get("controller") or ""
    if not controller:
        errs.append(field.required(path.child("controller"), ""))
    else:
        if len(controller.encode()) > MAX_CONTROLLER_LENGTH:
            errs.append(field.too_long(path.child("controller"), "", MAX_CONTROLLER_LENGTH))
        errs += validation.is_domain_prefixed_path(path.child("controller"), controller)
    return errs + validate_parameters(spec.get("parameters"), path.child("parameters"))


def validate_parameters(params: Any, path: field.Path) -> field.ErrorList:
    """validateIngressClassParametersReference."""
    if not isinstance(params, dict):
        return []
    errs: field.ErrorList = []
    if params.get("apiGroup") is not None:
        errs += subdomain_errors(params["apiGroup"], path.child("apiGroup"))
    errs += required_segment(params.get("kind") or "", path.child("kind"))
    errs += required_segment(params.get("name") or "", path.child("name"))
    scope = params.get("scope")
    if scope is None:
        return errs + [field.required(path.child("scope"), "")]
    if scope not in SCOPES:
        return errs + [field.not_supported(path.child("scope"), scope, SCOPES)]
    return errs + _validate_scoped_namespace(scope, params.get("namespace"), path.child("namespace"))


def _validate_scoped_namespace(scope: str, namespace: Any, path: field.Path) -> field.ErrorList:
    if scope == "Namespace":
        if namespace is None:
            return [field.required(path, "`parameters.scope` is set to 'Namespace'")]
        return [field.invalid(path, namespace, msg) for msg in validation.validate_namespace_name(namespace, False)]
    if namespace is not None:
        return [field.forbidden(path, "`parameters.scope` is set to 'Cluster'")]
    return []


class IngressClassStrategy(NetworkingStrategy):
    tracks_generation = True

    def default(self, obj: Object) -> None:
        """SetDefaults_IngressClass: a parameters reference without scope is cluster scoped."""
        params = child(obj, "spec").get("parameters")
        if isinstance(params, dict):
            if params.get("scope") is None:
                params["scope"] = "Cluster"
            params.setdefault("kind", "")
            params.setdefault("name", "")

    def validate_object(self, obj: Object) -> field.ErrorList:
        return self.validate_meta(obj) + validate_spec(obj.get("spec") or {}, field.Path("spec"))

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        """ValidateIngressClassUpdate: the controller never changes."""
        errs = self.meta_update(ctx, obj, old)
        errs += validation.validate_immutable_field((obj.get("spec") or {}).get("controller") or "",
                                                    (old.get("spec") or {}).get("controller") or "",
                                                    field.Path("spec", "controller"))
        return errs + self.validate_object(obj)


def is_default_class(obj: Object) -> bool:
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true"


def _parameters(spec: Object) -> str:
    params = spec.get("parameters")
    if not isinstance(params, dict):
        return "<none>"
    group = params.get("apiGroup")
    kind = (params.get("kind") or "") + ("" if group is None else f".{group}")
    return f"{kind}/{params.get('name') or ''}"


TABLE = TableConvertor((
    NAME,
    TableColumn("Controller", "string", "", "Controller that is responsible for handling this class"),
    TableColumn("Parameters", "string", "", "A reference to a resource with additional parameters"),
    AGE,
), lambda o: [name(o), (o.get("spec") or {}).get("controller") or "", _parameters(o.get("spec") or {}), age(o)])


def new_store(storage: StorageFactory) -> Store:
    return Store(INFO, IngressClassStrategy(INFO), storage, "/registry/ingressclasses", TABLE)
