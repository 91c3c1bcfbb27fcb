"""configmaps (pkg/registry/core/configmap, pkg/apis/core/validation ValidateConfigMap)."""

from __future__ import annotations

import base64
from typing import Any

from ...apimachinery import field, validation
from ...registry.context import Context
from ...registry.rest import ResourceInfo, TableColumn
from ...registry.store import Store
from ...registry.strategy import Strategy
from ...registry.table import AGE, NAME, TableConvertor, age, name
from ...storage.factory import StorageFactory

Object = dict[str, Any]
INFO = ResourceInfo("", "v1", "configmaps", "ConfigMap", "configmap", True, short_names=("cm",))
MAX_SIZE = 1024 * 1024  # corev1.MaxSecretSize, shared by configmaps


def data_size(obj: Object) -> int:
    total = 0
    for key, value in (obj.get("data") or {}).items():
        total += len(key) + len(str(value).encode())
    for key, value in (obj.get("binaryData") or {}).items():
        total += len(key) + len(base64.b64decode(value or "")) if isinstance(value, str) else 0
    return total


def validate_keys(data: Any, path: field.Path) -> field.ErrorList:
    errs: field.ErrorList = []
    if data is None:
        return errs
    if not isinstance(data, dict):
        return [field.type_invalid(path, data, "must be an object")]
    for key in data:
        for msg in validation.is_config_map_key(key):
            errs.append(field.invalid(path.key(key), key, msg))
    return errs


class ConfigMapStrategy(Strategy):
    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        errs = super().validate(ctx, obj)
        errs += validate_keys(obj.get("data"), field.Path("data"))
        errs += validate_keys(obj.get("binaryData"), field.Path("binaryData"))
        for key in (obj.get("data") or {}):
            if key in (obj.get("binaryData") or {}):
                errs.append(field.invalid(field.Path("data").key(key), key,
                                          "duplicate of key present in binaryData"))
        if not errs and data_size(obj) > MAX_SIZE:
            errs.append(field.too_long(field.Path(""), "", MAX_SIZE))
        return errs

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        errs = super().validate_update(ctx, obj, old)
        if old.get("immutable") is True:
            if obj.get("immutable") is not True:
                errs.append(field.forbidden(field.Path("immutable"),
                                            "field is immutable when `immutable` is set"))
            for key in ("data", "binaryData"):
                if obj.get(key) != old.get(key):
                    errs.append(field.forbidden(field.Path(key), "field is immutable when `immutable` is set"))
        return errs


def _count(obj: Object) -> int:
    return len(obj.get("data") or {}) + len(obj.get("binaryData") or {})


TABLE = TableConvertor((NAME, TableColumn("Data", "string", "", "Data contains the configuration data."), AGE),
                       lambda o: [name(o), _count(o), age(o)])


def new_rest(storage: StorageFactory) -> dict[str, Any]:
    return {"configmaps": Store(INFO, ConfigMapStrategy(INFO), storage, "/registry/configmaps", TABLE)}
