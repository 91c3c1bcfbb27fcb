"""Audit logging: a policy of several rules (first match wins), kubectl and raw requests, and the audit.k8s.io/v1
Event lines they leave in --audit-log-path; the Audit-Id header on every response."""

from __future__ import annotations

import json
import re
import textwrap
import threading

import pytest

from conftest import Server, wait_for

POLICY = textwrap.dedent("""\
    apiVersion: audit.k8s.io/v1
    kind: Policy
    rules:
    - level: None
      nonResourceURLs: ["/readyz*", "/healthz*", "/livez*", "/openapi/*", "/api", "/apis*"]
    - level: Request
      userGroups: ["devs"]
    - level: None
      namespaces: ["kube-system"]
    - level: RequestResponse
      resources: [{group: "", resources: ["configmaps"]}]
      omitManagedFields: true
    - level: Metadata
      resources: [{group: "", resources: ["secrets"]}]
      omitStages: ["RequestReceived"]
    - level: Metadata
      omitStages: ["RequestReceived"]
    """)
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory):
    data = tmp_path_factory.mktemp("audit")
    (data / "policy.yaml").write_text(POLICY)
    (data / "tokens.csv").write_text("bobtoken,bob,bob-uid,devs\n")
    srv = Server(str(data), ["--audit-policy-file", str(data / "policy.yaml"),
                             "--audit-log-path", str(data / "logs" / "audit.log"),
                             "--token-auth-file", str(data / "tokens.csv"), "--authorization-mode=RBAC"]).start()
    srv.audit_log = str(data / "logs" / "audit.log")  # type: ignore[attr-defined]
    yield srv
    srv.stop()


def events(srv: Server, **match: object) -> list[dict]:
    with open(srv.audit_log) as f:  # type: ignore[attr-defined]
        lines = [json.loads(line) for line in f]
    return [e for e in lines if all(_get(e, k) == v for k, v in match.items())]


def _get(event: dict, dotted: str) -> object:
    value: object = event
    for part in dotted.split("__"):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def by_id(srv: Server, audit_id: str) -> list[dict]:
    return events(srv, auditID=audit_id)


def test_every_response_has_an_audit_id_and_a_callers_own_is_kept(audited):
    first = audited.request("GET", "/readyz", token=None)
    assert re.fullmatch(r"[0-9a-f-]{36}", first.headers["audit-id"])
    assert audited.request("GET", "/version").headers["audit-id"] != first.headers["audit-id"]
    own = audited.request("GET", "/api/v1/namespaces/default", headers={"Audit-ID": "my-own-id"})
    assert own.headers["audit-id"] == "my-own-id"
    assert [e["stage"] for e in by_id(audited, "my-own-id")] == ["ResponseComplete"]
    assert by_id(audited, first.headers["audit-id"]) == []  # a None rule: not logged
    assert audited.request("GET", "/api/v1/nope/x", token="wrong").headers["audit-id"]


