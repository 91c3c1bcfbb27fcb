"""The configuration objects kube-apiserver maintains itself (k8s.io/apiserver/pkg/apis/flowcontrol/
bootstrap/default.go): the mandatory exempt and catch-all levels and schemas, and the suggested ones."""

from __future__ import annotations

import copy
from typing import Any

from .common import API_VERSION, AUTO_UPDATE_ANNOTATION, CATCH_ALL, EXEMPT, WILDCARD

Object = dict[str, Any]
# k8s.io/apiserver/pkg/authentication/user and .../serviceaccount
SYSTEM_PRIVILEGED_GROUP = "system:masters"
ALL_AUTHENTICATED = "system:authenticated"
ALL_UNAUTHENTICATED = "system:unauthenticated"
NODES_GROUP = "system:nodes"
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
KUBE_CONTROLLER_MANAGER = "system:kube-controller-manager"
KUBE_SCHEDULER = "system:kube-scheduler"
BY_USER, BY_NAMESPACE = "ByUser", "ByNamespace"


def _meta(name: str) -> Object:
    return {"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}}


def _limited(shares: int, lendable: int, queues: int = 0, hand_size: int = 0) -> Object:
    response: Object = {"type": "Reject"}
    if queues:
        response = {"type": "Queue", "queuing": {"queues": queues, "handSize": hand_size, "queueLengthLimit": 50}}
    return {"type": "Limited", "limited": {"nominalConcurrencyShares": shares, "lendablePercent": lendable,
                                           "limitResponse": response}}


def _level(name: str, spec: Object) -> Object:
    return {"apiVersion": API_VERSION, "kind": "PriorityLevelConfiguration", "metadata": _meta(name), "spec": spec}


MANDATORY_PRIORITY_LEVELS = (
    _level(CATCH_ALL, _limited(5, 0)),
    _level(EXEMPT, {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
)
SUGGESTED_PRIORITY_LEVELS = (
    _level("system", _limited(30, 33, 64, 6)),
    _level("node-high", _limited(40, 25, 64, 6)),
    _level("leader-election", _limited(10, 0, 16, 4)),
    _level("workload-high", _limited(40, 50, 128, 6)),
    _level("workload-low", _limited(100, 90, 128, 6)),
    _level("global-default", _limited(20, 50, 128, 6)),
)


def _groups(*names: str) -> list[Object]:
    return [{"kind": "Group", "group": {"name": name}} for name in names]


def _users(*names: str) -> list[Object]:
    return [{"kind": "User", "user": {"name": name}} for name in names]


def _kube_system_service_accounts() -> list[Object]:
    return [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": WILDCARD}}]


def _resource_rule(verbs: list[str], groups: list[str], resources: list[str], cluster_scope: bool) -> Object:
    rule: Object = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if cluster_scope:
        rule["clusterScope"] = True
    rule["namespaces"] = [WILDCARD]
    return rule


def _everything(subjects: list[Object]) -> Object:
    return {"subjects": subjects,
            "resourceRules": [_resource_rule([WILDCARD], [WILDCARD], [WILDCARD], True)],
            "nonResourceRules": [{"verbs": [WILDCARD], "nonResourceURLs": [WILDCARD]}]}


def _schema(name: str, level: str, precedence: int, method: str, rules: Object) -> Object:
    spec: Object = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence}
    if method:
        spec["distinguisherMethod"] = {"type": method}
    spec["rules"] = [rules]
    return {"apiVersion": API_VERSION, "kind": "FlowSchema", "metadata": _meta(name), "spec": spec}


MANDATORY_FLOW_SCHEMAS = (
    _schema(EXEMPT, EXEMPT, 1, "", _everything(_groups(SYSTEM_PRIVILEGED_GROUP))),
    _schema(CATCH_ALL, CATCH_ALL, 10000, BY_USER, _everything(_groups(ALL_UNAUTHENTICATED, ALL_AUTHENTICATED))),
)
SUGGESTED_FLOW_SCHEMAS = (
    _schema("system-nodes", "system", 500, BY_USER, _everything(_groups(NODES_GROUP))),
    _schema("system-node-high", "node-high", 400, BY_USER, {
        "subjects": _groups(NODES_GROUP),
        "resourceRules": [_resource_rule([WILDCARD], [""], ["nodes", "nodes/status"], True),
                          _resource_rule([WILDCARD], ["coordination.k8s.io"], ["leases"], False)]}),
    _schema("probes", EXEMPT, 2, "", {
        "subjects": _groups(ALL_UNAUTHENTICATED, ALL_AUTHENTICATED),
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}),
    _schema("system-leader-election", "leader-election", 100, BY_USER, {
        "subjects": _users(KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER) + _kube_system_service_accounts(),
        "resourceRules": [_resource_rule(["get", "create", "update"], ["coordination.k8s.io"], ["leases"], False)]}),
    _schema("kube-controller-manager", "workload-high", 800, BY_NAMESPACE,
            _everything(_users(KUBE_CONTROLLER_MANAGER))),
    _schema("kube-scheduler", "workload-high", 800, BY_NAMESPACE, _everything(_users(KUBE_SCHEDULER))),
    _schema("kube-system-service-accounts", "workload-high", 900, BY_NAMESPACE,
            _everything(_kube_system_service_accounts())),
    _schema("service-accounts", "workload-low", 9000, BY_USER, _everything(_groups(SERVICE_ACCOUNTS_GROUP))),
    _schema("global-default", "global-default", 9900, BY_USER,
            _everything(_groups(ALL_UNAUTHENTICATED, ALL_AUTHENTICATED))),
)


def fresh(obj: Object) -> Object:
    """A copy of a bootstrap object the caller may change."""
    return copy.deepcopy(obj)


def mandatory_spec(objects: tuple[Object, ...], name: str) -> Object | None:
    """The fixed spec of a mandatory object (internalbootstrap.Mandatory*), None for other names."""
    return next((copy.deepcopy(o["spec"]) for o in objects if o["metadata"]["name"] == name), None)
