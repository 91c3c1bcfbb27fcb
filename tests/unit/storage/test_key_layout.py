"""Keys as kube-apiserver lays them out under --etcd-prefix (/registry): a resource's prefix is its resource
name (the storage factory's ResourcePrefix), except kube-apiserver's SpecialDefaultResourcePrefixes
(pkg/kubeapiserver/default_storage_factory_builder.go), cohabitating resources stored with another group's
(events.k8s.io events are core events), and the group-qualified keys of the apiextensions and aggregator
servers (their RESTOptionsGetter prefixes group/resource), which custom resources share.

Every resource the server installs is in the table, so a new one must be added with its upstream key."""

from __future__ import annotations

from typing import Any

from kube_apiserver.aggregator import apiservice
from kube_apiserver.api import core
from kube_apiserver.api.core.service import ServiceNetwork
from kube_apiserver.api.core.service.network import DEFAULT_CIDR
from kube_apiserver.api.groups import installed_groups
from kube_apiserver.apiextensions import crd
from kube_apiserver.apiextensions.customresource import serving
from kube_apiserver.cli.portrange import PortRange
from kube_apiserver.storage.factory import StorageFactory

# (group, resource) -> the key prefix kube-apiserver v1.34 stores it under.
UPSTREAM_KEYS = {
    ("", "namespaces"): "/registry/namespaces",
    ("", "configmaps"): "/registry/configmaps",
    ("", "secrets"): "/registry/secrets",
    ("", "events"): "/registry/events",
    ("", "pods"): "/registry/pods",
    ("", "podtemplates"): "/registry/podtemplates",
    ("", "endpoints"): "/registry/services/endpoints",  # special prefix
    ("", "replicationcontrollers"): "/registry/controllers",  # special prefix
    ("", "serviceaccounts"): "/registry/serviceaccounts",
    ("", "resourcequotas"): "/registry/resourcequotas",
    ("", "limitranges"): "/registry/limitranges",
    ("", "nodes"): "/registry/minions",  # special prefix
    ("", "persistentvolumes"): "/registry/persistentvolumes",
    ("", "persistentvolumeclaims"): "/registry/persistentvolumeclaims",
    ("", "services"): "/registry/services/specs",  # special prefix
    ("apps", "deployments"): "/registry/deployments",
    ("apps", "replicasets"): "/registry/replicasets",
    ("apps", "statefulsets"): "/registry/statefulsets",
    ("apps", "daemonsets"): "/registry/daemonsets",
    ("apps", "controllerrevisions"): "/registry/controllerrevisions",
    ("events.k8s.io", "events"): "/registry/events",  # cohabits with core events
    ("autoscaling", "horizontalpodautoscalers"): "/registry/horizontalpodautoscalers",
    ("batch", "jobs"): "/registry/jobs",
    ("batch", "cronjobs"): "/registry/cronjobs",
    ("certificates.k8s.io", "certificatesigningrequests"): "/registry/certificatesigningrequests",
    ("networking.k8s.io", "networkpolicies"): "/registry/networkpolicies",
    ("networking.k8s.io", "ingresses"): "/registry/ingress",  # special prefix
    ("networking.k8s.io", "ingressclasses"): "/registry/ingressclasses",
    ("networking.k8s.io", "ipaddresses"): "/registry/ipaddresses",
    ("networking.k8s.io", "servicecidrs"): "/registry/servicecidrs",
    ("policy", "poddisruptionbudgets"): "/registry/poddisruptionbudgets",
    ("rbac.authorization.k8s.io", "roles"): "/registry/roles",
    ("rbac.authorization.k8s.io", "rolebindings"): "/registry/rolebindings",
    ("rbac.authorization.k8s.io", "clusterroles"): "/registry/clusterroles",
    ("rbac.authorization.k8s.io", "clusterrolebindings"): "/registry/clusterrolebindings",
    ("storage.k8s.io", "storageclasses"): "/registry/storageclasses",
    ("storage.k8s.io", "volumeattachments"): "/registry/volumeattachments",
    ("storage.k8s.io", "csidrivers"): "/registry/csidrivers",
    ("storage.k8s.io", "csinodes"): "/registry/csinodes",
    ("storage.k8s.io", "csistoragecapacities"): "/registry/csistoragecapacities",
    ("storage.k8s.io", "volumeattributesclasses"): "/registry/volumeattributesclasses",
    (
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
    ): "/registry/mutatingwebhookconfigurations",
    (
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
    ): "/registry/validatingwebhookconfigurations",
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): "/registry/validatingadmissionpolicies",
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): (
        "/registry/validatingadmissionpolicybindings"
    ),
    ("scheduling.k8s.io", "priorityclasses"): "/registry/priorityclasses",
    ("coordination.k8s.io", "leases"): "/registry/leases",
    ("node.k8s.io", "runtimeclasses"): "/registry/runtimeclasses",
    ("discovery.k8s.io", "endpointslices"): "/registry/endpointslices",
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): "/registry/flowschemas",
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): "/registry/prioritylevelconfigurations",
    ("resource.k8s.io", "deviceclasses"): "/registry/deviceclasses",
    ("resource.k8s.io", "resourceclaims"): "/registry/resourceclaims",
    ("resource.k8s.io", "resourceclaimtemplates"): "/registry/resourceclaimtemplates",
    ("resource.k8s.io", "resourceslices"): "/registry/resourceslices",
}
# Served without storage: reviews, bindings, componentstatuses.
NOT_STORED = {
    ("", "bindings"),
    ("", "componentstatuses"),
    ("authentication.k8s.io", "selfsubjectreviews"),
    ("authentication.k8s.io", "tokenreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
}


def _key_prefix(rest: Any) -> str | None:
    """The key prefix of a REST storage, through the wrappers that convert or check around a Store."""
    while rest is not None:
        if hasattr(rest, "key_prefix"):
            return rest.key_prefix
        rest = getattr(rest, "inner", None) or getattr(rest, "store", None)
    return None


def installed_key_prefixes() -> dict[tuple[str, str], set[str]]:
    """(group, resource) -> the key prefixes of every version the server installs (without a watch cache)."""
    factory = StorageFactory(object(), watch_cache=False)  # type: ignore[arg-type]  # no storage call is made
    infos = [core.new_api_group_info(factory, ServiceNetwork(DEFAULT_CIDR, PortRange(30000, 2768)))]
    for group in installed_groups():
        dependencies = {name: object() for name in getattr(group, "DEPENDENCIES", ())}
        infos.append(group.new_api_group_info(factory, **dependencies))
    prefixes: dict[tuple[str, str], set[str]] = {}
    for info in infos:
        for resources in info.versioned_storage.values():
            for resource, rest in resources.items():
                if "/" not in resource:
                    prefixes.setdefault((info.group, resource), set()).add(_key_prefix(rest) or "")
    return prefixes


def test_every_built_in_resource_is_stored_under_kube_apiservers_key() -> None:
    installed = installed_key_prefixes()
    stored = {resource: keys for resource, keys in installed.items() if resource not in NOT_STORED}
    assert {
        resource: keys for resource, keys in stored.items() if keys != {UPSTREAM_KEYS.get(resource)}
    } == {}
    assert set(UPSTREAM_KEYS) == set(stored)
    assert all(installed[resource] == {""} for resource in NOT_STORED)


def test_apiextensions_and_aggregator_keys_are_group_qualified() -> None:
    assert crd.KEY_PREFIX == "/registry/apiextensions.k8s.io/customresourcedefinitions"
    assert apiservice.KEY_PREFIX == "/registry/apiregistration.k8s.io/apiservices"


def test_custom_resources_are_stored_under_group_and_accepted_plural() -> None:
    definition = {
        "spec": {"group": "stable.example.com", "names": {"plural": "crontabs"}},
        "status": {"acceptedNames": {"plural": "crontabs"}},
    }
    assert serving._key_prefix(definition) == "/registry/stable.example.com/crontabs"  # noqa: SLF001


def test_keys_read_directly_are_the_same_keys() -> None:
    """Code that reads a store without its REST storage (token claims, kubelet nodes) names the same keys."""
    from kube_apiserver.api.core import kubelet
    from kube_apiserver.serviceaccount import getter

    for resource, prefix in getter.KEY_PREFIXES.items():
        assert prefix == UPSTREAM_KEYS[("", resource)]
    assert kubelet.NODES_KEY == UPSTREAM_KEYS[("", "nodes")]