def test_kubectl_create_is_logged_at_request_response(audited, kubectl_available):
    audited.kubectl("create", "configmap", "audited", "--from-literal=k=v")
    (done,) = wait_for(lambda: events(audited, verb="create", objectRef__name="audited"))
    found = by_id(audited, done["auditID"])
    assert [e["stage"] for e in found] == ["RequestReceived", "ResponseComplete"]
    received, complete = found
    assert list(complete) == ["kind", "apiVersion", "level", "auditID", "stage", "requestURI", "verb", "user",
                              "sourceIPs", "userAgent", "objectRef", "responseStatus", "requestObject",
                              "responseObject", "requestReceivedTimestamp", "stageTimestamp", "annotations"]
    assert complete["level"] == "RequestResponse" and complete["apiVersion"] == "audit.k8s.io/v1"
    assert complete["requestURI"].startswith("/api/v1/namespaces/default/configmaps?")
    assert complete["user"]["username"] == "admin" and "system:masters" in complete["user"]["groups"]
    assert complete["sourceIPs"] == ["127.0.0.1"] and complete["userAgent"].startswith("kubectl")
    assert complete["objectRef"] == {"resource": "configmaps", "namespace": "default", "name": "audited",
                                     "apiVersion": "v1"}
    assert complete["responseStatus"] == {"metadata": {}, "code": 201}
    assert complete["requestObject"]["data"] == {"k": "v"}
    assert complete["responseObject"]["metadata"]["uid"]
    assert "managedFields" not in complete["responseObject"]["metadata"]  # omitManagedFields
    assert complete["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert "authorization.k8s.io/reason" in complete["annotations"]
    assert "responseStatus" not in received and "responseObject" not in received
    assert received["stageTimestamp"] == received["requestReceivedTimestamp"] == complete["requestReceivedTimestamp"]
    assert MICRO_TIME.match(complete["stageTimestamp"]) and complete["stageTimestamp"] >= received["stageTimestamp"]


def test_a_failure_keeps_its_status_and_omitted_stages_are_not_written(audited, kubectl_available):
    audited.kubectl("get", "secret", "missing", check=False)
    found = wait_for(lambda: events(audited, objectRef__resource="secrets", objectRef__name="missing"))
    assert [e["stage"] for e in found] == ["ResponseComplete"]  # the rule omits RequestReceived
    event = found[0]
    assert event["level"] == "Metadata" and event["verb"] == "get"
    assert event["responseStatus"] == {"metadata": {}, "status": "Failure",
                                       "message": 'secrets "missing" not found', "reason": "NotFound",
                                       "details": {"name": "missing", "kind": "secrets"}, "code": 404}
    assert "requestObject" not in event and "responseObject" not in event


def test_first_matching_rule_wins_and_none_logs_nothing(audited):
    bob = audited.request("GET", "/api/v1/namespaces/kube-system/configmaps", token="bobtoken")
    assert bob.status == 403
    event = by_id(audited, bob.headers["audit-id"])[-1]
    assert event["level"] == "Request"  # the userGroups rule comes before the namespace's None
    assert event["user"] == {"username": "bob", "uid": "bob-uid", "groups": ["devs", "system:authenticated"]}
    assert event["annotations"]["authorization.k8s.io/decision"] == "forbid"
    assert event["responseStatus"]["reason"] == "Forbidden" and event["responseStatus"]["code"] == 403
    admin = audited.request("GET", "/api/v1/namespaces/kube-system/configmaps")
    assert admin.status == 200 and by_id(audited, admin.headers["audit-id"]) == []


def test_a_watch_has_response_started_then_complete(audited):
    watch = audited.request("GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
    assert watch.status == 200
    found = wait_for(lambda: [e for e in by_id(audited, watch.headers["audit-id"])
                              if e["stage"] == "ResponseComplete"] and by_id(audited, watch.headers["audit-id"]))
    assert [e["stage"] for e in found] == ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    assert all(e["verb"] == "watch" and e["responseStatus"]["code"] == 200 for e in found[1:])
    assert "responseObject" not in found[2]


def test_failed_authentication_is_audited_without_a_user(audited):
    resp = audited.request("GET", "/api/v1/namespaces/default/secrets", token="not-a-token")
    assert resp.status == 401
    (event,) = by_id(audited, resp.headers["audit-id"])
    assert event["stage"] == "ResponseStarted" and event["user"] == {}
    assert event["responseStatus"] == {"metadata": {}, "message": "Authentication failed, attempted: bearer",
                                       "code": 401}


def test_request_level_records_the_patch_but_not_the_response(audited):
    resp = audited.request("PATCH", "/api/v1/namespaces/default/secrets/nothing", {"data": {}},
                           headers={"Content-Type": "application/merge-patch+json"}, token="bobtoken")
    (event,) = [e for e in by_id(audited, resp.headers["audit-id"]) if e["stage"] == "ResponseComplete"]
    assert event["level"] == "Request" and event["verb"] == "patch"
    assert "responseObject" not in event


def test_concurrent_requests_each_get_their_own_events(audited):
    ids: list[str] = []

    def get() -> None:
        ids.append(audited.request("GET", "/api/v1/namespaces/default/configmaps").headers["audit-id"])

    threads = [threading.Thread(target=get) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == 5
    for audit_id in ids:
        assert [e["stage"] for e in by_id(audited, audit_id)] == ["RequestReceived", "ResponseComplete"]


def test_admission_audit_annotations_reach_the_event(audited):
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "sizes"},
              "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                               "operations": ["CREATE"],
                                                               "resources": ["configmaps"]}]},
                       "auditAnnotations": [{"key": "keys", "valueExpression": "string(size(object.data))"}]}}
    binding = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": "sizes"}, "spec": {"policyName": "sizes", "validationActions": ["Audit"]}}
    for path, body in (("validatingadmissionpolicies", policy), ("validatingadmissionpolicybindings", binding)):
        assert audited.request("POST", f"/apis/admissionregistration.k8s.io/v1/{path}", body).status == 201
    names = iter(range(1000))

    def annotated() -> dict | None:
        cm = {"metadata": {"name": f"sized-{next(names)}"}, "data": {"a": "1", "b": "2"}}
        resp = audited.request("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", cm)
        event = by_id(audited, resp.headers["audit-id"])[-1]
        return event if "sizes/keys" in event.get("annotations", {}) else None

    event = wait_for(annotated, timeout=10)
    assert event["annotations"]["sizes/keys"] == "2"
    assert event["annotations"]["authorization.k8s.io/decision"] == "allow"


def test_a_success_status_answer_is_audited_with_its_http_code(audited):
    """A delete answers a Status without a code; the event's responseStatus.code is still the response's 200
    (kube-apiserver's response writer sets it after the object was logged)."""
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "audited-delete"}, "data": {"a": "b"}}
    assert audited.request("POST", "/api/v1/namespaces/default/configmaps", body).status == 201
    deleted = audited.request("DELETE", "/api/v1/namespaces/default/configmaps/audited-delete")
    assert deleted.status == 200 and deleted.json()["kind"] == "Status" and "code" not in deleted.json()
    event = wait_for(lambda: [e for e in by_id(audited, deleted.headers["audit-id"])
                              if e["stage"] == "ResponseComplete"])[0]
    assert event["responseStatus"]["code"] == 200 and event["responseStatus"]["status"] == "Success"
