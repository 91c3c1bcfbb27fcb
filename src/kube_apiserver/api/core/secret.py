"""secrets (pkg/registry/core/secret, ValidateSecret, and the v1 conversion of stringData)."""

from __future__ import annotations

import base64
from typing import Any

from ...apimachinery import errors, field, jsontypes
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory
from .configmap import MAX_SIZE, validate_keys

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "secrets", "Secret", "secret", True)
# type -> keys the data must hold
REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"


def _decode_data(obj: Object) -> int:
    """Checks every value is base64 (Go decodes []byte fields so); returns the decoded size."""
    size = 0
    for key, value in (obj.get("data") or {}).items():
        if value is None:
            continue
        if not isinstance(value, str):
            raise errors.bad_request(f'Secret in version "v1" cannot be handled as a Secret: json: cannot '
                                     f'unmarshal {type(value).__name__} into Go struct field Secret.data of type []uint8')
        try:
            size += len(key) + len(jsontypes.decode_base64(value))
        except jsontypes.CorruptBase64 as err:
            raise errors.bad_request(f'Secret in version "v1" cannot be handled as a Secret: {err}') from None
    return size


def _merge_string_data(obj: Object) -> None:
    """v1 stringData is write-only: merged into data (winning over it) and never stored."""
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.setdefault("data", {}) or {}
        obj["data"] = data
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


class SecretStrategy(Strategy):
    def default(self, obj: Object) -> None:
        """Decoding does both (SetDefaults_Secret, the v1 conversion of stringData): managedFields then
        record data and type, not stringData, as in Kubernetes."""
        self._normalize(obj)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        super().prepare_for_create(ctx, obj)
        self._normalize(obj)

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        super().prepare_for_update(ctx, obj, old)
        self._normalize(obj)

    @staticmethod
    def _normalize(obj: Object) -> None:
        _merge_string_data(obj)
        obj.setdefault("type", "Opaque")
        if obj.get("type") == "":
            obj["type"] = "Opaque"

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj)
        size = _decode_data(obj)
        data = obj.get("data") or {}
        errs += validate_keys(data, field.Path("data"))
        if size > MAX_SIZE:
            errs.append(field.too_long(field.Path("data"), "", MAX_SIZE))
        secret_type = obj.get("type")
        for key in REQUIRED_KEYS.get(secret_type, ()):
            if key not in data:
                errs.append(field.required(field.Path("data").key(key), ""))
        if secret_type == SERVICE_ACCOUNT_TOKEN:
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            if not annotations.get("kubernetes.io/service-account.name"):
                errs.append(field.required(field.Path("metadata", "annotations").key(
                    "kubernetes.io/service-account.name"), ""))
        if secret_type == "kubernetes.io/basic-auth" and not ({"username", "password"} & set(data)):
            errs.append(field.required(field.Path("data").key("username"), ""))
        return errs

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        errs = super().validate_update(ctx, obj, old)
        if obj.get("type") != old.get("type"):
            errs.append(field.invalid(field.Path("type"), obj.get("type"), "field is immutable"))
        if old.get("immutable") is True:
            if obj.get("immutable") is not True:
                errs.append(field.forbidden(field.Path("immutable"), "field is immutable when `immutable` is set"))
            if obj.get("data") != old.get("data"):
                errs.append(field.forbidden(field.Path("data"), "field is immutable when `immutable` is set"))
        return errs

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        fields["type"] = obj.get("type", "")
        return fields

    selectable_fields = ("type",)


TABLE = TableConvertor((NAME, TableColumn("Type", "string", "", "The type of the secret"),
                        TableColumn("Data", "string", "", "The number of entries in data"), AGE),
                       lambda o: [name(o), o.get("type", ""), len(o.get("data") or {}), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    return {"secrets": Store(INFO, SecretStrategy(INFO), storage, "/registry/secrets", TABLE)}
