"""The roles of kube-controller-manager's controllers, `system:controller:<name>`, each bound to the
`kube-system/<name>` service account the controller runs as (k8s bootstrappolicy controller_policy.go,
v1.34 default feature gates: the device-taint-eviction, podcertificaterequestcleaner,
clustertrustbundle-publisher, storage-version-gc and storage-version-migrator roles are gated off)."""

from __future__ import annotations

from .helpers import (
    ADMISSION,
    APPS,
    AUTHORIZATION,
    AUTOSCALING,
    BATCH,
    CERTIFICATES,
    CONTROLLER_ROLE_PREFIX,
    DISCOVERY,
    EXTENSIONS,
    KUBE_SYSTEM,
    LEGACY,
    NETWORKING,
    POLICY,
    RBAC,
    READ,
    RESOURCE,
    STORAGE,
    Object,
    cluster_role,
    cluster_role_binding,
    events_rule,
    rule,
    service_accounts,
)

ALL_SIGNERS = ["kubernetes.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client-kubelet",
               "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown"]


def _workload_controllers() -> dict[str, list[Object]]:
    return {
        "cronjob-controller": [
            rule(["get", "list", "watch", "update"], [BATCH], ["cronjobs"]),
            rule(["get", "list", "watch", "create", "update", "delete", "patch"], [BATCH], ["jobs"]),
            rule(["update"], [BATCH], ["cronjobs/status"]),
            rule(["update"], [BATCH], ["cronjobs/finalizers"]),
            rule(["list", "watch", "delete"], [LEGACY], ["pods"]),
            events_rule()],
        "daemon-set-controller": [
            rule(READ, [APPS, EXTENSIONS], ["daemonsets"]),
            rule(["update"], [APPS, EXTENSIONS], ["daemonsets/status"]),
            rule(["update"], [APPS, EXTENSIONS], ["daemonsets/finalizers"]),
            rule(["list", "watch"], [LEGACY], ["nodes"]),
            rule(["list", "watch", "create", "delete", "patch"], [LEGACY], ["pods"]),
            rule(["create"], [LEGACY], ["pods/binding"]),
            rule(["get", "list", "watch", "create", "delete", "update", "patch"], [APPS], ["controllerrevisions"]),
            events_rule()],
        "deployment-controller": [
            rule(["get", "list", "watch", "update"], [APPS, EXTENSIONS], ["deployments"]),
            rule(["update"], [APPS, EXTENSIONS], ["deployments/status"]),
            rule(["update"], [APPS, EXTENSIONS], ["deployments/finalizers"]),
            rule(["get", "list", "watch", "create", "update", "patch", "delete"], [APPS, EXTENSIONS],
                 ["replicasets"]),
            # pods are read to know whether a recreate rollout may proceed; update is for adoption
            rule(["get", "list", "watch", "update"], [LEGACY], ["pods"]),
            events_rule()],
        "disruption-controller": [
            rule(READ, [APPS, EXTENSIONS], ["deployments"]),
            rule(READ, [APPS, EXTENSIONS], ["replicasets"]),
            rule(READ, [LEGACY], ["replicationcontrollers"]),
            rule(READ, [POLICY], ["poddisruptionbudgets"]),
            rule(READ, [APPS], ["statefulsets"]),
            rule(["update"], [POLICY], ["poddisruptionbudgets/status"]),
            rule(["patch", "update"], [LEGACY], ["pods/status"]),
            rule(["get"], ["*"], ["*/scale"]),
            events_rule()],
        "job-controller": [
            rule(["get", "list", "watch", "update", "patch"], [BATCH], ["jobs"]),
            rule(["update"], [BATCH], ["jobs/status"]),
            rule(["update"], [BATCH], ["jobs/finalizers"]),
            rule(["list", "watch", "create", "delete", "patch"], [LEGACY], ["pods"]),
            events_rule()],
        "replicaset-controller": [
            rule(["get", "list", "watch", "update"], [APPS, EXTENSIONS], ["replicasets"]),
            rule(["update"], [APPS, EXTENSIONS], ["replicasets/status"]),
            rule(["update"], [APPS, EXTENSIONS], ["replicasets/finalizers"]),
            rule(["list", "watch", "patch", "create", "delete"], [LEGACY], ["pods"]),
            events_rule()],
        "replication-controller": [
            rule(["get", "list", "watch", "update"], [LEGACY], ["replicationcontrollers"]),
            rule(["update"], [LEGACY], ["replicationcontrollers/status"]),
            rule(["update"], [LEGACY], ["replicationcontrollers/finalizers"]),
            rule(["list", "watch", "patch", "create", "delete"], [LEGACY], ["pods"]),
            events_rule()],
        "statefulset-controller": [
            rule(["list", "watch"], [LEGACY], ["pods"]),
            rule(READ, [APPS], ["statefulsets"]),
            rule(["update"], [APPS], ["statefulsets/status"]),
            rule(["update"], [APPS], ["statefulsets/finalizers"]),
            rule(["get", "create", "delete", "update", "patch"], [LEGACY], ["pods"]),
            rule(["get", "list", "watch", "create", "delete", "update", "patch"], [APPS], ["controllerrevisions"]),
            rule(["get", "create", "list", "watch"], [LEGACY], ["persistentvolumeclaims"]),
            events_rule(),
            # persistentVolumeClaimRetentionPolicy
            rule(["update", "delete"], [LEGACY], ["persistentvolumeclaims"]),
            rule(["update"], [LEGACY], ["pods/finalizers"])],
        "ttl-after-finished-controller": [rule(["get", "list", "watch", "delete"], [BATCH], ["jobs"]), events_rule()],
        "horizontal-pod-autoscaler": [
            rule(READ, [AUTOSCALING], ["horizontalpodautoscalers"]),
            rule(["update"], [AUTOSCALING], ["horizontalpodautoscalers/status"]),
            rule(["get", "update"], ["*"], ["*/scale"]),
            rule(["list", "watch"], [LEGACY], ["pods"]),
            # the scale target is found through its scale subresource's selector
            rule(READ, ["*"], ["*"]),
            rule(["list", "watch"], ["metrics.k8s.io"], ["pods"]),
            rule(READ, ["custom.metrics.k8s.io"], ["*"]),
            rule(READ, ["external.metrics.k8s.io"], ["*"]),
            events_rule()],
    }


