"""Builders for the bootstrap policy (k8s pkg/apis/rbac/v1 helpers.go NewRule/NewClusterBinding/
NewRoleBinding, and bootstrappolicy addDefaultMetadata).

Like RuleOrDie, a rule's verbs, groups, resources, names and URLs are sorted, and empty fields are left
out (the Go types omit them), so the objects compare equal to what kube-apiserver writes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Object = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
API_VERSION = f"{GROUP}/v1"
AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate"
LABEL = {"kubernetes.io/bootstrapping": "rbac-defaults"}
ANNOTATION = {AUTOUPDATE_ANNOTATION: "true"}
CONTROLLER_ROLE_PREFIX = "system:controller:"
KUBE_SYSTEM = "kube-system"
KUBE_PUBLIC = "kube-public"

WRITE = ("create", "update", "patch", "delete", "deletecollection")
READ_WRITE = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
READ = ("get", "list", "watch")
READ_UPDATE = ("get", "list", "watch", "update", "patch")

LEGACY = ""
APPS = "apps"
AUTHENTICATION = "authentication.k8s.io"
AUTHORIZATION = "authorization.k8s.io"
AUTOSCALING = "autoscaling"
BATCH = "batch"
CERTIFICATES = "certificates.k8s.io"
COORDINATION = "coordination.k8s.io"
DISCOVERY = "discovery.k8s.io"
EXTENSIONS = "extensions"
POLICY = "policy"
RBAC = GROUP
RESOURCE = "resource.k8s.io"
STORAGE = "storage.k8s.io"
NETWORKING = "networking.k8s.io"
EVENTS = "events.k8s.io"
ADMISSION = "admissionregistration.k8s.io"


def rule(verbs: Iterable[str], groups: Iterable[str] = (), resources: Iterable[str] = (),
         names: Iterable[str] = (), urls: Iterable[str] = ()) -> Object:
    """NewRule(verbs...).Groups(...).Resources(...).Names(...).URLs(...).RuleOrDie()."""
    out: Object = {}
    for key, values in (("apiGroups", groups), ("resources", resources), ("resourceNames", names),
                        ("nonResourceURLs", urls), ("verbs", verbs)):
        values = sorted(set(values))
        if values:
            out[key] = values
    return out


def url_rule(*urls: str) -> Object:
    return rule(["get"], urls=urls)


def events_rule() -> Object:
    """eventsRule(): what every component that records events needs."""
    return rule(["create", "update", "patch"], [LEGACY, EVENTS], ["events"])


def metadata(name: str, namespace: str = "", labels: dict[str, str] | None = None) -> Object:
    """addDefaultMetadata: the bootstrapping label and the autoupdate annotation."""
    meta: Object = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = {**(labels or {}), **LABEL}
    meta["annotations"] = dict(ANNOTATION)
    return meta


def cluster_role(name: str, rules: list[Object], labels: dict[str, str] | None = None,
                 aggregate_from: str = "") -> Object:
    """A ClusterRole; aggregate_from names the aggregate-to-* label it gathers (its rules stay empty)."""
    role: Object = {"apiVersion": API_VERSION, "kind": "ClusterRole", "metadata": metadata(name, labels=labels)}
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchLabels": {f"rbac.authorization.k8s.io/aggregate-to-{aggregate_from}": "true"}}]}
    if rules:
        role["rules"] = rules
    return role


def role(name: str, namespace: str, rules: list[Object]) -> Object:
    return {"apiVersion": API_VERSION, "kind": "Role", "metadata": metadata(name, namespace), "rules": rules}


def users(*names: str) -> list[Object]:
    return [{"apiGroup": GROUP, "kind": "User", "name": n} for n in names]


def groups(*names: str) -> list[Object]:
    return [{"apiGroup": GROUP, "kind": "Group", "name": n} for n in names]


def service_accounts(namespace: str, *names: str) -> list[Object]:
    return [{"kind": "ServiceAccount", "name": n, "namespace": namespace} for n in names]


def cluster_role_binding(role_name: str, subjects: list[Object], name: str = "") -> Object:
    """NewClusterBinding(role): named after the role unless told otherwise."""
    binding: Object = {"apiVersion": API_VERSION, "kind": "ClusterRoleBinding",
                       "metadata": metadata(name or role_name),
                       "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role_name}}
    if subjects:
        binding["subjects"] = subjects
    return binding


def role_binding(role_name: str, namespace: str, subjects: list[Object], name: str = "") -> Object:
    """NewRoleBinding(role, namespace) of a Role in that namespace."""
    return {"apiVersion": API_VERSION, "kind": "RoleBinding", "metadata": metadata(name or role_name, namespace),
            "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": role_name}, "subjects": subjects}
