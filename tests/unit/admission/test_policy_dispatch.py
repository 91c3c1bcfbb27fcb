"""The ValidatingAdmissionPolicy plugin's dispatch over stored policies and bindings: the denial error
(message, reason, code, causes), validation actions, configuration errors under both failure
policies, params (by name, by selector, not found, scopes), namespaceObject, excluded resources and
the authorizer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kube_apiserver.admission.interfaces import Attributes
from kube_apiserver.admission.policy import ValidatingAdmissionPolicy
from kube_apiserver.admission.policy.compile import compile_policy
from kube_apiserver.admission.policy.params import ParamError, ParamResolver, collect_params
from kube_apiserver.admission.policy.source import PolicyHook
from kube_apiserver.api.admissionregistration.defaults import default_binding, default_policy
from kube_apiserver.apimachinery import errors
from kube_apiserver.client.discovery import (
    GroupVersionKind,
    GroupVersionResource,
    NoMatchError,
    RESTMapping,
)
from kube_apiserver.client.informers import SharedIndexInformer
from kube_apiserver.registry.context import UserInfo

RULE = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
CONFIGMAP_PARAMS = {"apiVersion": "v1", "kind": "ConfigMap"}
NAMESPACES = {"default": {"metadata": {"name": "default", "labels": {"env": "prod"}, "uid": "u1",
                                       "managedFields": [{}]}, "spec": {"finalizers": ["kubernetes"]},
                          "status": {"phase": "Active"}}}


class FakeInformers:
    """Shared informers that have listed `items` already (the params a paramKind's informer holds)."""

    def __init__(self, items: list[dict[str, Any]]):
        self.items = items

    def for_resource(self, group: str, version: str, resource: str) -> SharedIndexInformer:
        informer = SharedIndexInformer(None)  # type: ignore[arg-type]  # never started: nothing to list
        for item in self.items:
            informer.indexer.upsert(item)
        informer.synced.set()
        return informer


class FakeRESTMapper:
    """A discovery REST mapper that knows one kind: v1 ConfigMap, served as configmaps."""

    def __init__(self, namespaced: bool = True):
        self.namespaced = namespaced

    async def rest_mapping(self, kind: GroupVersionKind) -> RESTMapping:
        if kind != GroupVersionKind("", "v1", "ConfigMap"):
            raise NoMatchError(f"no matches for {kind}")
        return RESTMapping(GroupVersionResource("", "v1", "configmaps"), kind, self.namespaced)


def configmap(name: str, namespace: str = "default", labels: dict[str, str] | None = None,
              **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels or {}}, "data": data}


def attributes(obj: dict[str, Any] | None = None, namespace: str = "default", resource: str = "configmaps",
               group: str = "", kind: str = "ConfigMap", user: str = "alice") -> Attributes:
    obj = obj if obj is not None else configmap("c", namespace, size="3")
    return Attributes("CREATE", group, "v1", kind, resource, "", namespace, obj["metadata"]["name"], obj, None,
                      UserInfo(user, groups=("devs",)), warnings=[])


def policy(name: str, validations: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """As stored: with the API's defaults."""
    obj = {"metadata": {"name": name, "resourceVersion": "1"},
           "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [RULE]},
                    "validations": validations, **spec}}
    default_policy(obj)
    return obj


def binding(name: str, actions: tuple[str, ...] = ("Deny",), **spec: Any) -> dict[str, Any]:
    obj = {"metadata": {"name": name}, "spec": {"validationActions": list(actions), **spec}}
    default_binding(obj)
    return obj


class Allowing:
    """An authorizer allowing what `verbs` lists."""

    def __init__(self, *verbs: str):
        self.verbs = verbs

    async def authorize(self, attrs: Any) -> tuple[str, str]:
        return ("Allow", "") if attrs.verb in self.verbs else ("NoOpinion", "")


def plugin(hooks: list[tuple[dict[str, Any], list[dict[str, Any]]]], params: list[dict[str, Any]] | None = None,
           authorizer: Any = None, namespaced_params: bool = True) -> ValidatingAdmissionPolicy:
    async def get_namespace(name: str) -> dict[str, Any] | None:
        return NAMESPACES.get(name)

    built = ValidatingAdmissionPolicy(get_namespace, authorizer)
    built.set_rest_mapper(FakeRESTMapper(namespaced_params))  # type: ignore[arg-type]
    built.params.set_informers(FakeInformers(params or []))  # type: ignore[arg-type]
    compiled = [PolicyHook(p, b, compile_policy(p)) for p, b in hooks]

    async def stored() -> list[PolicyHook]:
        return compiled

    built.source.hooks = stored  # type: ignore[method-assign]
    return built


