"""The cluster roles and cluster role bindings of kube-apiserver v1.34 (k8s plugin/pkg/auth/authorizer/
rbac/bootstrappolicy/policy.go), with every feature gate at its v1.34 default: DynamicResourceAllocation,
KubeletFineGrainedAuthz, MultiCIDRServiceAllocator and KubeletServiceAccountTokenForCredentialProviders
on; ClusterTrustBundle, PodCertificateRequest, DRADeviceTaints, DRAExtendedResource and the component
flagz/statusz endpoints off."""

from __future__ import annotations

from .helpers import (
    APPS,
    AUTHENTICATION,
    AUTHORIZATION,
    AUTOSCALING,
    BATCH,
    CERTIFICATES,
    COORDINATION,
    DISCOVERY,
    EXTENSIONS,
    LEGACY,
    NETWORKING,
    POLICY,
    RBAC,
    READ,
    READ_UPDATE,
    READ_WRITE,
    RESOURCE,
    STORAGE,
    WRITE,
    Object,
    cluster_role,
    cluster_role_binding,
    events_rule,
    groups,
    rule,
    service_accounts,
    url_rule,
    users,
)

SYSTEM_NODE = "system:node"
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"


def node_rules() -> list[Object]:
    """NodeRules(): what a kubelet needs (the Node authorizer narrows it to its own objects)."""
    return [
        rule(["create"], [AUTHENTICATION], ["tokenreviews"]),
        rule(["create"], [AUTHORIZATION], ["subjectaccessreviews", "localsubjectaccessreviews"]),
        rule(READ, [LEGACY], ["services"]),
        rule(["create", "get", "list", "watch"], [LEGACY], ["nodes"]),
        rule(["update", "patch"], [LEGACY], ["nodes/status"]),
        rule(["update", "patch"], [LEGACY], ["nodes"]),
        rule(["create", "update", "patch"], [LEGACY], ["events"]),
        rule(READ, [LEGACY], ["pods"]),
        rule(["create", "delete"], [LEGACY], ["pods"]),
        rule(["update", "patch"], [LEGACY], ["pods/status"]),
        rule(["create"], [LEGACY], ["pods/eviction"]),
        rule(["get", "list", "watch"], [LEGACY], ["secrets", "configmaps"]),
        rule(["get"], [LEGACY], ["persistentvolumeclaims", "persistentvolumes"]),
        rule(["get"], [LEGACY], ["endpoints"]),
        rule(["create", "get", "list", "watch"], [CERTIFICATES], ["certificatesigningrequests"]),
        rule(["get", "create", "update", "patch", "delete"], [COORDINATION], ["leases"]),
        rule(["get"], [STORAGE], ["volumeattachments"]),
        rule(["create"], [LEGACY], ["serviceaccounts/token"]),
        rule(["get", "update", "patch"], [LEGACY], ["persistentvolumeclaims/status"]),
        rule(["get", "watch", "list"], [STORAGE], ["csidrivers"]),
        rule(["get", "create", "update", "patch", "delete"], [STORAGE], ["csinodes"]),
        rule(["get", "list", "watch"], ["node.k8s.io"], ["runtimeclasses"]),
        # DynamicResourceAllocation
        rule(["get"], [RESOURCE], ["resourceclaims"]),
        rule(["deletecollection"], [RESOURCE], ["resourceslices"]),
        # KubeletServiceAccountTokenForCredentialProviders
        rule(["get"], [LEGACY], ["serviceaccounts"]),
    ]


def _aggregate_to_edit() -> list[Object]:
    return [
        # read on escalating resources
        rule(READ, [LEGACY], ["pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets",
                              "services/proxy"]),
        rule(["impersonate"], [LEGACY], ["serviceaccounts"]),
        rule(WRITE, [LEGACY], ["pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"]),
        rule(["create"], [LEGACY], ["pods/eviction"]),
        rule(WRITE, [LEGACY], ["replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                               "services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets",
                               "events"]),
        rule(["create"], [LEGACY], ["serviceaccounts/token"]),
        rule(WRITE, [APPS], ["statefulsets", "statefulsets/scale", "daemonsets", "deployments", "deployments/scale",
                             "deployments/rollback", "replicasets", "replicasets/scale"]),
        rule(WRITE, [AUTOSCALING], ["horizontalpodautoscalers"]),
        rule(WRITE, [BATCH], ["jobs", "cronjobs"]),
        rule(WRITE, [EXTENSIONS], ["daemonsets", "deployments", "deployments/scale", "deployments/rollback",
                                   "ingresses", "replicasets", "replicasets/scale", "replicationcontrollers/scale",
                                   "networkpolicies"]),
        rule(WRITE, [POLICY], ["poddisruptionbudgets"]),
        rule(WRITE, [NETWORKING], ["networkpolicies", "ingresses"]),
        rule(READ_WRITE, [COORDINATION], ["leases"]),
        # DynamicResourceAllocation
        rule(WRITE, [RESOURCE], ["resourceclaims", "resourceclaimtemplates"]),
    ]


