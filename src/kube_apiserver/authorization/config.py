"""The authorizer chain as data (AuthorizationConfiguration, apiserver.config.k8s.io/v1): read from
--authorization-config, or built from --authorization-mode and --authorization-webhook-* as upstream's
buildAuthorizationConfiguration does; validated with upstream's field errors."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from .. import cel
from ..apimachinery import configdoc, goduration
from ..apimachinery import field as fld
from ..apimachinery.goos import os_error_text
from ..apimachinery.validation import is_dns1123_subdomain

KIND = "AuthorizationConfiguration"
VERSIONS = ("v1", "v1beta1", "v1alpha1")
KNOWN_TYPES = ("AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook")
REPEATABLE_TYPES = ("Webhook",)
IN_CLUSTER, KUBECONFIG_FILE = "InClusterConfig", "KubeConfigFile"
MAX_MATCH_CONDITIONS = 64
# GetNameForAuthorizerMode: the names the legacy modes get
MODE_NAMES = {"AlwaysAllow": "alwaysallow", "AlwaysDeny": "alwaysdeny", "Node": "node", "RBAC": "rbac",
              "ABAC": "abac"}


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class WebhookSpec:
    kubeconfig_file: str
    timeout: float = 30.0
    authorized_ttl: float = 300.0
    unauthorized_ttl: float = 30.0
    cache_authorized: bool = True
    cache_unauthorized: bool = True
    subject_access_review_version: str = "v1beta1"
    match_condition_version: str = ""
    failure_policy: str = "NoOpinion"
    connection_type: str = KUBECONFIG_FILE
    match_conditions: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuthorizerSpec:
    type: str
    name: str
    webhook: WebhookSpec | None = None


@dataclass(frozen=True)
class AuthorizationConfiguration:
    authorizers: tuple[AuthorizerSpec, ...] = field(default_factory=tuple)


def from_flags(modes: list[str], webhook_config_file: str, webhook_version: str, authorized_ttl: float,
               unauthorized_ttl: float) -> AuthorizationConfiguration:
    specs = []
    for mode in modes:
        if mode == "Webhook":
            specs.append(AuthorizerSpec("Webhook", "default", WebhookSpec(
                webhook_config_file, 30.0, authorized_ttl, unauthorized_ttl, authorized_ttl != 0,
                unauthorized_ttl != 0, webhook_version)))
        else:
            specs.append(AuthorizerSpec(mode, MODE_NAMES.get(mode, mode.lower())))
    return AuthorizationConfiguration(tuple(specs))


def load_file(path: str) -> AuthorizationConfiguration:
    """LoadAndValidateFile: the configuration, or ConfigError saying what is wrong with it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise ConfigError(os_error_text("open", path, err)) from None
    try:
        raw = configdoc.decode(data, KIND, VERSIONS)
    except configdoc.ConfigDocumentError as err:
        raise ConfigError(str(err)) from None
    config, unknown = _read(raw)
    if unknown:
        raise ConfigError("strict decoding error: " + ", ".join(f'unknown field "{name}"' for name in unknown))
    errors = validate(config)
    if errors:
        raise ConfigError(fld.aggregate_message(errors))
    return config


_AUTHORIZER_FIELDS = ("type", "name", "webhook")
_WEBHOOK_FIELDS = ("timeout", "authorizedTTL", "unauthorizedTTL", "cacheAuthorizedRequests",
                   "cacheUnauthorizedRequests", "subjectAccessReviewVersion",
                   "matchConditionSubjectAccessReviewVersion", "failurePolicy", "connectionInfo", "matchConditions")


def _read(raw: dict[str, Any]) -> tuple[AuthorizationConfiguration, list[str]]:
    unknown = configdoc.unknown_fields(raw, "", ("apiVersion", "kind", "authorizers"))
    specs = []
    for i, item in enumerate(raw.get("authorizers") or []):
        item = item if isinstance(item, dict) else {}
        path = f"authorizers[{i}]"
        unknown += configdoc.unknown_fields(item, path, _AUTHORIZER_FIELDS)
        webhook = None
        if isinstance(item.get("webhook"), dict):
            webhook, more = _read_webhook(item["webhook"], f"{path}.webhook")
            unknown += more
        specs.append(AuthorizerSpec(str(item.get("type") or ""), str(item.get("name") or ""), webhook))
    return AuthorizationConfiguration(tuple(specs)), unknown


