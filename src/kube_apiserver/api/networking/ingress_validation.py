"""Ingress validation (pkg/apis/networking/validation: ValidateIngressCreate/Update/StatusUpdate)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...apimachinery import field, validation
from .common import items, required_segment, subdomain_errors

Object = dict[str, Any]
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")  # sets.List(): sorted
INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
INVALID_PATH_SUFFIXES = ("/..", "/.")
CLASS_ANNOTATION = "kubernetes.io/ingress.class"
NOT_AN_IP = "must be a DNS name, not an IP address"


@dataclass(frozen=True)
class Options:
    """IngressValidationOptions: what the stored object already had is tolerated on update."""

    allow_invalid_secret_name: bool = False
    allow_invalid_wildcard_host_rule: bool = False
    allow_relaxed_service_name: bool = False  # RelaxedServiceNameValidation is off in v1.34


def update_options(old: Object) -> Options:
    spec = old.get("spec") or {}
    return Options(allow_invalid_secret_name=any(_secret_name_errors(t.get("secretName") or "")
                                                 for t in items(spec, "tls")),
                   allow_invalid_wildcard_host_rule=any(_invalid_wildcard_rule(r) for r in items(spec, "rules")),
                   allow_relaxed_service_name=any(_relaxed_name(n) for n in _service_names(spec)))


def _invalid_wildcard_rule(rule: Object) -> bool:
    return "*" in (rule.get("host") or "") and bool(_validate_rule_value(rule, field.Path("rule"), Options()))


def _service_names(spec: Object) -> list[str]:
    backends = [spec.get("defaultBackend")] + [p.get("backend") for r in items(spec, "rules")
                                                 for p in items(r.get("http"), "paths")]
    return [b["service"].get("name") or "" for b in backends
            if isinstance(b, dict) and isinstance(b.get("service"), dict)]


def _relaxed_name(service_name: str) -> bool:
    """A valid DNS label that is not a valid DNS-1035 label."""
    return not validation.name_is_dns_label(service_name, False) and \
        bool(validation.name_is_dns1035_label(service_name, False))


def validate_class_annotation(obj: Object) -> field.ErrorList:
    """ValidateIngressCreate: the legacy class annotation must agree with ingressClassName."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    class_name = (obj.get("spec") or {}).get("ingressClassName")
    if CLASS_ANNOTATION in annotations and class_name is not None and annotations[CLASS_ANNOTATION] != class_name:
        return [field.invalid(field.Path("annotations").child(CLASS_ANNOTATION), annotations[CLASS_ANNOTATION],
                              "must match `ingressClassName` when both are specified")]
    return []


def validate_spec(spec: Object, path: field.Path, opts: Options) -> field.ErrorList:
    """ValidateIngressSpec."""
    errs: field.ErrorList = []
    rules, backend = spec.get("rules"), spec.get("defaultBackend")
    if not rules and backend is None:
        errs.append(field.invalid(path, rules, "either `defaultBackend` or `rules` must be specified"))
    if backend is not None:
        errs += validate_backend(backend, path.child("defaultBackend"), opts)
    if rules:
        errs += _validate_rules(items(spec, "rules"), path.child("rules"), opts)
    if spec.get("tls"):
        errs += _validate_tls(items(spec, "tls"), path.child("tls"), opts)
    class_name = spec.get("ingressClassName")
    if class_name is not None:
        errs += [field.invalid(path.child("ingressClassName"), class_name, msg)
                 for msg in validation.name_is_dns_subdomain(class_name, False)]
    return errs


def _validate_tls(tls_list: list[Object], path: field.Path, opts: Options) -> field.ErrorList:
    errs: field.ErrorList = []
    for i, tls in enumerate(tls_list):
        for j, host in enumerate(tls.get("hosts") or []):
            errs += _host_errors(host, path.index(i).child("hosts").index(j))
        if not opts.allow_invalid_secret_name:
            secret = tls.get("secretName") or ""
            errs += [field.invalid(path.index(i).child("secretName"), secret, msg)
                     for msg in _secret_name_errors(secret)]
    return errs


def _secret_name_errors(secret_name: str) -> list[str]:
    return validation.name_is_dns_subdomain(secret_name, False) if secret_name else []


def _host_errors(host: str, path: field.Path) -> field.ErrorList:
    """A wildcard DNS subdomain when it has a `*`, a DNS subdomain otherwise."""
    if "*" in host:
        return [field.invalid(path, host, msg) for msg in validation.is_wildcard_dns1123_subdomain(host)]
    return subdomain_errors(host, path)


def _validate_rules(rules: list[Object], path: field.Path, opts: Options) -> field.ErrorList:
    errs: field.ErrorList = []
    for i, rule in enumerate(rules):
        host = rule.get("host") or ""
        if host and validation.parse_ip_sloppy(host) is not None:
            errs.append(field.invalid(path.index(i).child("host"), host, NOT_AN_IP))
        if host:
            errs += _host_errors(host, path.index(i).child("host"))
        if "*" not in host or not opts.allow_invalid_wildcard_host_rule:
            errs += _validate_rule_value(rule, path.index(i), opts)
    return errs


