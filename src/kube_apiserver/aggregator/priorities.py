"""The APIService priorities kube-apiserver v1.34 registers its own group versions with: the generic list
(pkg/controlplane/apiserver DefaultGenericAPIServicePriorities) merged with the kube-specific one
(cmd/kube-apiserver/app/aggregator.go). They order /apis and kubectl's resource resolution."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Priority:
    group: int  # spec.groupPriorityMinimum
    version: int  # spec.versionPriority


# CustomResourceDefinition groups (crdregistration): below every built-in group.
CRD_PRIORITY = Priority(1000, 100)
# The aggregator's own group leads aggregated discovery (handler_discovery.go).
APIREGISTRATION_GROUP_PRIORITY = 20001

_GENERIC: dict[tuple[str, str], Priority] = {
    ("", "v1"): Priority(18000, 1),
    ("events.k8s.io", "v1"): Priority(17750, 15),
    ("events.k8s.io", "v1beta1"): Priority(17750, 5),
    ("authentication.k8s.io", "v1"): Priority(17700, 15),
    ("authentication.k8s.io", "v1beta1"): Priority(17700, 9),
    ("authentication.k8s.io", "v1alpha1"): Priority(17700, 1),
    ("authorization.k8s.io", "v1"): Priority(17600, 15),
    ("certificates.k8s.io", "v1"): Priority(17300, 15),
    ("certificates.k8s.io", "v1beta1"): Priority(17300, 9),
    ("certificates.k8s.io", "v1alpha1"): Priority(17300, 1),
    ("rbac.authorization.k8s.io", "v1"): Priority(17000, 15),
    ("apiextensions.k8s.io", "v1"): Priority(16700, 15),
    ("admissionregistration.k8s.io", "v1"): Priority(16700, 15),
    ("admissionregistration.k8s.io", "v1beta1"): Priority(16700, 12),
    ("admissionregistration.k8s.io", "v1alpha1"): Priority(16700, 9),
    ("coordination.k8s.io", "v1"): Priority(16500, 15),
    ("coordination.k8s.io", "v1beta1"): Priority(16500, 13),
    ("coordination.k8s.io", "v1alpha2"): Priority(16500, 12),
    ("discovery.k8s.io", "v1"): Priority(16200, 15),
    ("discovery.k8s.io", "v1beta1"): Priority(16200, 12),
    ("flowcontrol.apiserver.k8s.io", "v1"): Priority(16100, 21),
    ("flowcontrol.apiserver.k8s.io", "v1beta3"): Priority(16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2"): Priority(16100, 15),
    ("flowcontrol.apiserver.k8s.io", "v1beta1"): Priority(16100, 12),
    ("flowcontrol.apiserver.k8s.io", "v1alpha1"): Priority(16100, 9),
    ("internal.apiserver.k8s.io", "v1alpha1"): Priority(16000, 9),
    ("resource.k8s.io", "v1alpha3"): Priority(15900, 9),
    ("storagemigration.k8s.io", "v1alpha1"): Priority(15800, 9),
}

_KUBE: dict[tuple[str, str], Priority] = {
    ("", "v1"): Priority(18000, 1),
    ("apps", "v1"): Priority(17800, 15),
    ("autoscaling", "v1"): Priority(17500, 15),
    ("autoscaling", "v2"): Priority(17500, 30),
    ("autoscaling", "v2beta1"): Priority(17500, 9),
    ("autoscaling", "v2beta2"): Priority(17500, 1),
    ("batch", "v1"): Priority(17400, 15),
    ("batch", "v1beta1"): Priority(17400, 9),
    ("batch", "v2alpha1"): Priority(17400, 9),
    ("networking.k8s.io", "v1"): Priority(17200, 15),
    ("networking.k8s.io", "v1beta1"): Priority(17200, 9),
    ("policy", "v1"): Priority(17100, 15),
    ("policy", "v1beta1"): Priority(17100, 9),
    ("storage.k8s.io", "v1"): Priority(16800, 15),
    ("storage.k8s.io", "v1beta1"): Priority(16800, 9),
    ("storage.k8s.io", "v1alpha1"): Priority(16800, 1),
    ("scheduling.k8s.io", "v1"): Priority(16600, 15),
    ("node.k8s.io", "v1"): Priority(16300, 15),
    ("node.k8s.io", "v1alpha1"): Priority(16300, 1),
    ("node.k8s.io", "v1beta1"): Priority(16300, 9),
    ("resource.k8s.io", "v1"): Priority(16200, 21),
    ("resource.k8s.io", "v1beta2"): Priority(16200, 15),
    ("resource.k8s.io", "v1beta1"): Priority(16200, 9),
    ("resource.k8s.io", "v1alpha3"): Priority(16200, 1),
}

# The kube-specific list wins where both name a group version (cmd/kube-apiserver merge()).
API_VERSION_PRIORITIES: dict[tuple[str, str], Priority] = {**_GENERIC, **_KUBE}


def builtin_priority(group: str, version: str) -> Priority | None:
    """The priority of a group version kube-apiserver itself serves; None for any other (a CRD's)."""
    return API_VERSION_PRIORITIES.get((group, version))