def _node_and_network_controllers() -> dict[str, list[Object]]:
    return {
        "endpoint-controller": [
            rule(READ, [LEGACY], ["services", "pods"]),
            rule(["get", "list", "create", "update", "delete", "watch"], [LEGACY], ["endpoints"]),
            rule(["create"], [LEGACY], ["endpoints/restricted"]),
            events_rule()],
        "endpointslice-controller": [
            rule(READ, [LEGACY], ["services", "pods", "nodes"]),
            # owner references on the slices point at the service
            rule(["update"], [LEGACY], ["services/finalizers"]),
            rule(["get", "list", "create", "update", "delete", "watch"], [DISCOVERY], ["endpointslices"]),
            events_rule()],
        "endpointslicemirroring-controller": [
            rule(READ, [LEGACY], ["services", "endpoints"]),
            rule(["update"], [LEGACY], ["services/finalizers"]),
            rule(["update"], [LEGACY], ["endpoints/finalizers"]),
            rule(["get", "list", "create", "update", "delete", "watch"], [DISCOVERY], ["endpointslices"]),
            events_rule()],
        "node-controller": [
            rule(["get", "list", "update", "delete", "patch", "watch"], [LEGACY], ["nodes"]),
            rule(["patch", "update"], [LEGACY], ["nodes/status"]),
            rule(["patch", "update"], [LEGACY], ["pods/status"]),
            rule(["list", "watch", "delete", "get"], [LEGACY], ["pods"]),
            events_rule()],
        "pod-garbage-collector": [
            rule(["list", "watch", "delete"], [LEGACY], ["pods"]),
            rule(["get", "list", "watch"], [LEGACY], ["nodes"]),
            rule(["patch"], [LEGACY], ["pods/status"])],
        "route-controller": [
            rule(["list", "watch"], [LEGACY], ["nodes"]),
            rule(["patch"], [LEGACY], ["nodes/status"]),
            events_rule()],
        "service-controller": [
            rule(READ, [LEGACY], ["services"]),
            rule(["patch", "update"], [LEGACY], ["services/status"]),
            rule(["list", "watch"], [LEGACY], ["nodes"]),
            events_rule()],
        "service-cidrs-controller": [
            rule(["get", "list", "watch", "patch", "update"], [NETWORKING], ["servicecidrs"]),
            rule(["patch", "update"], [NETWORKING], ["servicecidrs/finalizers"]),
            rule(["patch", "update"], [NETWORKING], ["servicecidrs/status"]),
            rule(READ, [NETWORKING], ["ipaddresses"]),
            events_rule()],
        "ttl-controller": [rule(["update", "patch", "list", "watch"], [LEGACY], ["nodes"]), events_rule()],
    }