def _duration(value: Any, default: float) -> float:
    if value in (None, ""):
        return default
    try:
        return goduration.parse_duration(str(value))
    except ValueError:
        raise ConfigError(f'time: invalid duration "{value}"') from None


def _read_webhook(raw: dict[str, Any], path: str) -> tuple[WebhookSpec, list[str]]:
    unknown = configdoc.unknown_fields(raw, path, _WEBHOOK_FIELDS)
    connection = raw.get("connectionInfo") if isinstance(raw.get("connectionInfo"), dict) else {}
    unknown += configdoc.unknown_fields(connection, f"{path}.connectionInfo", ("type", "kubeConfigFile"))
    conditions = []
    for n, condition in enumerate(raw.get("matchConditions") or []):
        condition = condition if isinstance(condition, dict) else {}
        unknown += configdoc.unknown_fields(condition, f"{path}.matchConditions[{n}]", ("expression",))
        conditions.append(str(condition.get("expression") or ""))
    spec = WebhookSpec(
        kubeconfig_file=str(connection.get("kubeConfigFile") or ""),
        timeout=_duration(raw.get("timeout"), 0.0),
        # SetDefaults_WebhookConfiguration: TTLs of 5m and 30s, both caches on
        authorized_ttl=_duration(raw.get("authorizedTTL"), 300.0),
        unauthorized_ttl=_duration(raw.get("unauthorizedTTL"), 30.0),
        cache_authorized=raw.get("cacheAuthorizedRequests") is not False,
        cache_unauthorized=raw.get("cacheUnauthorizedRequests") is not False,
        subject_access_review_version=str(raw.get("subjectAccessReviewVersion") or ""),
        match_condition_version=str(raw.get("matchConditionSubjectAccessReviewVersion") or ""),
        failure_policy=str(raw.get("failurePolicy") or ""),
        connection_type=str(connection.get("type") or ""),
        match_conditions=tuple(conditions))
    return spec, unknown


def validate(config: AuthorizationConfiguration) -> list[fld.FieldError]:
    """ValidateAuthorizationConfiguration."""
    errors: list[fld.FieldError] = []
    root = fld.Path("authorizers")
    if not config.authorizers:
        errors.append(fld.required(root, "at least one authorization mode must be defined"))
    seen_types: set[str] = set()
    seen_names: set[str] = set()
    for i, spec in enumerate(config.authorizers):
        path = root.index(i)
        if not spec.type:
            errors.append(fld.required(path.child("type")))
            continue
        if spec.type not in KNOWN_TYPES:
            errors.append(fld.not_supported(path.child("type"), spec.type, sorted(KNOWN_TYPES)))
            continue
        if spec.type in seen_types and spec.type not in REPEATABLE_TYPES:
            errors.append(fld.duplicate(path.child("type"), spec.type))
            continue
        seen_types.add(spec.type)
        if not spec.name:
            errors.append(fld.required(path.child("name")))
        elif spec.name in seen_names:
            errors.append(fld.duplicate(path.child("name"), spec.name))
        elif problems := is_dns1123_subdomain(spec.name):
            errors.append(fld.invalid(path.child("name"), spec.name,
                                      f"authorizer name is invalid: {', '.join(problems)}"))
        seen_names.add(spec.name)
        if spec.type == "Webhook":
            if spec.webhook is None:
                errors.append(fld.required(path.child("webhook"), "required when type=Webhook"))
                continue
            errors += validate_webhook(spec.webhook, path.child("webhook"))
        elif spec.webhook is not None:
            errors.append(fld.invalid(path.child("webhook"), "non-null", "may only be specified when type=Webhook"))
    return errors


