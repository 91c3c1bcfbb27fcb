"""Regular, init and ephemeral containers (validateContainers, validateInitContainers,
validateEphemeralContainers, validateContainerCommon)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from .env import validate_env, validate_env_from
from .mounts import validate_volume_devices, validate_volume_mounts
from .options import PodValidationOptions
from .probes import validate_lifecycle, validate_probes
from .resources import validate_resource_requirements
from .security import validate_security_context
from .volumes import validate_dns1123_label

Object = dict[str, Any]
PROTOCOLS = ("SCTP", "TCP", "UDP")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
RESIZE_RESOURCES = ("cpu", "memory")
RESIZE_POLICIES = ("NotRequired", "RestartContainer")
# Fields an ephemeral container may not set (allowedEphemeralContainerFields is false for them).
EPHEMERAL_FORBIDDEN = ("ports", "resources", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
                       "resizePolicy", "restartPolicy", "restartPolicyRules")
INIT_ONLY_WITH_RESTART = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")


class ContainerContext:
    """What validating one container needs to know of its pod."""

    def __init__(self, volumes: dict[str, Object], claim_names: set[str], grace: int | None, restart_policy: str,
                 host_users: bool, opts: PodValidationOptions):
        self.volumes, self.claim_names, self.grace = volumes, claim_names, grace
        self.restart_policy, self.host_users, self.opts = restart_policy, host_users, opts


def _ports(ports: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    names: set[str] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        idx, name = path.index(i), port.get("name") or ""
        if name:
            msgs = validation.is_valid_port_name(name)
            errs += [field.invalid(idx.child("name"), name, m) for m in msgs]
            if not msgs and name in names:
                errs.append(field.duplicate(idx.child("name"), name))
            names.add(name)
        container_port, host_port = port.get("containerPort") or 0, port.get("hostPort") or 0
        if not container_port:
            errs.append(field.required(idx.child("containerPort"), ""))
        else:
            errs += [field.invalid(idx.child("containerPort"), container_port, m)
                     for m in validation.is_valid_port_num(container_port)]
        if host_port:
            errs += [field.invalid(idx.child("hostPort"), host_port, m) for m in validation.is_valid_port_num(host_port)]
        protocol = port.get("protocol") or ""
        if not protocol:
            errs.append(field.required(idx.child("protocol"), ""))
        elif protocol not in PROTOCOLS:
            errs.append(field.not_supported(idx.child("protocol"), protocol, PROTOCOLS))
    return errs


def _choice(value: str, choices: tuple[str, ...], path: Path) -> ErrorList:
    if not value:
        return [field.required(path, "")]
    return [] if value in choices else [field.not_supported(path, value, choices)]


def _resize_policy(policies: Any, restart_policy: str, path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, policy in enumerate(policies if isinstance(policies, list) else []):
        resource, restart = policy.get("resourceName") or "", policy.get("restartPolicy") or ""
        if resource in seen:
            errs.append(field.duplicate(path.index(i), resource))
        seen.add(resource)
        errs += _choice(resource, RESIZE_RESOURCES, path) + _choice(restart, RESIZE_POLICIES, path)
        if restart_policy == "Never" and restart != "NotRequired":
            errs.append(field.invalid(path, restart, "must be 'NotRequired' when `restartPolicy` is 'Never'"))
    return errs


def validate_container_common(container: Object, ctx: ContainerContext, path: Path) -> ErrorList:
    name = container.get("name") or ""
    errs = validate_dns1123_label(name, path.child("name")) if name else [field.required(path.child("name"), "")]
    if not container.get("image"):
        errs.append(field.required(path.child("image"), ""))
    errs += _choice(container.get("terminationMessagePolicy") or "", TERMINATION_MESSAGE_POLICIES,
                    path.child("terminationMessagePolicy"))
    errs += _ports(container.get("ports"), path.child("ports"))
    errs += validate_env(container.get("env"), path.child("env"), ctx.opts)
    errs += validate_env_from(container.get("envFrom"), path.child("envFrom"), ctx.opts)
    errs += validate_volume_mounts(container, ctx.volumes, path.child("volumeMounts"))
    errs += validate_volume_devices(container, ctx.volumes, path.child("volumeDevices"))
    errs += _choice(container.get("imagePullPolicy") or "", PULL_POLICIES, path.child("imagePullPolicy"))
    errs += validate_resource_requirements(container.get("resources"), ctx.claim_names, path.child("resources"),
                                           ctx.opts)
    errs += _resize_policy(container.get("resizePolicy"), ctx.restart_policy, path.child("resizePolicy"))
    return errs + validate_security_context(container.get("securityContext"), path.child("securityContext"),
                                            ctx.host_users)


def _host_port_conflicts(containers: list[Object], path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for ci, container in enumerate(containers):
        for pi, port in enumerate(container.get("ports") or []):
            if not port.get("hostPort"):
                continue
            key = f"{port.get('protocol', '')}/{port.get('hostIP', '')}/{port['hostPort']}"
            if key in seen:
                errs.append(field.duplicate(path.index(ci).child("ports").index(pi).child("hostPort"), key))
            seen.add(key)
    return errs


def _hooks(container: Object, ctx: ContainerContext, path: Path) -> ErrorList:
    errs: ErrorList = []
    if isinstance(container.get("lifecycle"), dict):
        errs += validate_lifecycle(container["lifecycle"], ctx.grace, path.child("lifecycle"), ctx.opts)
    return errs + validate_probes(container, ctx.grace, path, ctx.opts)


def validate_containers(containers: list[Object], ctx: ContainerContext, path: Path) -> ErrorList:
    if not containers:
        return [field.required(path, "")]
    errs: ErrorList = []
    names: set[str] = set()
    for i, container in enumerate(containers):
        idx = path.index(i)
        errs += validate_container_common(container, ctx, idx)
        if container.get("name", "") in names:
            errs.append(field.duplicate(idx.child("name"), container.get("name", "")))
        names.add(container.get("name", ""))
        errs += _hooks(container, ctx, idx)
        if container.get("restartPolicy") is not None:
            errs.append(field.forbidden(idx.child("restartPolicy"), "may not be set for non-init containers"))
    return errs + _host_port_conflicts(containers, path)


def validate_init_containers(init: list[Object], regular: list[Object], ctx: ContainerContext,
                             path: Path) -> ErrorList:
    errs: ErrorList = []
    names = {c.get("name", "") for c in regular}
    for i, container in enumerate(init):
        idx = path.index(i)
        errs += validate_container_common(container, ctx, idx)
        policy = container.get("restartPolicy")
        if policy is not None and policy != "Always":
            errs.append(field.not_supported(idx.child("restartPolicy"), policy, ["Always"]))
        name = container.get("name", "")
        if name in names:
            errs.append(field.duplicate(idx.child("name"), name))
        elif name:
            names.add(name)
        errs += _host_port_conflicts([container], path)
        if policy == "Always":
            errs += _hooks(container, ctx, idx)
        else:
            errs += [field.forbidden(idx.child(key), "may not be set for init containers without restartPolicy=Always")
                     for key in INIT_ONLY_WITH_RESTART if container.get(key) is not None]
        if not ctx.opts.allow_sidecar_resize_policy and container.get("resizePolicy"):
            errs.append(field.invalid(idx.child("resizePolicy"), container["resizePolicy"],
                                      "must not be set for init containers"))
    return errs


def validate_image_whitespace(container: Object, path: Path) -> ErrorList:
    """validateContainerOnlyForPod."""
    image = container.get("image") or ""
    if image != image.strip():
        return [field.invalid(path.child("image"), image, "must not have leading or trailing whitespace")]
    return []


def validate_ephemeral_containers(ephemeral: list[Object], regular: list[Object], init: list[Object],
                                  ctx: ContainerContext, path: Path) -> ErrorList:
    errs: ErrorList = []
    others = {c.get("name", "") for c in regular + init}
    names = set(others)
    for i, container in enumerate(ephemeral):
        idx = path.index(i)
        errs += validate_container_common(container, ctx, idx) + validate_image_whitespace(container, idx)
        name = container.get("name", "")
        if name in names:
            errs.append(field.duplicate(idx.child("name"), name))
        names.add(name)
        target = container.get("targetContainerName") or ""
        if target and target not in others:
            errs.append(field.not_found(idx.child("targetContainerName"), target))
        errs += [field.forbidden(idx.child(key), "cannot be set for an Ephemeral Container")
                 for key in EPHEMERAL_FORBIDDEN if container.get(key) not in (None, {}, [])]
        for j, mount in enumerate(container.get("volumeMounts") or []):
            for key in ("subPath", "subPathExpr"):
                if mount.get(key):
                    errs.append(field.forbidden(idx.child("volumeMounts").index(j).child(key),
                                                "cannot be set for an Ephemeral Container"))
    return errs
