"""Container environment: env (ValidateEnv, validateEnvVarValueFrom) and envFrom (ValidateEnvFrom)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from .options import PodValidationOptions
from .selectors import ENV_FIELD_PATHS, validate_object_field_selector, validate_resource_field_selector

Object = dict[str, Any]
VALUE_FROM_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")


def env_name_errors(name: str, opts: PodValidationOptions) -> list[str]:
    if opts.allow_relaxed_environment_variable_validation:
        return validation.is_relaxed_env_var_name(name)
    return validation.is_env_var_name(name)


def _key_selector(selector: Object, path: Path) -> ErrorList:
    """validateConfigMapKeySelector / validateSecretKeySelector."""
    name = selector.get("name") or ""
    errs = [field.invalid(path.child("name"), name, m) for m in validation.name_is_dns_subdomain(name, False)]
    key = selector.get("key") or ""
    if not key:
        errs.append(field.required(path.child("key"), ""))
    else:
        errs += [field.invalid(path.child("key"), key, m) for m in validation.is_config_map_key(key)]
    return errs


def _value_from(env: Object, path: Path) -> ErrorList:
    source = env.get("valueFrom")
    if not isinstance(source, dict):
        return []
    errs: ErrorList = []
    count = sum(1 for key in VALUE_FROM_SOURCES if source.get(key) is not None)
    if isinstance(source.get("fieldRef"), dict):
        errs += validate_object_field_selector(source["fieldRef"], ENV_FIELD_PATHS, path.child("fieldRef"))
    if isinstance(source.get("resourceFieldRef"), dict):
        errs += validate_resource_field_selector(source["resourceFieldRef"], path.child("resourceFieldRef"), False)
    for key in ("configMapKeyRef", "secretKeyRef"):
        if isinstance(source.get(key), dict):
            errs += _key_selector(source[key], path.child(key))
    if count == 0:
        errs.append(field.invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` "
                                            "or `secretKeyRef`"))
    elif env.get("value"):
        errs.append(field.invalid(path, "", "may not be specified when `value` is not empty"))
    elif count > 1:
        errs.append(field.invalid(path, "", "may not have more than one field specified at a time"))
    return errs


def validate_env(env_vars: Any, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    for i, env in enumerate(env_vars if isinstance(env_vars, list) else []):
        env_path, name = path.index(i), env.get("name") or ""
        if not name:
            errs.append(field.required(env_path.child("name"), ""))
        else:
            errs += [field.invalid(env_path.child("name"), name, m) for m in env_name_errors(name, opts)]
        errs += _value_from(env, env_path.child("valueFrom"))
    return errs


def _env_source(source: Object, path: Path) -> ErrorList:
    name = source.get("name") or ""
    if not name:
        return [field.required(path.child("name"), "")]
    return [field.invalid(path.child("name"), name, m) for m in validation.name_is_dns_subdomain(name, True)]


def validate_env_from(sources: Any, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    for i, source in enumerate(sources if isinstance(sources, list) else []):
        src_path = path.index(i)
        prefix = source.get("prefix") or ""
        if prefix:
            errs += [field.invalid(src_path.child("prefix"), prefix, m) for m in env_name_errors(prefix, opts)]
        count = 0
        for key in ("configMapRef", "secretRef"):
            if isinstance(source.get(key), dict):
                count += 1
                errs += _env_source(source[key], src_path.child(key))
        if count == 0:
            errs.append(field.invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            errs.append(field.invalid(path, "", "may not have more than one field specified at a time"))
    return errs
