"""ValidatePodSpec and ValidatePodTemplateSpec: the rules every PodSpec meets, in a Pod or in a
template (Deployments, Jobs... reuse them)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from .annotations import validate_pod_annotations
from .containers import (
    ContainerContext,
    validate_containers,
    validate_ephemeral_containers,
    validate_init_containers,
)
from .dns import validate_dns_config, validate_dns_policy, validate_host_aliases, validate_host_names
from .options import PodValidationOptions
from .platform import validate_os
from .resources import validate_resource_requirements
from .scheduling import validate_affinity, validate_gates, validate_tolerations, validate_topology_spread
from .security import validate_host_users, validate_pod_security_context
from .volumes import validate_dns1123_label, validate_volumes

Object = dict[str, Any]
RESTART_POLICIES = ("Always", "OnFailure", "Never")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
MAX_INT32 = 2147483647


def _list(spec: Object, key: str) -> list[Object]:
    value = spec.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _claims(spec: Object, path: Path) -> tuple[set[str], ErrorList]:
    names: set[str] = set()
    errs: ErrorList = []
    for i, claim in enumerate(_list(spec, "resourceClaims")):
        name, claim_path = claim.get("name") or "", path.index(i)
        if not name:
            errs.append(field.required(claim_path.child("name"), ""))
        elif name in names:
            errs.append(field.duplicate(claim_path.child("name"), name))
        else:
            errs += validate_dns1123_label(name, claim_path.child("name"))
            names.add(name)
        has_name, has_template = claim.get("resourceClaimName") is not None, \
            claim.get("resourceClaimTemplateName") is not None
        if has_name == has_template:
            detail = "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified" \
                if has_name else "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            errs.append(field.invalid(claim_path, claim, detail))
    return names, errs


def _containers(spec: Object, volumes: dict[str, Object], claims: set[str], path: Path,
                opts: PodValidationOptions) -> ErrorList:
    grace = spec.get("terminationGracePeriodSeconds")
    ctx = ContainerContext(volumes, claims, grace, spec.get("restartPolicy") or "", spec.get("hostUsers") is not False,
                           opts)
    regular, init = _list(spec, "containers"), _list(spec, "initContainers")
    errs = validate_containers(regular, ctx, path.child("containers"))
    errs += validate_init_containers(init, regular, ctx, path.child("initContainers"))
    return errs + validate_ephemeral_containers(_list(spec, "ephemeralContainers"), regular, init, ctx,
                                                path.child("ephemeralContainers"))


def _host_network_ports(spec: Object, path: Path, opts: PodValidationOptions) -> ErrorList:
    """validatePodHostNetworkDeps."""
    if not spec.get("hostNetwork"):
        return []
    errs: ErrorList = []
    for i, container in enumerate(_list(spec, "containers")):
        for j, port in enumerate(container.get("ports") or []):
            host, container_port = port.get("hostPort") or 0, port.get("containerPort") or 0
            if (opts.resource_is_pod or host != 0) and host != container_port:
                errs.append(field.invalid(path.child("containers").index(i).child("ports").index(j).child("hostPort"),
                                          host, "must match `containerPort` when `hostNetwork` is true"))
    return errs


def _names(spec: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    for key, prefix_ok in (("serviceAccountName", False), ("nodeName", False), ("priorityClassName", False)):
        value = spec.get(key) or ""
        if value:
            errs += [field.invalid(path.child(key), value, m) for m in validation.name_is_dns_subdomain(value, prefix_ok)]
    runtime_class = spec.get("runtimeClassName")
    if runtime_class is not None:
        errs += [field.invalid(path.child("runtimeClassName"), runtime_class, m)
                 for m in validation.name_is_dns_subdomain(runtime_class, False)]
    return errs


def _scalars(spec: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        errs.append(field.invalid(path.child("activeDeadlineSeconds"), deadline,
                                  validation.inclusive_range_error(1, MAX_INT32)))
    policy = spec.get("preemptionPolicy")
    if policy is not None:
        if not policy:
            errs.append(field.required(path.child("preemptionPolicy"), ""))
        elif policy not in PREEMPTION_POLICIES:
            errs.append(field.not_supported(path.child("preemptionPolicy"), policy, PREEMPTION_POLICIES))
    restart = spec.get("restartPolicy") or ""
    if not restart:
        errs.append(field.required(path.child("restartPolicy"), ""))
    elif restart not in RESTART_POLICIES:
        errs.append(field.not_supported(path.child("restartPolicy"), restart, RESTART_POLICIES))
    return errs


def _pull_secrets(spec: Object, path: Path) -> ErrorList:
    return [field.invalid(path.child("imagePullSecrets").index(i), ref, "only name may be set")
            for i, ref in enumerate(_list(spec, "imagePullSecrets")) if set(ref) - {"name"}]


def validate_pod_spec(spec: Object, path: Path, opts: PodValidationOptions, pod_name: str = "") -> ErrorList:
    """ValidatePodSpec; `pod_name` is the pod's name when the spec is a real pod's (ephemeral volumes)."""
    errs: ErrorList = []
    if spec.get("terminationGracePeriodSeconds") is None:
        errs.append(field.required(path.child("terminationGracePeriodSeconds"), ""))
    volumes, volume_errs = validate_volumes(spec.get("volumes"), pod_name, path.child("volumes"), opts)
    claims, claim_errs = _claims(spec, path.child("resourceClaims"))
    errs += volume_errs + claim_errs + _containers(spec, volumes, claims, path, opts)
    if opts.pod_level_resources_enabled and isinstance(spec.get("resources"), dict):
        errs += _pod_resources(spec["resources"], claims, path.child("resources"), opts)
    errs += _host_network_ports(spec, path, opts) + _scalars(spec, path)
    errs += validate_dns_policy(spec.get("dnsPolicy") or "", path.child("dnsPolicy"))
    errs += validation.validate_labels(spec.get("nodeSelector"), path.child("nodeSelector"))
    errs += validate_pod_security_context(spec, path.child("securityContext"), opts)
    errs += _pull_secrets(spec, path) + validate_affinity(spec.get("affinity"), path.child("affinity"), opts)
    errs += validate_dns_config(spec.get("dnsConfig"), spec.get("dnsPolicy") or "", path.child("dnsConfig"), opts)
    errs += validate_gates(spec, path)
    errs += validate_topology_spread(spec.get("topologySpreadConstraints"), path.child("topologySpreadConstraints"),
                                     opts)
    errs += validate_host_users(spec, path) + _names(spec, path) + validate_host_names(spec, path)
    errs += validate_tolerations(spec.get("tolerations"), path.child("tolerations"))
    errs += validate_host_aliases(spec.get("hostAliases"), path.child("hostAliases"))
    if spec.get("overhead") is not None:
        errs += validate_resource_requirements({"limits": spec["overhead"]}, set(), path.child("overhead"), opts)
    return errs + validate_os(spec, path, opts)


def _pod_resources(resources: Object, claims: set[str], path: Path, opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    if resources.get("claims") is not None:
        errs.append(field.forbidden(path.child("claims"), "claims cannot be set for Resources at pod-level"))
    return errs + validate_resource_requirements(resources, claims, path, opts, pod_level=True)


def validate_pod_template_spec(template: Any, path: Path, opts: PodValidationOptions) -> ErrorList:
    """ValidatePodTemplateSpec (its metadata: labels and annotations only)."""
    template = template if isinstance(template, dict) else {}
    meta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
    spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    errs = validation.validate_labels(meta.get("labels"), path.child("labels"))
    errs += validation.validate_annotations(meta.get("annotations"), path.child("annotations"))
    errs += validate_pod_annotations(meta.get("annotations"), spec, path.child("annotations"))
    errs += validate_pod_spec(spec, path.child("spec"), opts)
    if spec.get("ephemeralContainers"):
        errs.append(field.forbidden(path.child("spec", "ephemeralContainers"),
                                    "ephemeral containers not allowed in pod template"))
    return errs