def validate_webhook(spec: WebhookSpec, path: fld.Path) -> list[fld.FieldError]:
    errors: list[fld.FieldError] = []
    if spec.timeout == 0:
        errors.append(fld.required(path.child("timeout")))
    elif not 0 < spec.timeout <= 30:
        errors.append(fld.invalid(path.child("timeout"), goduration.format_duration(spec.timeout),
                                  "must be > 0s and <= 30s"))
    for name, ttl in (("authorizedTTL", spec.authorized_ttl), ("unauthorizedTTL", spec.unauthorized_ttl)):
        if ttl == 0:
            errors.append(fld.required(path.child(name)))
        elif ttl < 0:
            errors.append(fld.invalid(path.child(name), goduration.format_duration(ttl), "must be > 0s"))
    if not spec.subject_access_review_version:
        errors.append(fld.required(path.child("subjectAccessReviewVersion")))
    elif spec.subject_access_review_version not in ("v1", "v1beta1"):
        errors.append(fld.not_supported(path.child("subjectAccessReviewVersion"),
                                        spec.subject_access_review_version, ["v1", "v1beta1"]))
    if not spec.match_condition_version:
        if spec.match_conditions:
            errors.append(fld.required(path.child("matchConditionSubjectAccessReviewVersion"),
                                       "required if match conditions are specified"))
    elif spec.match_condition_version != "v1":
        errors.append(fld.not_supported(path.child("matchConditionSubjectAccessReviewVersion"),
                                        spec.match_condition_version, ["v1"]))
    if not spec.failure_policy:
        errors.append(fld.required(path.child("failurePolicy")))
    elif spec.failure_policy not in ("NoOpinion", "Deny"):
        errors.append(fld.not_supported(path.child("failurePolicy"), spec.failure_policy, ["NoOpinion", "Deny"]))
    errors += _connection_errors(spec, path.child("connectionInfo"))
    errors += _match_condition_errors(spec.match_conditions, path.child("matchConditions"))
    return errors


def _connection_errors(spec: WebhookSpec, path: fld.Path) -> list[fld.FieldError]:
    if not spec.connection_type:
        return [fld.required(path.child("type"))]
    if spec.connection_type == IN_CLUSTER:
        if spec.kubeconfig_file:
            return [fld.invalid(path.child("kubeConfigFile"), spec.kubeconfig_file,
                                "can only be set when type=KubeConfigFile")]
        return []
    if spec.connection_type != KUBECONFIG_FILE:
        return [fld.not_supported(path.child("type"), spec.connection_type, [IN_CLUSTER, KUBECONFIG_FILE])]
    file_path = path.child("kubeConfigFile")
    if not spec.kubeconfig_file:
        return [fld.required(file_path)]
    if not os.path.isabs(spec.kubeconfig_file):
        return [fld.invalid(file_path, spec.kubeconfig_file, "must be an absolute path")]
    try:
        st = os.stat(spec.kubeconfig_file)
    except OSError as err:
        return [fld.invalid(file_path, spec.kubeconfig_file,
                            f"error loading file: stat {spec.kubeconfig_file}: {(err.strerror or '').lower()}")]
    if not stat.S_ISREG(st.st_mode):
        return [fld.invalid(file_path, spec.kubeconfig_file, "must be a regular file")]
    return []


def _match_condition_errors(conditions: tuple[str, ...], path: fld.Path) -> list[fld.FieldError]:
    if len(conditions) > MAX_MATCH_CONDITIONS:
        return [fld.too_many(path, len(conditions), MAX_MATCH_CONDITIONS)]
    errors: list[fld.FieldError] = []
    seen: set[str] = set()
    for i, expression in enumerate(conditions):
        expression_path = path.index(i).child("expression")
        if not expression.strip():
            errors.append(fld.required(expression_path))
            continue
        if expression in seen:
            errors.append(fld.duplicate(expression_path, expression))
            continue
        seen.add(expression)
        try:
            cel.compile(expression, ("request",))
        except cel.CompileError as err:
            errors.append(fld.invalid(expression_path, expression, f"compilation failed: {err}"))
    return errors
