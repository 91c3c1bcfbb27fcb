"""Probes and lifecycle hooks (validateProbe, validateHandler, validateLifecycle)."""

from __future__ import annotations

from typing import Any

from ....apimachinery import field, validation
from ....apimachinery.field import ErrorList, Path
from .options import PodValidationOptions

Object = dict[str, Any]
SCHEMES = ("HTTP", "HTTPS")
PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
PROBE_COUNTERS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")


def validate_port_num_or_name(port: Any, path: Path) -> ErrorList:
    if isinstance(port, int) and not isinstance(port, bool):
        return [field.invalid(path, port, m) for m in validation.is_valid_port_num(port)]
    if isinstance(port, str):
        return [field.invalid(path, port, m) for m in validation.is_valid_port_name(port)]
    return [field.internal(path, f"unknown type: {port!r}")]


def _http_get(action: Object, path: Path) -> ErrorList:
    errs: ErrorList = [] if action.get("path") else [field.required(path.child("path"), "")]
    errs += validate_port_num_or_name(action.get("port", 0), path.child("port"))
    scheme = action.get("scheme") or ""
    if scheme not in SCHEMES:
        errs.append(field.not_supported(path.child("scheme"), scheme, SCHEMES))
    for header in action.get("httpHeaders") or []:
        name = header.get("name") or ""
        errs += [field.invalid(path.child("httpHeaders"), name, m) for m in validation.is_http_header_name(name)]
    return errs


def _sleep(action: Object, grace: int | None, path: Path, opts: PodValidationOptions) -> ErrorList:
    seconds = action.get("seconds") or 0
    if grace is None:
        return []
    if opts.allow_pod_lifecycle_sleep_action_zero_value:
        if seconds < 0 or seconds > grace:
            return [field.invalid(path, seconds, f"must be non-negative and less than terminationGracePeriodSeconds "
                                                 f"({grace})")]
    elif seconds <= 0 or seconds > grace:
        return [field.invalid(path, seconds, f"must be greater than 0 and less than terminationGracePeriodSeconds "
                                             f"({grace}). Enable AllowPodLifecycleSleepActionZeroValue feature gate "
                                             f"for zero sleep.")]
    return []


def _action(kind: str, action: Object, grace: int | None, path: Path, opts: PodValidationOptions) -> ErrorList:
    if kind == "exec":
        return [] if action.get("command") else [field.required(path.child("command"), "")]
    if kind == "httpGet":
        return _http_get(action, path)
    if kind == "tcpSocket":
        return validate_port_num_or_name(action.get("port", 0), path.child("port"))
    if kind == "grpc":
        return validate_port_num_or_name(action.get("port", 0), path.child("port"))
    return _sleep(action, grace, path, opts)


def validate_handler(handler: Object, kinds: tuple[str, ...], grace: int | None, path: Path,
                     opts: PodValidationOptions) -> ErrorList:
    """validateHandler: exactly one handler type."""
    errs: ErrorList = []
    count = 0
    for kind in kinds:
        action = handler.get(kind)
        if action is None:
            continue
        if count:
            errs.append(field.forbidden(path.child(kind), "may not specify more than 1 handler type"))
            continue
        count += 1
        errs += _action(kind, action if isinstance(action, dict) else {}, grace, path.child(kind), opts)
    if not count:
        errs.append(field.required(path, "must specify a handler type"))
    return errs


def validate_lifecycle(lifecycle: Object, grace: int | None, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs: ErrorList = []
    for hook in ("postStart", "preStop"):
        if isinstance(lifecycle.get(hook), dict):
            errs += validate_handler(lifecycle[hook], LIFECYCLE_HANDLERS, grace, path.child(hook), opts)
    return errs


def _probe(probe: Object, grace: int | None, path: Path, opts: PodValidationOptions) -> ErrorList:
    errs = validate_handler(probe, PROBE_HANDLERS, grace, path, opts)
    for key in PROBE_COUNTERS:
        errs += validation.validate_nonnegative_field(probe.get(key) or 0, path.child(key))
    period = probe.get("terminationGracePeriodSeconds")
    if period is not None and period <= 0:
        errs.append(field.invalid(path.child("terminationGracePeriodSeconds"), period, "must be greater than 0"))
    return errs


def validate_probes(container: Object, grace: int | None, path: Path, opts: PodValidationOptions) -> ErrorList:
    """Liveness, readiness and startup probes of a container that may have them."""
    errs: ErrorList = []
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(key)
        if not isinstance(probe, dict):
            continue
        errs += _probe(probe, grace, path.child(key), opts)
        if key != "readinessProbe" and probe.get("successThreshold") != 1:
            errs.append(field.invalid(path.child(key, "successThreshold"), probe.get("successThreshold") or 0,
                                      "must be 1"))
        if key == "readinessProbe" and probe.get("terminationGracePeriodSeconds") is not None:
            errs.append(field.invalid(path.child(key, "terminationGracePeriodSeconds"),
                                      probe["terminationGracePeriodSeconds"], "must not be set for readinessProbes"))
    return errs