def refusal(built: ValidatingAdmissionPolicy, attrs: Attributes) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as err:
        asyncio.run(built.validate(attrs))
    return err.value


def test_denial_is_kubernetes_status() -> None:
    built = plugin([(policy("p", [{"expression": "int(object.data.size) < 2", "reason": "Forbidden",
                                   "message": "too big"}]), [binding("b", policyName="p")])])
    err = refusal(built, attributes())
    message = "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: too big"
    assert err.status() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": f'configmaps "c" is forbidden: {message}', "reason": "Forbidden",
                            "details": {"name": "c", "kind": "configmaps",
                                        "causes": [{"message": message}]}, "code": 403}


def test_first_denial_wins_and_warnings_are_added() -> None:
    failing = [{"expression": "false", "message": "one"}, {"expression": "false", "message": "two"}]
    built = plugin([(policy("a", failing), [binding("a-warn", ("Warn", "Audit"), policyName="a")]),
                    (policy("b", failing), [binding("b-deny", policyName="b")])])
    attrs = attributes()
    err = refusal(built, attrs)
    assert err.message.endswith("ValidatingAdmissionPolicy 'b' with binding 'b-deny' denied request: one")
    assert err.code == 422 and err.reason == "Invalid"
    assert attrs.warnings == [
        "Validation failed for ValidatingAdmissionPolicy 'a' with binding 'a-warn': one",
        "Validation failed for ValidatingAdmissionPolicy 'a' with binding 'a-warn': two"]


def test_audit_only_bindings_admit() -> None:
    built = plugin([(policy("p", [{"expression": "false"}]), [binding("b", ("Audit",), policyName="p")])])
    attrs = attributes()
    asyncio.run(built.validate(attrs))
    assert attrs.warnings == []


def test_binding_match_resources_narrow_the_policy() -> None:
    other_ns = {"namespaceSelector": {"matchLabels": {"env": "dev"}}}
    built = plugin([(policy("p", [{"expression": "false"}]), [binding("b", policyName="p", matchResources=other_ns)])])
    asyncio.run(built.validate(attributes()))
    prod = {**other_ns, "namespaceSelector": {"matchLabels": {"env": "prod"}}}
    built = plugin([(policy("p", [{"expression": "false"}]), [binding("b", policyName="p", matchResources=prod)])])
    assert refusal(built, attributes()).code == 422


def test_configuration_errors_and_failure_policies() -> None:
    no_constraints = policy("p", [{"expression": "true"}])
    del no_constraints["spec"]["matchConstraints"]
    err = refusal(plugin([(no_constraints, [binding("b", policyName="p")])]), attributes())
    assert err.message.endswith("ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: "
                                "policy contained no match constraints, a required field")
    unknown = policy("p", [{"expression": "true"}], paramKind={"apiVersion": "example.com/v1", "kind": "Nope"})
    err = refusal(plugin([(unknown, [binding("b", policyName="p")])]), attributes())
    assert err.message.endswith("failed to configure policy: failed to find resource referenced by paramKind: "
                                "'example.com/v1, Kind=Nope'")
    unknown["spec"]["failurePolicy"] = "Ignore"
    asyncio.run(plugin([(unknown, [binding("b", policyName="p")])]).validate(attributes()))
    odd = policy("p", [{"expression": "true"}], failurePolicy="Sometimes", paramKind=unknown["spec"]["paramKind"])
    assert refusal(plugin([(odd, [binding("b", policyName="p")])]), attributes()).message.endswith(
        "ValidatingAdmissionPolicy 'p' denied request: unrecognized failure policy: 'Sometimes'")


