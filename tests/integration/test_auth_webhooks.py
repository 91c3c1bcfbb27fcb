"""Webhook token authentication (TokenReview) and the Webhook authorization mode (SubjectAccessReview), against
webhooks the test serves over HTTPS and configures with kubeconfig files."""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Iterator

import pytest
import yaml

from conftest import Server
from httpsserver import HTTPSJSONServer
from kube_apiserver.cmd.options import ServerRunOptions


def _kubeconfig(path, webhook: HTTPSJSONServer, url_path: str) -> str:
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "webhook",
              "clusters": [{"name": "webhook", "cluster": {"server": webhook.url(url_path),
                                                           "certificate-authority-data": webhook.ca_bundle}}],
              "users": [{"name": "apiserver", "user": {"token": "apiserver-secret"}}],
              "contexts": [{"name": "webhook", "context": {"cluster": "webhook", "user": "apiserver"}}]}
    path.write_text(yaml.safe_dump(config))
    return str(path)


def _token_review(review: dict) -> tuple[int, dict]:
    token = review["spec"]["token"]
    if token == "wendy-token":
        status = {"authenticated": True, "user": {"username": "wendy", "uid": "w-1", "groups": ["webhook-users"],
                                                  "extra": {"scopes": ["a", "b"]}}}
    elif token == "other-audience-token":
        status = {"authenticated": True, "user": {"username": "x"}, "audiences": ["somewhere-else"]}
    else:
        status = {"authenticated": False, "error": "unknown token"}
    return 200, {"apiVersion": review["apiVersion"], "kind": "TokenReview", "status": status}


def _access_review(review: dict) -> tuple[int, dict]:
    spec = review["spec"]
    attrs = spec.get("resourceAttributes") or {}
    if spec.get("user") == "broken":
        return 403, {"message": "the webhook refuses to answer"}
    if spec.get("user") == "wendy" and attrs.get("resource") == "configmaps":
        if attrs.get("verb") == "delete":
            status = {"allowed": False, "denied": True, "reason": "no deletes here"}
        else:
            status = {"allowed": attrs.get("verb") in ("get", "list"), "reason": "configmaps are readable"}
    else:
        status = {"allowed": False}
    return 200, {"apiVersion": review["apiVersion"], "kind": "SubjectAccessReview", "status": status}


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> Iterator[tuple[Server, HTTPSJSONServer]]:
    webhook = HTTPSJSONServer()
    webhook.answers["/authn"] = _token_review
    webhook.answers["/authz"] = _access_review
    d = tmp_path_factory.mktemp("authwebhooks")
    tokens = d / "tokens.csv"
    tokens.write_text("broken-token,broken,broken-uid\n")
    server = Server(str(d / "data"), [
        "--authentication-token-webhook-config-file", _kubeconfig(d / "authn.yaml", webhook, "/authn"),
        "--authentication-token-webhook-version", "v1", "--token-auth-file", str(tokens),
        "--authorization-mode", "Webhook,RBAC", "--authorization-webhook-version", "v1",
        "--authorization-webhook-config-file", _kubeconfig(d / "authz.yaml", webhook, "/authz")]).start()
    yield server, webhook
    server.stop()
    webhook.stop()