def _volume_controllers() -> dict[str, list[Object]]:
    return {
        "attachdetach-controller": [
            rule(["list", "watch"], [LEGACY], ["persistentvolumes", "persistentvolumeclaims"]),
            rule(["get", "list", "watch"], [LEGACY], ["nodes"]),
            rule(["patch", "update"], [LEGACY], ["nodes/status"]),
            rule(["list", "watch"], [LEGACY], ["pods"]),
            events_rule(),
            rule(["get", "create", "delete", "list", "watch"], [STORAGE], ["volumeattachments"]),
            rule(["get", "watch", "list"], [STORAGE], ["csidrivers"]),
            rule(["get", "watch", "list"], [STORAGE], ["csinodes"])],
        "ephemeral-volume-controller": [
            rule(["get", "list", "watch"], [LEGACY], ["pods"]),
            rule(["update"], [LEGACY], ["pods/finalizers"]),
            rule(["get", "list", "watch", "create"], [LEGACY], ["persistentvolumeclaims"]),
            events_rule()],
        "expand-controller": [
            rule(["get", "list", "watch", "update", "patch"], [LEGACY], ["persistentvolumes"]),
            rule(["update", "patch"], [LEGACY], ["persistentvolumeclaims/status"]),
            rule(["get", "list", "watch"], [LEGACY], ["persistentvolumeclaims"]),
            events_rule(),
            rule(["get"], [LEGACY], ["services"])],
        "persistent-volume-binder": [
            rule(["get", "list", "watch", "update", "create", "delete"], [LEGACY], ["persistentvolumes"]),
            rule(["update"], [LEGACY], ["persistentvolumes/status"]),
            rule(["get", "list", "watch", "update"], [LEGACY], ["persistentvolumeclaims"]),
            rule(["update"], [LEGACY], ["persistentvolumeclaims/status"]),
            rule(["list", "watch", "get", "create", "delete"], [LEGACY], ["pods"]),
            rule(["get", "list", "watch"], [STORAGE], ["storageclasses"]),
            rule(["list", "watch"], [LEGACY], ["nodes"]),
            events_rule(),
            rule(["watch"], [LEGACY], ["events"]),
            rule(["get"], [LEGACY], ["services"])],
        "pvc-protection-controller": [
            rule(["get", "list", "watch", "update"], [LEGACY], ["persistentvolumeclaims"]),
            rule(["list", "watch", "get"], [LEGACY], ["pods"]),
            events_rule()],
        "pv-protection-controller": [
            rule(["get", "list", "watch", "update"], [LEGACY], ["persistentvolumes"]),
            events_rule()],
        # VolumeAttributesClass (GA in v1.34)
        "volumeattributesclass-protection-controller": [
            rule(["list", "watch", "get"], [LEGACY], ["persistentvolumeclaims"]),
            rule(["list", "watch", "get"], [LEGACY], ["persistentvolumes"]),
            rule(["get", "list", "watch", "update"], [STORAGE], ["volumeattributesclasses"]),
            events_rule()],
        # SELinuxChangePolicy
        "selinux-warning-controller": [
            events_rule(),
            rule(["get", "list", "watch"], [LEGACY], ["persistentvolumes"]),
            rule(["get", "list", "watch"], [LEGACY], ["persistentvolumeclaims"]),
            rule(["get", "list", "watch"], [LEGACY], ["pods"]),
            rule(["get", "list", "watch"], [STORAGE], ["csidrivers"])],
    }


