"""Webhook and policy matching: rules (operations, groups, versions, resources with subresources,
scope), exempt configuration kinds, namespace and object selectors, and a binding's MatchResources."""

from __future__ import annotations

import asyncio

import pytest

from kube_apiserver.admission.webhook.matching import matches
from kube_apiserver.admission.webhook.predicates import (
    NamespaceLabels,
    match_namespace_selector,
    match_object_selector,
    parse_selector,
)
from kube_apiserver.admission.webhook.resources import ResourceMapper
from kube_apiserver.admission.webhook.rules import GVK, GVR, Request, is_exempt, rule_matches
from kube_apiserver.apimachinery import errors

PODS = GVR("", "v1", "pods")


def request(operation: str = "CREATE", resource: GVR = PODS, subresource: str = "", namespace: str = "default",
            name: str = "p", obj: dict | None = None, old: dict | None = None, kind: str = "Pod") -> Request:
    return Request(operation, resource, subresource, GVK(resource.group, resource.version, kind), namespace, name,
                   obj if obj is not None else {"metadata": {"name": name}}, old)


def rule(resources: list[str], operations: tuple[str, ...] = ("*",), groups: tuple[str, ...] = ("",),
         versions: tuple[str, ...] = ("v1",), scope: str | None = None) -> dict:
    out = {"operations": list(operations), "apiGroups": list(groups), "apiVersions": list(versions),
           "resources": resources}
    if scope is not None:
        out["scope"] = scope
    return out


@pytest.mark.parametrize(("resources", "subresource", "expected"), [
    (["pods"], "", True),
    (["pods"], "status", False),
    (["pods/status"], "status", True),
    (["pods/*"], "status", True),
    (["pods/*"], "", True),  # "*" matches no subresource too, as upstream
    (["*"], "", True),
    (["*"], "status", False),
    (["*/status"], "status", True),
    (["*/*"], "exec", True),
    (["deployments"], "", False),
])
def test_resource_and_subresource(resources, subresource, expected):
    assert rule_matches(rule(resources), request(subresource=subresource)) is expected


def test_operations_groups_versions():
    assert rule_matches(rule(["pods"], ("CREATE", "UPDATE")), request("UPDATE"))
    assert not rule_matches(rule(["pods"], ("CREATE",)), request("DELETE"))
    assert not rule_matches(rule(["pods"], groups=("apps",)), request())
    assert rule_matches(rule(["pods"], groups=("*",), versions=("*",)), request())
    assert not rule_matches(rule(["pods"], versions=("v2",)), request())


@pytest.mark.parametrize(("scope", "resource", "namespace", "expected"), [
    ("Namespaced", PODS, "default", True),
    ("Namespaced", GVR("", "v1", "nodes"), "", False),
    ("Namespaced", GVR("", "v1", "namespaces"), "ns1", False),
    ("Cluster", GVR("", "v1", "namespaces"), "ns1", True),
    ("Cluster", GVR("", "v1", "nodes"), "", True),
    ("Cluster", PODS, "default", False),
    ("*", PODS, "default", True),
    ("Elsewhere", PODS, "default", False),
])
def test_scope(scope, resource, namespace, expected):
    matched = rule_matches(rule([resource.resource], scope=scope), request(resource=resource, namespace=namespace))
    assert matched is expected


def test_configuration_kinds_are_exempt():
    group = "admissionregistration.k8s.io"
    config = Request("CREATE", GVR(group, "v1", "validatingwebhookconfigurations"), "",
                     GVK(group, "v1", "ValidatingWebhookConfiguration"), "", "x", {}, None)
    assert is_exempt(config)
    assert not is_exempt(request())


def test_object_selector_reads_new_and_old_labels():
    selector = parse_selector({"matchLabels": {"team": "a"}})
    assert match_object_selector(selector, request(obj={"metadata": {"labels": {"team": "a"}}}))
    assert match_object_selector(selector, request(obj={"metadata": {}}, old={"metadata": {"labels": {"team": "a"}}}))
    assert not match_object_selector(selector, request(obj={"metadata": {"labels": {"team": "b"}}}))
    assert match_object_selector(parse_selector({}), request())


def test_unusable_selector_is_an_internal_error():
    with pytest.raises(errors.StatusError) as err:
        parse_selector({"matchExpressions": [{"key": "a", "operator": "Near"}]})
    assert err.value.code == 500


def namespaces(known: dict[str, dict]) -> NamespaceLabels:
    async def get(name: str) -> dict | None:
        return known.get(name)
    return NamespaceLabels(get)


def test_namespace_selector():
    labels = namespaces({"prod": {"metadata": {"name": "prod", "labels": {"env": "prod"}}}})
    selector = parse_selector({"matchLabels": {"env": "prod"}})
    run = asyncio.run
    assert run(match_namespace_selector(selector, request(namespace="prod"), labels))
    assert run(match_namespace_selector(selector, request(resource=GVR("", "v1", "nodes"), namespace=""), labels))
    created_ns = request(resource=GVR("", "v1", "namespaces"), namespace="",
                         obj={"metadata": {"name": "n", "labels": {"env": "prod"}}})
    assert run(match_namespace_selector(selector, created_ns, labels))
    with pytest.raises(errors.StatusError) as err:
        run(match_namespace_selector(selector, request(namespace="missing"), labels))
    assert err.value.code == 404 and err.value.message == 'namespaces "missing" not found'


def test_policy_match_resources():
    labels = namespaces({"default": {"metadata": {"name": "default"}}})
    mapper = ResourceMapper()
    constraints = {"namespaceSelector": {}, "objectSelector": {}, "matchPolicy": "Equivalent",
                   "resourceRules": [{**rule(["pods"]), "resourceNames": ["p"]}],
                   "excludeResourceRules": [rule(["pods"], ("DELETE",))]}
    found = asyncio.run(matches(constraints, request(), labels, mapper))
    assert found is not None and found.resource == PODS and found.kind.kind == "Pod"
    assert asyncio.run(matches(constraints, request(name="other"), labels, mapper)) is None
    assert asyncio.run(matches(constraints, request("DELETE"), labels, mapper)) is None
    everything = {"namespaceSelector": {}, "objectSelector": {}}
    assert asyncio.run(matches(everything, request(), labels, mapper)) is not None