def _get(server: Server, path: str, token: str, method: str = "GET") -> tuple[int, dict]:
    conn = http.client.HTTPSConnection("127.0.0.1", server.port,
                                       context=ssl.create_default_context(cafile=server.ca_file), timeout=10)
    try:
        conn.request(method, path, headers={"Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def test_a_token_the_webhook_knows_is_its_user(setup):
    server, webhook = setup
    code, _ = _get(server, CONFIGMAPS, "wendy-token")
    assert code == 200
    review = webhook.received["/authn"][-1]
    assert review["apiVersion"] == "authentication.k8s.io/v1" and review["kind"] == "TokenReview"
    assert review["spec"]["token"] == "wendy-token" and review["spec"]["audiences"]
    access = next(r for r in reversed(webhook.received["/authz"]) if r["spec"].get("user") == "wendy")
    assert access["apiVersion"] == "authorization.k8s.io/v1"
    assert access["spec"]["resourceAttributes"] == {"namespace": "default", "verb": "list", "version": "v1",
                                                    "resource": "configmaps"}
    assert access["spec"]["groups"] == ["webhook-users", "system:authenticated"]
    assert access["spec"]["extra"] == {"scopes": ["a", "b"]} and access["spec"]["uid"] == "w-1"


def test_answers_are_cached(setup):
    server, webhook = setup
    _get(server, CONFIGMAPS + "?limit=1", "wendy-token")
    reviews = len(webhook.received["/authn"])
    assert _get(server, CONFIGMAPS + "?limit=2", "wendy-token")[0] == 200
    assert len(webhook.received["/authn"]) == reviews


@pytest.mark.parametrize("token", ["unknown-token", "other-audience-token"])
def test_a_token_the_webhook_refuses_is_unauthorized(setup, token):
    server, _ = setup
    assert _get(server, CONFIGMAPS, token)[0] == 401


def test_the_webhook_s_denial_and_no_opinion(setup):
    server, _ = setup
    code, body = _get(server, CONFIGMAPS + "/x", "wendy-token", "DELETE")
    assert code == 403
    assert body["message"] == ('configmaps "x" is forbidden: User "wendy" cannot delete resource "configmaps" in API '
                               'group "" in the namespace "default": no deletes here')
    code, body = _get(server, "/api/v1/namespaces/default/secrets", "wendy-token")
    assert code == 403 and body["reason"] == "Forbidden"  # no opinion, then RBAC has none either


def test_a_failing_authorization_webhook_is_an_internal_error(setup):
    server, _ = setup
    code, body = _get(server, CONFIGMAPS, "broken-token")
    assert code == 500 and body["reason"] == "InternalError"
    assert "the server responded with the status code 403" in body["message"]


def test_subject_access_review_reports_the_webhook_s_decision(setup):
    server, _ = setup
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": "wendy", "resourceAttributes": {"namespace": "default", "verb": "get",
                                                              "resource": "configmaps"}}}
    status = server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review).json()["status"]
    assert status == {"allowed": True, "reason": "configmaps are readable"}
    review["spec"]["user"] = "broken"
    status = server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review).json()["status"]
    assert status["allowed"] is False and "status code 403" in status["evaluationError"]


def test_flag_errors(tmp_path):
    def errors(*args: str) -> list[str]:
        return ServerRunOptions.parse(["--data-dir", str(tmp_path), *args]).complete().validate()

    assert "authorization-mode Webhook's authorization config file not passed" in errors(
        "--authorization-mode", "Webhook")
    assert "cannot specify --authorization-webhook-config-file without mode Webhook" in errors(
        "--authorization-webhook-config-file", "x.yaml")


def _metric(text: str, metric: str, **labels: str) -> float:
    wanted = "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"
    for line in text.splitlines():
        if line.startswith(metric + wanted + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_decisions_round_trips_and_attempts_are_counted(setup):
    server, _ = setup
    assert _get(server, CONFIGMAPS + "?limit=3", "wendy-token")[0] == 200
    assert _get(server, CONFIGMAPS, "unknown-token")[0] == 401
    text = server.request("GET", "/metrics").body.decode()
    assert _metric(text, "apiserver_authorization_decisions_total", type="Webhook", name="default",
                   decision="allowed") >= 1
    assert _metric(text, "apiserver_authorization_decisions_total", type="Webhook", name="default",
                   decision="denied") >= 0
    assert _metric(text, "apiserver_authorization_webhook_evaluations_total", name="default", result="success") >= 1
    assert _metric(text, "apiserver_authorization_webhook_duration_seconds_count", name="default",
                   result="success") >= 1
    assert _metric(text, "authentication_attempts", result="success") >= 1
    assert _metric(text, "authentication_attempts", result="error") >= 1  # the webhook said "unknown token"
    assert _metric(text, "authenticated_user_requests", username="other") >= 1
    assert _metric(text, "authentication_duration_seconds_count", result="success") >= 1
