"""Writes the server makes itself go through its own handler chain as system:apiserver (the loopback client):
the serviceaccount controller's `default` ServiceAccount is admitted by ValidatingAdmissionPolicy like any
other write (denied where a policy says so, created once it no longer does), and audited under that user;
so is the RBAC bootstrap policy the rbac/bootstrap-roles hook writes."""

from __future__ import annotations

import itertools
import json
import textwrap
from collections.abc import Iterator

import pytest

from conftest import Server, wait_for

GROUP = "/apis/admissionregistration.k8s.io/v1"
_ids = itertools.count()
POLICY = textwrap.dedent("""\
    apiVersion: audit.k8s.io/v1
    kind: Policy
    rules:
    - level: Metadata
      resources: [{group: "", resources: ["serviceaccounts"]}, {group: rbac.authorization.k8s.io, resources: ["clusterroles"]},
                 {group: "", resources: ["namespaces/finalize", "configmaps"]}]
      omitStages: ["RequestReceived"]
    """)


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("loopback")
    (data / "policy.yaml").write_text(POLICY)
    srv = Server(
        str(data),
        ["--audit-policy-file", str(data / "policy.yaml"), "--audit-log-path", str(data / "audit.log")],
    ).start()
    srv.audit_log = str(data / "audit.log")  # type: ignore[attr-defined]
    yield srv
    srv.stop()


def _account(srv: Server, namespace: str) -> int:
    return srv.request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/default").status


def test_a_policy_denies_the_controllers_write_until_it_is_unbound(audited: Server) -> None:
    denied, allowed = f"lb-denied-{next(_ids)}", f"lb-allowed-{next(_ids)}"
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "no-default-account"},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["serviceaccounts"],
                    }
                ]
            },
            "validations": [
                {
                    "expression": "request.userInfo.username != 'system:apiserver'",
                    "message": "made by the server",
                }
            ],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "no-default-account"},
        "spec": {
            "policyName": "no-default-account",
            "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {"loopback-test": "deny"}}},
        },
    }
    assert audited.request("POST", f"{GROUP}/validatingadmissionpolicies", policy).status == 201
    assert audited.request("POST", f"{GROUP}/validatingadmissionpolicybindings", binding).status == 201

    probe = f"lb-probe-{next(_ids)}"
    labels = {"loopback-test": "deny"}
    assert (
        audited.request("POST", "/api/v1/namespaces", {"metadata": {"name": probe, "labels": labels}}).status
        == 201
    )

    def policy_in_force() -> bool:  # the policy plugin reads its sources as an informer does: shortly after
        as_apiserver = {"Impersonate-User": "system:apiserver"}
        body = {"metadata": {"name": f"probe-{next(_ids)}"}}
        return (
            audited.request("POST", f"/api/v1/namespaces/{probe}/serviceaccounts", body, as_apiserver).status
            == 422
        )

    wait_for(policy_in_force, timeout=10)
    assert (
        audited.request(
            "POST", "/api/v1/namespaces", {"metadata": {"name": denied, "labels": {"loopback-test": "deny"}}}
        ).status
        == 201
    )
    assert audited.request("POST", "/api/v1/namespaces", {"metadata": {"name": allowed}}).status == 201
    # one worker syncs the namespaces in the order they came: once the second has its account, the
    # first was tried, and the policy refused the controller's write
    wait_for(lambda: _account(audited, allowed) == 200, timeout=10)
    assert _account(audited, denied) == 404
    with open(audited.audit_log) as f:  # type: ignore[attr-defined]
        entries = [json.loads(line) for line in f]
    refusals = [e for e in entries if e["objectRef"].get("namespace") == denied and e["verb"] == "create"]
    assert refusals and refusals[0]["user"]["username"] == "system:apiserver"
    assert refusals[0]["responseStatus"]["code"] == 422  # a policy's denial is Invalid
    assert "made by the server" in refusals[0]["responseStatus"]["message"]
    # the controller retries: without the binding its write goes through
    assert (
        audited.request("DELETE", f"{GROUP}/validatingadmissionpolicybindings/no-default-account").status
        == 200
    )
    wait_for(lambda: _account(audited, denied) == 200, timeout=15)


def test_the_controllers_writes_are_audited_as_system_apiserver(audited: Server) -> None:
    namespace = f"lb-audit-{next(_ids)}"
    assert audited.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}}).status == 201
    wait_for(lambda: _account(audited, namespace) == 200, timeout=10)

    def created() -> list[dict]:
        with open(audited.audit_log) as f:  # type: ignore[attr-defined]
            entries = [json.loads(line) for line in f]
        return [
            e
            for e in entries
            if e["objectRef"].get("namespace") == namespace
            and e["verb"] == "create"
            and e["stage"] == "ResponseComplete"
        ]

    event = wait_for(created, timeout=10)[0]
    assert event["user"]["username"] == "system:apiserver"
    assert event["user"]["groups"] == ["system:authenticated", "system:masters"]
    assert event["userAgent"].startswith("kube-apiserver/")
    assert event["sourceIPs"] == ["127.0.0.1"]
    assert event["responseStatus"]["code"] == 201