def test_params_by_name_and_selector() -> None:
    params = [configmap("limits", max="2"), configmap("x", labels={"limit": "y"}, max="5"),
              configmap("y", labels={"limit": "y"}, max="1"), configmap("limits", "other", max="9")]
    check = [{"expression": "int(object.data.size) <= int(params.data.max)",
              "messageExpression": "'max ' + params.data.max + ' for ' + params.kind"}]
    with_params = policy("p", check, paramKind=CONFIGMAP_PARAMS)
    by_name = binding("b", policyName="p", paramRef={"name": "limits", "parameterNotFoundAction": "Deny"})
    assert refusal(plugin([(with_params, [by_name])], params), attributes()).message.endswith(
        "denied request: max 2 for ConfigMap")
    other = binding("b", policyName="p", paramRef={"name": "limits", "namespace": "other"})
    asyncio.run(plugin([(with_params, [other])], params).validate(attributes()))
    selected = binding("b", policyName="p", paramRef={"selector": {"matchLabels": {"limit": "y"}}})
    assert refusal(plugin([(with_params, [selected])], params), attributes()).message.endswith("max 1 for ConfigMap")
    absent = binding("b", policyName="p", paramRef={"name": "absent", "parameterNotFoundAction": "Allow"})
    asyncio.run(plugin([(with_params, [absent])], params).validate(attributes()))
    denied = binding("b", policyName="p", paramRef={"name": "absent", "parameterNotFoundAction": "Deny"})
    assert refusal(plugin([(with_params, [denied])], params), attributes()).message.endswith(
        "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params "
        "found for policy binding with `Deny` parameterNotFoundAction")
    no_ref = binding("b", policyName="p")  # params is null
    null_check = policy("p", [{"expression": "params == null", "message": "null"}], paramKind=CONFIGMAP_PARAMS)
    asyncio.run(plugin([(null_check, [no_ref])], params).validate(attributes()))


@pytest.mark.parametrize(("ref", "namespaced", "namespace", "message"), [
    ({"name": "a"}, True, "", "cannot use namespaced paramRef in policy binding that matches cluster-scoped "
                              "resources"),
    ({"name": "a", "namespace": "x"}, False, "default", "paramRef.namespace must not be provided for a "
                                                        "cluster-scoped `paramKind`"),
    ({"name": "a", "selector": {}}, True, "default", "paramRef.name and paramRef.selector are mutually exclusive"),
    ({}, True, "default", "one of name or selector must be provided"),
])
def test_param_ref_errors(ref: dict[str, Any], namespaced: bool, namespace: str, message: str) -> None:
    resolver = ParamResolver()
    resolver.set_rest_mapper(FakeRESTMapper(namespaced))  # type: ignore[arg-type]
    resolver.set_informers(FakeInformers([]))  # type: ignore[arg-type]
    source = asyncio.run(resolver.resolve(CONFIGMAP_PARAMS))
    with pytest.raises(ParamError, match="^" + message.replace("(", r"\(") + "$"):
        asyncio.run(collect_params(CONFIGMAP_PARAMS, source, ref, namespace))


def test_namespace_object_and_request() -> None:
    check = [{"expression": "namespaceObject.metadata.labels.env == 'dev'",
              "messageExpression": "namespaceObject.metadata.uid + ' ' + (has(namespaceObject.metadata."
                                   "managedFields) ? 'managed' : 'plain') + ' ' + request.userInfo.username + ' ' + "
                                   "request.kind.kind + ' ' + request.operation"}]
    err = refusal(plugin([(policy("p", check), [binding("b", policyName="p")])]), attributes())
    assert err.message.endswith("denied request: u1 plain alice ConfigMap CREATE")
    missing = attributes(configmap("c", "gone"), namespace="gone")
    lookup = refusal(plugin([(policy("p", check), [binding("b", policyName="p")])]), missing)
    assert (lookup.code, lookup.message) == (404, 'namespaces "gone" not found')


def test_policy_resources_are_excluded() -> None:
    rule = {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
    everything = policy("p", [{"expression": "false"}], matchConstraints={"resourceRules": [rule]})
    built = plugin([(everything, [binding("b", policyName="p")])])
    own = attributes({"metadata": {"name": "q"}}, "", "validatingadmissionpolicies",
                     "admissionregistration.k8s.io", "ValidatingAdmissionPolicy")
    asyncio.run(built.validate(own))
    webhooks = attributes({"metadata": {"name": "q"}}, "", "validatingwebhookconfigurations",
                          "admissionregistration.k8s.io", "ValidatingWebhookConfiguration")
    assert refusal(built, webhooks).code == 422


def test_authorizer() -> None:
    check = [{"expression": "authorizer.group('').resource('secrets').namespace('default').check('get')"
                            ".allowed() && authorizer.requestResource.check('create').allowed()",
              "message": "may not"}]
    denied = plugin([(policy("p", check), [binding("b", policyName="p")])], authorizer=Allowing("create"))
    assert refusal(denied, attributes()).message.endswith("denied request: may not")
    allowed = plugin([(policy("p", check), [binding("b", policyName="p")])], authorizer=Allowing("create", "get"))
    asyncio.run(allowed.validate(attributes()))
