"""PodSecurity (plugin/pkg/admission/security/podsecurity over pod-security-admission's admission.go).

Pods are refused when they violate their namespace's enforce level and draw a Warning when they violate
its warn level; workload resources with a pod template (deployments, jobs...) only draw warnings.
Namespaces with invalid pod-security labels are refused; raising a namespace's enforce level warns about
its existing pods that would violate it. Audit annotations are not recorded (there is no audit backend)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ...apimachinery import errors
from ...client.informers import SharedInformerFactory
from ..interfaces import CREATE, UPDATE, Attributes, forbidden
from ..webhook.predicates import NamespaceLabels
from .api import (
    AUDIT_LEVEL_LABEL,
    AUDIT_VERSION_LABEL,
    ENFORCE_LEVEL_LABEL,
    ENFORCE_VERSION_LABEL,
    PRIVILEGED,
    WARN_LEVEL_LABEL,
    WARN_VERSION_LABEL,
    LevelVersion,
    Policy,
    compare_levels,
    policy_to_evaluate,
)
from .checks import AggregateCheckResult, Object, aggregate_check_results
from .config import PodSecurityConfiguration
from .registry import evaluate_pod

NamespaceGetter = Callable[[str], Awaitable[Object | None]]
# Where each workload resource keeps its pod template.
POD_TEMPLATE_PATHS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "podtemplates"): ("template",),
    ("", "replicationcontrollers"): ("spec", "template"),
    ("apps", "replicasets"): ("spec", "template"),
    ("apps", "deployments"): ("spec", "template"),
    ("apps", "statefulsets"): ("spec", "template"),
    ("apps", "daemonsets"): ("spec", "template"),
    ("batch", "jobs"): ("spec", "template"),
    ("batch", "cronjobs"): ("spec", "jobTemplate", "spec", "template"),
}
IGNORED_POD_SUBRESOURCES = frozenset({"exec", "attach", "binding", "eviction", "log", "portforward", "proxy",
                                      "status"})
MAX_PODS_TO_CHECK = 3000
POD_CHECK_SECONDS = 1.0


class PodLister(Protocol):
    async def list(self, namespace: str, live: bool = False) -> list[Object]: ...


def _meta(obj: Object | None) -> Object:
    meta = (obj or {}).get("metadata")
    return meta if isinstance(meta, dict) else {}


def _dig(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _images(spec: Object, key: str) -> list[Any]:
    return [c.get("image") if isinstance(c, dict) else None for c in spec.get(key) or ()]


def is_significant_pod_update(pod: Object, old: Object) -> bool:
    """Only image changes and added ephemeral containers can change a pod's verdict (isSignificantPodUpdate)."""
    spec, old_spec = pod.get("spec") or {}, old.get("spec") or {}
    if any(_images(spec, key) != _images(old_spec, key) for key in ("containers", "initContainers")):
        return True
    old_ephemeral = {c.get("name"): c.get("image") for c in old_spec.get("ephemeralContainers") or ()
                     if isinstance(c, dict)}
    return any(not isinstance(c, dict) or c.get("name") not in old_ephemeral
               or c.get("image") != old_ephemeral[c.get("name")] for c in spec.get("ephemeralContainers") or ())


def add_warning(attrs: Attributes, text: str) -> None:
    """Once per request, as the warning recorder dedups (update retries evaluate again)."""
    if text not in attrs.warnings:
        attrs.warnings.append(text)


def _evaluate(lv: LevelVersion, meta: Object, spec: Object) -> AggregateCheckResult:
    return aggregate_check_results(evaluate_pod(lv, meta, spec))