def test_the_bootstrap_policy_is_written_as_system_apiserver(audited: Server) -> None:
    def created() -> list[dict]:
        with open(audited.audit_log) as f:  # type: ignore[attr-defined]
            entries = [json.loads(line) for line in f]
        return [e for e in entries if e["objectRef"].get("name") == "cluster-admin" and e["verb"] == "create"]

    event = wait_for(created, timeout=10)[0]
    assert event["user"]["username"] == "system:apiserver"
    assert event["objectRef"]["resource"] == "clusterroles" and event["responseStatus"]["code"] == 201
    role = audited.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin").json()
    assert [m["manager"] for m in role["metadata"]["managedFields"]] == ["kube-apiserver"]


def test_the_aggregation_controllers_apply_is_audited_as_system_apiserver(audited: Server) -> None:
    roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
    selector = {"matchLabels": {"loopback-test/aggregate": "true"}}
    aggregated = {
        "metadata": {"name": "lb-aggregated"},
        "aggregationRule": {"clusterRoleSelectors": [selector]},
    }
    part = {
        "metadata": {"name": "lb-part", "labels": {"loopback-test/aggregate": "true"}},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
    }
    assert audited.request("POST", roles, aggregated).status == 201
    assert audited.request("POST", roles, part).status == 201
    wait_for(lambda: audited.request("GET", f"{roles}/lb-aggregated").json().get("rules"), timeout=10)

    def applied() -> list[dict]:
        with open(audited.audit_log) as f:  # type: ignore[attr-defined]
            entries = [json.loads(line) for line in f]
        return [e for e in entries if e["objectRef"].get("name") == "lb-aggregated" and e["verb"] == "patch"]

    event = wait_for(applied, timeout=10)[0]
    assert event["user"]["username"] == "system:apiserver" and event["responseStatus"]["code"] == 200


def test_the_namespace_controller_empties_and_finalizes_as_system_apiserver(audited: Server) -> None:
    namespace = f"lb-finalized-{next(_ids)}"
    assert audited.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}}).status == 201
    content = {"metadata": {"name": "content"}}
    assert audited.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", content).status == 201
    assert audited.request("DELETE", f"/api/v1/namespaces/{namespace}").status == 200
    wait_for(lambda: audited.request("GET", f"/api/v1/namespaces/{namespace}").status == 404, timeout=15)
    with open(audited.audit_log) as f:  # type: ignore[attr-defined]
        entries = [json.loads(line) for line in f]
    finalized = [
        e
        for e in entries
        if e["objectRef"].get("name") == namespace and e["objectRef"].get("subresource") == "finalize"
    ]
    assert finalized and finalized[0]["user"]["username"] == "system:apiserver"
    assert finalized[0]["verb"] == "update" and finalized[0]["userAgent"].startswith("kube-apiserver/")
    emptied = [
        e
        for e in entries
        if e["objectRef"].get("namespace") == namespace
        and e["verb"] == "deletecollection"
        and e["objectRef"].get("resource") == "configmaps"
    ]
    assert emptied and emptied[0]["user"]["username"] == "system:apiserver"


def test_the_garbage_collectors_deletes_are_audited_as_system_apiserver(audited: Server) -> None:
    configmaps = "/api/v1/namespaces/default/configmaps"
    owner = audited.request("POST", configmaps, {"metadata": {"name": "lb-owner"}}).json()
    reference = {"apiVersion": "v1", "kind": "ConfigMap", "name": "lb-owner", "uid": owner["metadata"]["uid"]}
    dependent = {"metadata": {"name": "lb-dependent", "ownerReferences": [reference]}}
    assert audited.request("POST", configmaps, dependent).status == 201
    assert audited.request("DELETE", f"{configmaps}/lb-owner").status == 200
    wait_for(lambda: audited.request("GET", f"{configmaps}/lb-dependent").status == 404, timeout=15)
    with open(audited.audit_log) as f:  # type: ignore[attr-defined]
        entries = [json.loads(line) for line in f]
    deletes = [e for e in entries if e["objectRef"].get("name") == "lb-dependent" and e["verb"] == "delete"]
    assert deletes and deletes[0]["user"]["username"] == "system:apiserver"


def test_the_controllers_informers_watch_through_the_loopback_client(audited: Server) -> None:
    def watches() -> list[dict]:
        with open(audited.audit_log) as f:  # type: ignore[attr-defined]
            entries = [json.loads(line) for line in f]
        return [
            e for e in entries if e["verb"] == "watch" and e["objectRef"].get("resource") == "serviceaccounts"
        ]

    # the serviceaccount controller's informer, a watch-list (admission's lister may have watched already)
    event = wait_for(lambda: [e for e in watches() if "sendInitialEvents=true" in e["requestURI"]], timeout=10)[0]
    assert event["user"]["username"] == "system:apiserver"
    assert "allowWatchBookmarks=true" in event["requestURI"]