def _other_controllers() -> dict[str, list[Object]]:
    return {
        "certificate-controller": [
            rule(["get", "list", "watch", "delete"], [CERTIFICATES], ["certificatesigningrequests"]),
            rule(["update"], [CERTIFICATES], ["certificatesigningrequests/status",
                                              "certificatesigningrequests/approval"]),
            rule(["approve"], [CERTIFICATES], ["signers"], ["kubernetes.io/kube-apiserver-client-kubelet"]),
            rule(["sign"], [CERTIFICATES], ["signers"], ALL_SIGNERS),
            rule(["create"], [AUTHORIZATION], ["subjectaccessreviews"]),
            events_rule()],
        # escalate: the aggregated rules need not be held by the controller itself
        "clusterrole-aggregation-controller": [
            rule(["escalate", "get", "list", "watch", "update", "patch"], [RBAC], ["clusterroles"])],
        "generic-garbage-collector": [
            rule(["get", "list", "watch", "patch", "update", "delete"], ["*"], ["*"]),
            events_rule()],
        "legacy-service-account-token-cleaner": [
            rule(["get"], [LEGACY], ["configmaps"], ["kube-apiserver-legacy-service-account-token-tracking"]),
            rule(["patch", "delete"], [LEGACY], ["secrets"])],
        "namespace-controller": [
            rule(["get", "list", "watch", "delete"], [LEGACY], ["namespaces"]),
            rule(["update"], [LEGACY], ["namespaces/finalize", "namespaces/status"]),
            rule(["get", "list", "delete", "deletecollection", "watch"], ["*"], ["*"])],
        # DynamicResourceAllocation
        "resource-claim-controller": [
            rule(["get", "list", "watch"], [LEGACY], ["pods"]),
            rule(["update"], [LEGACY], ["pods/finalizers"]),
            rule(["get", "list", "watch", "create", "delete"], [RESOURCE], ["resourceclaims"]),
            rule(["update", "patch"], [RESOURCE], ["resourceclaims", "resourceclaims/status"]),
            rule(["update", "patch"], [LEGACY], ["pods/status"]),
            events_rule()],
        "resourcequota-controller": [
            rule(["list", "watch"], ["*"], ["*"]),
            rule(["update"], [LEGACY], ["resourcequotas/status"]),
            events_rule()],
        "root-ca-cert-publisher": [rule(["create", "update"], [LEGACY], ["configmaps"]), events_rule()],
        "service-account-controller": [rule(["create"], [LEGACY], ["serviceaccounts"]), events_rule()],
        "validatingadmissionpolicy-status-controller": [
            rule(["get", "list", "watch"], [ADMISSION], ["validatingadmissionpolicies"]),
            rule(["get", "patch", "update"], [ADMISSION], ["validatingadmissionpolicies/status"]),
            events_rule()],
    }


def _controllers() -> dict[str, list[Object]]:
    return {**_workload_controllers(), **_node_and_network_controllers(), **_volume_controllers(),
            **_other_controllers()}


def controller_roles() -> list[Object]:
    """ControllerRoles(), ordered by name as the testdata lists them."""
    return [cluster_role(CONTROLLER_ROLE_PREFIX + name, rules) for name, rules in sorted(_controllers().items())]


def controller_role_bindings() -> list[Object]:
    """ControllerRoleBindings(): each role bound to its controller's kube-system service account."""
    return [cluster_role_binding(CONTROLLER_ROLE_PREFIX + name, service_accounts(KUBE_SYSTEM, name))
            for name in sorted(_controllers())]