class PodSecurity:
    name = "PodSecurity"

    def __init__(self, get_namespace: NamespaceGetter, pods: PodLister,
                 config: PodSecurityConfiguration | None = None):
        self.pods = pods
        self.namespaces = NamespaceLabels(get_namespace)  # upstream's lister, then the client
        self.config = config or PodSecurityConfiguration()

    def set_informers(self, informers: SharedInformerFactory) -> None:
        self.namespaces.set_informers(informers)

    def handles(self, operation: str) -> bool:
        return operation in (CREATE, UPDATE)

    def policy(self, labels: dict[str, str] | None) -> tuple[Policy, list[Any]]:
        return policy_to_evaluate(labels, self.config.defaults)

    async def validate(self, attrs: Attributes) -> None:
        if attrs.group == "" and attrs.resource == "namespaces":
            await self.validate_namespace(attrs)
        elif attrs.group == "" and attrs.resource == "pods":
            await self.validate_pod(attrs)
        elif (attrs.group, attrs.resource) in POD_TEMPLATE_PATHS:
            await self.validate_pod_controller(attrs)

    # --- namespaces ---

    async def validate_namespace(self, attrs: Attributes) -> None:
        if attrs.subresource or not isinstance(attrs.object, dict):
            return
        name = _meta(attrs.object).get("name") or attrs.name
        labels = _meta(attrs.object).get("labels") or {}
        new_policy, new_errs = self.policy(labels)
        if attrs.operation == CREATE:
            if new_errs:
                raise errors.invalid(attrs.kind or "Namespace", "", name, new_errs)
            # A namespace being created is not the request's namespace: exemptions cannot apply yet.
            self._exempt_namespace_warning(attrs, attrs.namespace, name, new_policy, labels)
            return
        old_policy, old_errs = self.policy(_meta(attrs.old_object).get("labels"))
        if new_errs and (not old_errs or new_errs != old_errs):
            raise errors.invalid(attrs.kind or "Namespace", "", name, new_errs)
        if not self._enforce_tightened(new_policy.enforce, old_policy.enforce):
            return
        if self._exempt_namespace_warning(attrs, name, name, new_policy, labels):
            return
        for warning in await self.evaluate_pods_in_namespace(name, new_policy.enforce):
            add_warning(attrs, warning)

    @staticmethod
    def _enforce_tightened(new: LevelVersion, old: LevelVersion) -> bool:
        """Whether existing pods may now violate enforce: not when unchanged, privileged or only loosened."""
        if new == old or new.level == PRIVILEGED:
            return False
        return not (new.version == old.version and compare_levels(new.level, old.level) < 1)

    def _exempt_namespace_warning(self, attrs: Attributes, request_namespace: str, name: str, policy: Policy,
                                  labels: dict[str, str]) -> bool:
        """True when the namespace is exempt; warns when its labels ask for a policy that is then ignored."""
        if not self._exempt(self.config.exemptions.namespaces, request_namespace):
            return False
        if policy.fully_privileged() or policy.equivalent(self.config.defaults):
            return True
        parts = [f"{mode}={lv}" for mode, lv, level_label, version_label in (
            ("enforce", policy.enforce, ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL),
            ("audit", policy.audit, AUDIT_LEVEL_LABEL, AUDIT_VERSION_LABEL),
            ("warn", policy.warn, WARN_LEVEL_LABEL, WARN_VERSION_LABEL),
        ) if lv.level != PRIVILEGED and (level_label in labels or version_label in labels)]
        add_warning(attrs, f'namespace "{name}" is exempt from Pod Security, and the policy ({", ".join(parts)}) '
                           f"will be ignored")
        return True

    async def evaluate_pods_in_namespace(self, namespace: str, enforce: LevelVersion) -> list[str]:
        """Warnings naming the existing pods that violate `enforce`, one per distinct violation, within a
        budget of pods and time (one pod per controller first, so replicas do not crowd others out)."""
        deadline = time.monotonic() + POD_CHECK_SECONDS
        try:
            pods = self._prioritize(await self.pods.list(namespace))
        except errors.StatusError:
            return ["failed to list pods while checking new PodSecurity enforce level"]
        total, checked = len(pods), min(len(pods), MAX_PODS_TO_CHECK)
        first_pod: dict[str, str] = {}  # violation -> alphabetically first pod showing it
        counts: dict[str, int] = {}
        for i, pod in enumerate(pods[:checked]):
            result = _evaluate(enforce, _meta(pod), pod.get("spec") or {})
            if not result.allowed:
                reason, pod_name = result.forbidden_reason(), str(_meta(pod).get("name") or "")
                first_pod[reason] = min(first_pod.get(reason, pod_name), pod_name)
                counts[reason] = counts.get(reason, 0) + 1
            if time.monotonic() > deadline:
                checked = i + 1
                break
        warnings = []
        if checked < total:
            warnings.append(f"new PodSecurity enforce level only checked against the first {checked} of "
                            f"{total} existing pods")
        if counts:
            warnings.append(f'existing pods in namespace "{namespace}" violate the new PodSecurity enforce level '
                            f'"{enforce}"')
        return warnings + sorted(_decorate(first_pod[r], counts[r], r) for r in counts)

    def _prioritize(self, pods: list[Object]) -> list[Object]:
        """Pods without a controller and the first pod of each controller, then the other replicas."""
        first, duplicates, seen = [], [], set()
        for pod in pods:
            runtime_class = (pod.get("spec") or {}).get("runtimeClassName")
            if self._exempt(self.config.exemptions.runtime_classes, runtime_class):
                continue
            owner = next((ref for ref in _meta(pod).get("ownerReferences") or ()
                          if isinstance(ref, dict) and ref.get("controller") is True), None)
            if owner is not None and owner.get("uid") in seen:
                duplicates.append(pod)
                continue
            if owner is not None:
                seen.add(owner.get("uid"))
            first.append(pod)
        return first + duplicates

    # --- pods and pod templates ---

    async def validate_pod(self, attrs: Attributes) -> None:
        if attrs.subresource in IGNORED_POD_SUBRESOURCES or self._exempt_request(attrs):
            return
        pod = attrs.object
        if not isinstance(pod, dict):
            raise errors.bad_request("failed to decode pod")
        # Checked before reading the namespace (Kubernetes reads it first): most pod updates stop here.
        if attrs.operation == UPDATE and isinstance(attrs.old_object, dict) \
                and not is_significant_pod_update(pod, attrs.old_object):
            return
        policy, policy_errs = await self._namespace_policy(attrs, fail_closed=True)
        if policy is None or (not policy_errs and policy.fully_privileged()):
            return
        self.evaluate_pod(attrs, policy, _meta(pod), pod.get("spec") or {}, enforce=True)

    async def validate_pod_controller(self, attrs: Attributes) -> None:
        if attrs.subresource or self._exempt_request(attrs):
            return
        policy, policy_errs = await self._namespace_policy(attrs, fail_closed=False)
        if policy is None or (not policy_errs and policy.warn.level == PRIVILEGED
                              and policy.audit.level == PRIVILEGED):
            return
        template = _dig(attrs.object, POD_TEMPLATE_PATHS[(attrs.group, attrs.resource)])
        if isinstance(template, dict):
            self.evaluate_pod(attrs, policy, _meta(template), template.get("spec") or {}, enforce=False)

    def _exempt_request(self, attrs: Attributes) -> bool:
        exemptions = self.config.exemptions
        return self._exempt(exemptions.namespaces, attrs.namespace) or \
            self._exempt(exemptions.usernames, attrs.user.name)

    async def _namespace_policy(self, attrs: Attributes, fail_closed: bool) -> tuple[Policy | None, list[Any]]:
        """The policy of the request's namespace; a namespace that cannot be read refuses pods (a 500), and
        lets workload resources through."""
        namespace = await self.namespaces.get(attrs.namespace)
        if namespace is None:
            if fail_closed:
                raise errors.internal_error(f'failed to lookup namespace "{attrs.namespace}"')
            return None, []
        return self.policy(_meta(namespace).get("labels"))

    def evaluate_pod(self, attrs: Attributes, policy: Policy, meta: Object, spec: Object, enforce: bool) -> None:
        """Refuses a pod that violates enforce; warns about one that violates warn."""
        if self._exempt(self.config.exemptions.runtime_classes, spec.get("runtimeClassName")):
            return
        results: dict[LevelVersion, AggregateCheckResult] = {}
        if enforce:
            results[policy.enforce] = result = _evaluate(policy.enforce, meta, spec)
            if not result.allowed:
                raise forbidden(attrs, f'violates PodSecurity "{policy.enforce}": {result.forbidden_detail()}')
        warn = results.get(policy.warn) or _evaluate(policy.warn, meta, spec)
        if not warn.allowed:
            add_warning(attrs, f'would violate PodSecurity "{policy.warn}": {warn.forbidden_detail()}')

    @staticmethod
    def _exempt(exempt: tuple[str, ...], value: Any) -> bool:
        return bool(value) and value in exempt


def _decorate(pod_name: str, count: int, warning: str) -> str:
    if count == 1:
        return f"{pod_name}: {warning}"
    if count == 2:
        return f"{pod_name} (and 1 other pod): {warning}"
    return f"{pod_name} (and {count - 1} other pods): {warning}"
