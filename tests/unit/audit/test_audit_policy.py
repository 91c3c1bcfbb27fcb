"""The audit policy: loading and validation messages (pkg/apis/audit/validation), and which rule a request
matches (pkg/audit/policy/checker.go)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kube_apiserver.audit.policy import PolicyError, load_policy, load_policy_file
from kube_apiserver.registry.context import UserInfo

HEAD = "apiVersion: audit.k8s.io/v1\nkind: Policy\n"


def info(verb="get", resource="", subresource="", name="", namespace="", group="", path=""):
    return SimpleNamespace(verb=verb, is_resource_request=bool(resource), resource=resource,
                           subresource=subresource, name=name, namespace=namespace, api_group=group,
                           path=path or "/api/v1/" + resource)


ALICE = UserInfo("alice", groups=("admins", "system:authenticated"))


def level(policy_yaml: str, req, user=ALICE) -> str:
    return load_policy((HEAD + policy_yaml).encode()).evaluate(user, req).level


@pytest.mark.parametrize(("resources", "req", "matched"), [
    ('["pods"]', info(resource="pods"), True),
    ('["pods"]', info(resource="pods", subresource="status"), False),
    ('["pods/status"]', info(resource="pods", subresource="status"), True),
    ('["pods/*"]', info(resource="pods", subresource="log"), True),
    ('["pods/*"]', info(resource="pods"), True),  # as upstream: "pods/*" covers pods itself too
    ('["*/status"]', info(resource="nodes", subresource="status"), True),
    ('["*/status"]', info(resource="deployments", subresource="status", group="apps"), False),  # group ""
    ('["*"]', info(resource="pods", subresource="exec"), True),
])
def test_resources_and_subresources(resources, req, matched):
    policy = f'rules:\n- level: Request\n  resources: [{{group: "", resources: {resources}}}]\n'
    assert level(policy, req) == ("Request" if matched else "None")


def test_group_wildcard_resource_names_and_namespaces():
    policy = ('rules:\n- level: Metadata\n  namespaces: ["prod"]\n'
              '  resources: [{group: "*", resources: ["secrets"], resourceNames: ["db"]}]\n')
    assert level(policy, info(resource="secrets", name="db", namespace="prod")) == "Metadata"
    assert level(policy, info(resource="secrets", name="web", namespace="prod")) == "None"
    assert level(policy, info(resource="secrets", name="db", namespace="dev")) == "None"
    cluster = 'rules:\n- level: Metadata\n  namespaces: [""]\n'  # "" is the cluster scope
    assert level(cluster, info(resource="nodes")) == "Metadata"
    assert level(cluster, info(resource="pods", namespace="x")) == "None"


def test_non_resource_urls_users_groups_verbs_and_first_match_wins():
    policy = ("rules:\n"
              '- level: None\n  users: ["bob"]\n'
              '- level: RequestResponse\n  userGroups: ["admins"]\n  verbs: ["create"]\n'
              '- level: Request\n  nonResourceURLs: ["/metrics", "/logs/*"]\n'
              "- level: Metadata\n")
    assert level(policy, info(path="/logs/kube.log")) == "Request"
    assert level(policy, info(path="/metrics")) == "Request"
    assert level(policy, info(path="/metricsx")) == "Metadata"
    assert level(policy, info(verb="create", resource="pods")) == "RequestResponse"
    assert level(policy, info(verb="create", resource="pods"), UserInfo("bob")) == "None"
    assert level(policy, info(resource="pods"), None) == "Metadata"  # failed authentication: no user
    assert level(policy, info(resource="pods")) == "Metadata"  # a resource request never matches URLs


def test_omit_stages_are_joined_and_omit_managed_fields_defaults_to_the_policys():
    policy = load_policy((HEAD + 'omitStages: ["RequestReceived"]\nomitManagedFields: true\nrules:\n'
                          '- level: Metadata\n  verbs: ["watch"]\n  omitStages: ["ResponseStarted"]\n'
                          "  omitManagedFields: false\n- level: Request\n").encode())
    watch = policy.evaluate(ALICE, info(verb="watch", resource="pods"))
    assert watch.omit_stages == {"RequestReceived", "ResponseStarted"} and not watch.omit_managed_fields
    get = policy.evaluate(ALICE, info(resource="pods"))
    assert get.level == "Request" and get.omit_stages == {"RequestReceived"} and get.omit_managed_fields


def test_validation_errors_are_aggregated():
    policy = ("omitStages: [Nope]\nrules:\n- level: Loud\n- resources: [{group: Bad_Group, resourceNames: [x]}]\n"
              '  level: None\n- level: Request\n  nonResourceURLs: ["metrics", "/a*b"]\n  namespaces: [x]\n')
    with pytest.raises(PolicyError) as caught:
        load_policy((HEAD + policy).encode())
    message = str(caught.value)
    assert message.startswith("[omitStages[0]: Invalid value: \"Nope\": allowed stages are "
                              "RequestReceived,ResponseStarted,ResponseComplete,Panic, ")
    assert 'rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", ' \
           '"RequestResponse"' in message
    assert 'rules[1].resources.group: Invalid value: "Bad_Group"' in message
    assert ('rules[1].resources.resourceNames: Invalid value: ["x"]: using resourceNames requires at least one '
            "resource") in message
    assert ("rules[2].nonResourceURLs[0]: Invalid value: \"metrics\": non-resource URL rules must begin with a "
            "'/' character") in message
    assert "non-resource URL wildcards '*' must be the final character of the rule" in message
    assert "rules cannot apply to both regular resources and non-resource URLs" in message


def test_loading_errors(tmp_path):
    with pytest.raises(PolicyError, match="loaded illegal policy with 0 rules"):
        load_policy((HEAD + "rules: []\n").encode())
    with pytest.raises(PolicyError, match="unknown group version field"):
        load_policy(b"apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]\n")
    with pytest.raises(PolicyError, match="rules\\[0\\].level: Required value"):
        load_policy((HEAD + "rules: [{}]\n").encode())
    missing = tmp_path / "nope.yaml"
    with pytest.raises(PolicyError, match="failed to read file path"):
        load_policy_file(str(missing))
    bad = tmp_path / "bad.yaml"
    bad.write_text(HEAD + "rules: []\n")
    with pytest.raises(PolicyError, match=f"0 rules: from file {bad}$"):
        load_policy_file(str(bad))
