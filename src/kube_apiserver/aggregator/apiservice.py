"""apiregistration.k8s.io/v1 APIService (k8s.io/kube-aggregator pkg/apis/apiregistration/validation and
pkg/registry/apiservice): defaults, validation, the main and status strategies, the table columns."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ..apimachinery import field, validation
from ..apimachinery.field import go_quote
from ..registry.context import Context
from ..registry.rest import ResourceInfo, TableColumn
from ..registry.store import Store
from ..registry.strategy import Strategy
from ..registry.subresource import StatusREST, SubresourceStrategy, keep_status_reset_meta
from ..registry.table import AGE, NAME, TableConvertor, age, name
from ..server.api_group_info import APIGroupInfo
from ..storage.factory import StorageFactory
from .helpers import GROUP, get_condition, local_available_condition, set_condition, spec_of

Object = dict[str, Any]
INFO = ResourceInfo(GROUP, "v1", "apiservices", "APIService", "apiservice", False, categories=("api-extensions",))
KEY_PREFIX = "/registry/apiregistration.k8s.io/apiservices"
CONDITION_STATUSES = ("True", "False", "Unknown")


def ca_bundle_size(spec: Object) -> int:
    """caBundle is base64 in JSON; Kubernetes counts its decoded bytes."""
    raw = spec.get("caBundle") or ""
    try:
        return len(base64.b64decode(raw, validate=False))
    except (binascii.Error, ValueError):
        return len(raw)


def ca_bundle_pem(spec: Object) -> str:
    raw = spec.get("caBundle") or ""
    try:
        return base64.b64decode(raw).decode()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return ""


def set_defaults(obj: Object) -> None:
    """SetDefaults_ServiceReference (port 443), and the zero values Go's JSON leaves out."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    if spec.get("service") is None:
        spec.pop("service", None)
    elif isinstance(spec["service"], dict) and spec["service"].get("port") is None:
        spec["service"]["port"] = 443
    for key, zero in (("insecureSkipTLSVerify", False), ("caBundle", "")):
        if key in spec and spec[key] in (zero, None):
            del spec[key]


def _name_validator(spec: Object) -> validation.NameFunc:
    required_name = f"{spec.get('version', '')}.{spec.get('group', '')}"

    def validate_name(value: str, prefix: bool) -> list[str]:
        msgs = validation.is_valid_path_segment_name(value)
        if msgs:
            return msgs
        if value != required_name:  # the name *must* be version.group
            return [f'must be `spec.version+"."+spec.group`: {go_quote(required_name)}']
        return []
    return validate_name


def validate_api_service(obj: Object) -> field.ErrorList:
    """ValidateAPIService."""
    spec = spec_of(obj)
    path = field.Path("spec")
    errs = validation.validate_object_meta(obj.get("metadata") or {}, False, _name_validator(spec),
                                           field.Path("metadata"))
    group, version = spec.get("group") or "", spec.get("version") or ""
    if not group and version != "v1":
        errs.append(field.required(path.child("group"), "only v1 may have an empty group and it better be "
                                                        "legacy kube"))
    if group:
        errs += [field.invalid(path.child("group"), group, msg) for msg in validation.is_dns1123_subdomain(group)]
    errs += [field.invalid(path.child("version"), version, msg) for msg in validation.is_dns1035_label(version)]
    errs += _validate_priorities(spec, path)
    return errs + _validate_service(spec, path)


def _validate_priorities(spec: Object, path: field.Path) -> field.ErrorList:
    errs: field.ErrorList = []
    group_priority = spec.get("groupPriorityMinimum") or 0
    if group_priority <= 0 or group_priority > 20000:
        errs.append(field.invalid(path.child("groupPriorityMinimum"), group_priority,
                                  "must be positive and less than 20000"))
    version_priority = spec.get("versionPriority") or 0
    if version_priority <= 0 or version_priority > 1000:
        errs.append(field.invalid(path.child("versionPriority"), version_priority,
                                  "must be positive and less than 1000"))
    return errs


def _validate_service(spec: Object, path: field.Path) -> field.ErrorList:
    errs: field.ErrorList = []
    service, insecure = spec.get("service"), bool(spec.get("insecureSkipTLSVerify"))
    ca_size = ca_bundle_size(spec)
    if service is None:
        if ca_size:
            errs.append(field.invalid(path.child("caBundle"), f"{ca_size} bytes",
                                      "local APIServices may not have a caBundle"))
        if insecure:
            errs.append(field.invalid(path.child("insecureSkipTLSVerify"), insecure,
                                      "local APIServices may not have insecureSkipTLSVerify"))
        return errs
    service_path = path.child("service")
    if not service.get("namespace"):
        errs.append(field.required(service_path.child("namespace"), ""))
    if not service.get("name"):
        errs.append(field.required(service_path.child("name"), ""))
    port = service.get("port") or 0
    port_errs = validation.is_valid_port_num(port)
    if port_errs:
        errs.append(field.invalid(service_path.child("port"), port, "port is not valid: " + ", ".join(port_errs)))
    if insecure and ca_size:
        errs.append(field.invalid(path.child("insecureSkipTLSVerify"), insecure,
                                  "may not be true if caBundle is present"))
    return errs


def validate_status(obj: Object) -> field.ErrorList:
    """ValidateAPIServiceStatus: condition statuses are True, False or Unknown."""
    path = field.Path("status", "conditions")
    return [field.not_supported(path.index(i).child("status"), c.get("status", ""), CONDITION_STATUSES)
            for i, c in enumerate((obj.get("status") or {}).get("conditions") or [])
            if c.get("status") not in CONDITION_STATUSES]


class APIServiceStrategy(Strategy):
    allow_unconditional_update = False
    has_status_subresource = True

    def default(self, obj: Object) -> None:
        set_defaults(obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        obj["status"] = {}
        if spec_of(obj).get("service") is None:  # local APIServices are available from the start
            set_condition(obj, local_available_condition())

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return validate_api_service(obj)


class APIServiceStatusStrategy(SubresourceStrategy):
    """Writes status only: spec, labels, annotations, finalizers and owners stay as stored."""

    def __init__(self, parent: Strategy):
        super().__init__(parent, keep_status_reset_meta)
        self.allow_unconditional_update = False
        self.reset_fields = (("spec",), ("metadata",))

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return []

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return validation.validate_object_meta_update(obj.get("metadata") or {}, old.get("metadata") or {},
                                                      field.Path("metadata")) + validate_status(obj)


def available_cell(obj: Object) -> str:
    condition = get_condition(obj)
    if condition is None:
        return "Unknown"
    status = condition.get("status", "")
    if status != "True" and condition.get("reason"):
        return f"{status} ({condition['reason']})"
    return status


def service_cell(obj: Object) -> str:
    service = spec_of(obj).get("service")
    return f"{service.get('namespace', '')}/{service.get('name', '')}" if service else "Local"


TABLE = TableConvertor((
    NAME,
    TableColumn("Service", "string", "", "The reference to the service that hosts this API endpoint."),
    TableColumn("Available", "string", "", "Whether this service is available."),
    AGE,
), lambda o: [name(o), service_cell(o), available_cell(o), age(o)])


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    strategy = APIServiceStrategy(INFO)
    store = Store(INFO, strategy, storage, KEY_PREFIX, TABLE)
    status = StatusREST(store, strategy=APIServiceStatusStrategy(strategy))
    return APIGroupInfo(GROUP, {"v1": {"apiservices": store, "apiservices/status": status}})