def _validate_rule_value(rule: Object, path: field.Path, opts: Options) -> field.ErrorList:
    http = rule.get("http")
    if not isinstance(http, dict):
        return []
    paths = items(http, "paths")
    errs = [] if paths else [field.required(path.child("http", "paths"), "")]
    for i, http_path in enumerate(paths):
        errs += _validate_path(http_path, path.child("http", "paths").index(i), opts)
    return errs


def _validate_path(http_path: Object, path: field.Path, opts: Options) -> field.ErrorList:
    """validateHTTPIngressPath: the path's form depends on its pathType."""
    path_type = http_path.get("pathType")
    if path_type is None:
        return [field.required(path.child("pathType"), "pathType must be specified")]
    value = http_path.get("path") or ""
    errs: field.ErrorList = []
    if path_type in ("Exact", "Prefix"):
        errs += _absolute_path_errors(value, path.child("path"))
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(field.invalid(path.child("path"), value, "must be an absolute path"))
    else:
        errs.append(field.not_supported(path.child("pathType"), path_type, PATH_TYPES))
    return errs + validate_backend(http_path.get("backend") or {}, path.child("backend"), opts)


def _absolute_path_errors(value: str, path: field.Path) -> field.ErrorList:
    errs = [] if value.startswith("/") else [field.invalid(path, value, "must be an absolute path")]
    if value:
        errs += [field.invalid(path, value, f"must not contain '{seq}'")
                 for seq in INVALID_PATH_SEQUENCES if seq in value]
        errs += [field.invalid(path, value, f"cannot end with '{suffix}'")
                 for suffix in INVALID_PATH_SUFFIXES if value.endswith(suffix)]
    return errs


def validate_backend(backend: Object, path: field.Path, opts: Options) -> field.ErrorList:
    """validateIngressBackend: exactly one of a resource and a service."""
    resource, service = backend.get("resource"), backend.get("service")
    if resource is not None and service is not None:
        return [field.invalid(path, "", "cannot set both resource and service backends")]
    if isinstance(resource, dict):
        return validate_typed_reference(resource, path.child("resource"))
    if not isinstance(service, dict):
        return [field.invalid(path, "", "resource or service backend is required")]
    return _validate_service_backend(service, path, opts)


def _validate_service_backend(service: Object, path: field.Path, opts: Options) -> field.ErrorList:
    errs: field.ErrorList = []
    service_name = service.get("name") or ""
    if not service_name:
        errs.append(field.required(path.child("service", "name"), ""))
    else:
        check = validation.name_is_dns_label if opts.allow_relaxed_service_name else validation.name_is_dns1035_label
        errs += [field.invalid(path.child("service", "name"), service_name, msg) for msg in check(service_name, False)]
    port = service.get("port") or {}
    port_name, number = port.get("name") or "", port.get("number") or 0
    if port_name and number:
        errs.append(field.invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        errs += [field.invalid(path.child("service", "port", "name"), port_name, msg)
                 for msg in validation.is_valid_port_name(port_name)]
    elif number:
        errs += [field.invalid(path.child("service", "port", "number"), number, msg)
                 for msg in validation.is_valid_port_num(number)]
    else:
        errs.append(field.required(path, "port name or number is required"))
    return errs


def validate_typed_reference(ref: Object, path: field.Path) -> field.ErrorList:
    """validateIngressTypedLocalObjectReference."""
    errs: field.ErrorList = []
    if ref.get("apiGroup") is not None:
        errs += subdomain_errors(ref["apiGroup"], path.child("apiGroup"))
    errs += required_segment(ref.get("kind") or "", path.child("kind"))
    return errs + required_segment(ref.get("name") or "", path.child("name"))


def validate_load_balancer(status: Object, old_status: Object, path: field.Path) -> field.ErrorList:
    """ValidateIngressLoadBalancerStatus (IPs as a legacy field: StrictIPCIDRValidation is off in v1.34)."""
    existing = [ing["ip"] for ing in items(old_status, "ingress") if ing.get("ip")]
    errs: field.ErrorList = []
    for i, ingress in enumerate(items(status, "ingress")):
        ip, hostname = ingress.get("ip") or "", ingress.get("hostname") or ""
        if ip:
            errs += validation.is_valid_ip_for_legacy_field(path.child("ingress").index(i).child("ip"), ip,
                                                            strict=False, valid_old_ips=existing)
        if hostname:
            host_path = path.child("ingress").index(i).child("hostname")
            errs += subdomain_errors(hostname, host_path)
            if validation.parse_ip_sloppy(hostname) is not None:
                errs.append(field.invalid(host_path, hostname, NOT_AN_IP))
    return errs