def _aggregate_to_view() -> list[Object]:
    return [
        rule(READ, [LEGACY], ["pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                              "services", "services/status", "endpoints", "persistentvolumeclaims",
                              "persistentvolumeclaims/status", "configmaps"]),
        rule(READ, [LEGACY], ["limitranges", "resourcequotas", "bindings", "events", "pods/status",
                              "resourcequotas/status", "namespaces/status", "replicationcontrollers/status",
                              "pods/log"]),
        # reading namespaces at the namespace scope means reading *this* namespace
        rule(READ, [LEGACY], ["namespaces"]),
        rule(READ, [DISCOVERY], ["endpointslices"]),
        rule(READ, [APPS], ["controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
                            "daemonsets", "daemonsets/status", "deployments", "deployments/status",
                            "deployments/scale", "replicasets", "replicasets/status", "replicasets/scale"]),
        rule(READ, [AUTOSCALING], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
        rule(READ, [BATCH], ["jobs", "cronjobs", "cronjobs/status", "jobs/status"]),
        rule(READ, [EXTENSIONS], ["daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                                  "deployments/status", "ingresses", "ingresses/status", "replicasets",
                                  "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
                                  "networkpolicies"]),
        rule(READ, [POLICY], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
        rule(READ, [NETWORKING], ["networkpolicies", "ingresses", "ingresses/status"]),
        # DynamicResourceAllocation
        rule(READ, [RESOURCE], ["resourceclaims", "resourceclaims/status", "resourceclaimtemplates"]),
    ]


def _user_facing_roles() -> list[Object]:
    admin, edit, view = ({f"{AGGREGATE_TO}{n}": "true"} for n in ("admin", "edit", "view"))
    return [
        cluster_role("admin", [], aggregate_from="admin"),
        cluster_role("edit", [], admin, aggregate_from="edit"),
        cluster_role("view", [], edit, aggregate_from="view"),
        cluster_role("system:aggregate-to-admin", [
            rule(["create"], [AUTHORIZATION], ["localsubjectaccessreviews"]),
            rule(READ_WRITE, [RBAC], ["roles", "rolebindings"]),
        ], admin),
        cluster_role("system:aggregate-to-edit", _aggregate_to_edit(), edit),
        cluster_role("system:aggregate-to-view", _aggregate_to_view(), view),
    ]


def _discovery_roles() -> list[Object]:
    return [
        cluster_role("cluster-admin", [rule(["*"], ["*"], ["*"]), rule(["*"], urls=["*"])]),
        cluster_role("system:discovery", [url_rule("/livez", "/readyz", "/healthz", "/version", "/version/",
                                                   "/openapi", "/openapi/*", "/api", "/api/*", "/apis",
                                                   "/apis/*")]),
        cluster_role("system:monitoring", [url_rule("/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz",
                                                    "/livez/*", "/readyz/*", "/healthz/*")]),
        cluster_role("system:basic-user", [
            rule(["create"], [AUTHORIZATION], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            rule(["create"], [AUTHENTICATION], ["selfsubjectreviews"]),
        ]),
        cluster_role("system:public-info-viewer", [url_rule("/livez", "/readyz", "/healthz", "/version",
                                                            "/version/")]),
        # slash-ended URLs for clients generated from OpenAPI documents published before the fix
        cluster_role("system:service-account-issuer-discovery", [url_rule(
            "/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks",
            "/openid/v1/jwks/")]),
    ]


def _node_roles() -> list[Object]:
    return [
        cluster_role("system:heapster", [rule(READ, [LEGACY], ["events", "pods", "nodes", "namespaces"]),
                                         rule(READ, [EXTENSIONS], ["deployments"])]),
        cluster_role(SYSTEM_NODE, node_rules()),
        cluster_role("system:node-problem-detector", [rule(["get"], [LEGACY], ["nodes"]),
                                                      rule(["patch"], [LEGACY], ["nodes/status"]), events_rule()]),
        cluster_role("system:node-bootstrapper", [
            rule(["create", "get", "list", "watch"], [CERTIFICATES], ["certificatesigningrequests"])]),
        cluster_role("system:kubelet-api-admin", [
            rule(["get", "list", "watch"], [LEGACY], ["nodes"]),
            rule(["proxy"], [LEGACY], ["nodes"]),
            rule(["*"], [LEGACY], ["nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log"]),
            # KubeletFineGrainedAuthz
            rule(["*"], [LEGACY], ["nodes/pods", "nodes/healthz", "nodes/configz"]),
        ]),
        cluster_role("system:node-proxier", [
            rule(["list", "watch"], [LEGACY], ["services", "endpoints"]),
            rule(["get", "list", "watch"], [LEGACY], ["nodes"]),
            events_rule(),
            # MultiCIDRServiceAllocator
            rule(["list", "watch"], [NETWORKING], ["servicecidrs"]),
            rule(["list", "watch"], [DISCOVERY], ["endpointslices"]),
        ]),
    ]


def _approver(name: str, signer: str) -> Object:
    return cluster_role(f"system:certificates.k8s.io:{name}", [rule(["approve"], [CERTIFICATES], ["signers"],
                                                                    [f"kubernetes.io/{signer}"])])


def _component_roles() -> list[Object]:
    return [
        cluster_role("system:auth-delegator", [rule(["create"], [AUTHENTICATION], ["tokenreviews"]),
                                               rule(["create"], [AUTHORIZATION], ["subjectaccessreviews"])]),
        cluster_role("system:kube-aggregator", [rule(READ, [LEGACY], ["services", "endpoints"])]),
        cluster_role("system:kube-controller-manager", [
            events_rule(),
            rule(["create"], [COORDINATION], ["leases"]),
            rule(["get", "update"], [COORDINATION], ["leases"], ["kube-controller-manager"]),
            rule(["create"], [LEGACY], ["secrets", "serviceaccounts"]),
            rule(["delete"], [LEGACY], ["secrets"]),
            rule(["get"], [LEGACY], ["namespaces", "secrets", "serviceaccounts", "configmaps"]),
            rule(["update"], [LEGACY], ["secrets", "serviceaccounts"]),
            rule(["create"], [AUTHENTICATION], ["tokenreviews"]),
            rule(["create"], [AUTHORIZATION], ["subjectaccessreviews"]),
            rule(["list", "watch"], ["*"], ["*"]),  # every shared informer
            rule(["create"], [LEGACY], ["serviceaccounts/token"]),
        ]),
        cluster_role("system:kube-dns", [rule(["list", "watch"], [LEGACY], ["endpoints", "services"])]),
        cluster_role("system:persistent-volume-provisioner", [
            rule(["get", "list", "watch", "create", "delete"], [LEGACY], ["persistentvolumes"]),
            # update sets the lock annotations on claims
            rule(["get", "list", "watch", "update"], [LEGACY], ["persistentvolumeclaims"]),
            rule(READ, [STORAGE], ["storageclasses"]),
            rule(["watch"], [LEGACY], ["events"]),
            events_rule(),
        ]),
        cluster_role("system:certificates.k8s.io:certificatesigningrequests:nodeclient", [
            rule(["create"], [CERTIFICATES], ["certificatesigningrequests/nodeclient"])]),
        cluster_role("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", [
            rule(["create"], [CERTIFICATES], ["certificatesigningrequests/selfnodeclient"])]),
        cluster_role("system:volume-scheduler", [rule(READ_UPDATE, [LEGACY], ["persistentvolumes"]),
                                                 rule(READ, [STORAGE], ["storageclasses"]),
                                                 rule(READ_UPDATE, [LEGACY], ["persistentvolumeclaims"])]),
        _approver("legacy-unknown-approver", "legacy-unknown"),
        _approver("kubelet-serving-approver", "kubelet-serving"),
        _approver("kube-apiserver-client-approver", "kube-apiserver-client"),
        _approver("kube-apiserver-client-kubelet-approver", "kube-apiserver-client-kubelet"),
        cluster_role("system:kube-scheduler", scheduler_rules()),
    ]


def scheduler_rules() -> list[Object]:
    return [
        events_rule(),
        rule(["create"], [COORDINATION], ["leases"]),
        rule(["get", "update", "list", "watch"], [COORDINATION], ["leases"], ["kube-scheduler"]),
        rule(READ_WRITE, [COORDINATION], ["leasecandidates"]),
        rule(READ, [LEGACY], ["nodes"]),
        rule(["get", "list", "watch", "delete"], [LEGACY], ["pods"]),
        rule(["create"], [LEGACY], ["pods/binding", "bindings"]),
        rule(["patch", "update"], [LEGACY], ["pods/status"]),
        rule(READ, [LEGACY], ["services", "replicationcontrollers"]),
        rule(READ, [APPS, EXTENSIONS], ["replicasets"]),
        rule(READ, [APPS], ["statefulsets"]),
        rule(READ, [POLICY], ["poddisruptionbudgets"]),
        rule(READ, [LEGACY], ["persistentvolumeclaims", "persistentvolumes"]),
        rule(["create"], [AUTHENTICATION], ["tokenreviews"]),
        rule(["create"], [AUTHORIZATION], ["subjectaccessreviews"]),
        rule(READ, [STORAGE], ["csinodes"]),
        rule(["get", "list", "watch"], [STORAGE], ["volumeattachments"]),
        rule(READ, [LEGACY], ["namespaces"]),
        rule(READ, [STORAGE], ["csidrivers"]),
        rule(READ, [STORAGE], ["csistoragecapacities"]),
        # DynamicResourceAllocation
        rule(READ, [RESOURCE], ["deviceclasses"]),
        rule(READ_UPDATE, [RESOURCE], ["resourceclaims"]),
        rule(READ_UPDATE, [RESOURCE], ["resourceclaims/status"]),
        rule(READ_UPDATE, [LEGACY], ["pods/finalizers"]),
        rule(READ, [RESOURCE], ["resourceslices"]),
    ]


def cluster_roles() -> list[Object]:
    """ClusterRoles()."""
    return [*_discovery_roles(), *_user_facing_roles(), *_node_roles(), *_component_roles()]


def cluster_role_bindings() -> list[Object]:
    """ClusterRoleBindings()."""
    return [
        cluster_role_binding("cluster-admin", groups("system:masters")),
        cluster_role_binding("system:monitoring", groups("system:monitoring")),
        cluster_role_binding("system:discovery", groups("system:authenticated")),
        cluster_role_binding("system:basic-user", groups("system:authenticated")),
        cluster_role_binding("system:public-info-viewer", groups("system:authenticated", "system:unauthenticated")),
        cluster_role_binding("system:node-proxier", users("system:kube-proxy")),
        cluster_role_binding("system:kube-controller-manager", users("system:kube-controller-manager")),
        cluster_role_binding("system:kube-dns", service_accounts("kube-system", "kube-dns")),
        cluster_role_binding("system:kube-scheduler", users("system:kube-scheduler")),
        cluster_role_binding("system:volume-scheduler", users("system:kube-scheduler")),
        # bound to nobody since the Node authorizer (1.7): kept so that reconciliation can tighten it
        cluster_role_binding(SYSTEM_NODE, []),
        # workloads read the OIDC discovery documents of their token issuer
        cluster_role_binding("system:service-account-issuer-discovery", groups("system:serviceaccounts")),
    ]


def cluster_roles_to_aggregate() -> dict[str, str]:
    """ClusterRolesToAggregate: the pre-aggregation role whose custom rules move to its aggregate-to role."""
    return {"admin": "system:aggregate-to-admin", "edit": "system:aggregate-to-edit",
            "view": "system:aggregate-to-view"}


def cluster_role_bindings_to_split() -> dict[str, Object]:
    """ClusterRoleBindingsToSplit: system:discovery's subjects seed system:public-info-viewer's binding."""
    return {"system:discovery": next(b for b in cluster_role_bindings()
                                     if b["metadata"]["name"] == "system:public-info-viewer")}
