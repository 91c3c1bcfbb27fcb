"""--authorization-config (AuthorizationConfiguration v1): an ordered chain of webhooks with CEL match conditions
and failure policies, Node and RBAC; validated with upstream's messages and read again when the file changes."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import yaml
from test_auth_webhooks import _kubeconfig

from conftest import Server, wait_for
from httpsserver import HTTPSJSONServer
from kube_apiserver.authorization import config as authz_config
from kube_apiserver.authorization import modes
from kube_apiserver.cmd.options import ServerRunOptions


def _review(review: dict) -> tuple[int, dict]:
    spec = review["spec"]
    if spec.get("user") == "broken":
        return 403, {"message": "the webhook refuses to answer"}
    allowed = spec.get("user") == "wendy" and (spec.get("resourceAttributes") or {}).get("resource") == "configmaps"
    return 200, {"apiVersion": review["apiVersion"], "kind": "SubjectAccessReview",
                 "status": {"allowed": allowed, "reason": "wendy reads team-a's configmaps" if allowed else ""}}


def _configuration(kubeconfig: str, with_webhook: bool = True) -> dict:
    webhook = {"type": "Webhook", "name": "team-a-webhook", "webhook": {
        "timeout": "3s", "subjectAccessReviewVersion": "v1", "matchConditionSubjectAccessReviewVersion": "v1",
        "failurePolicy": "Deny", "connectionInfo": {"type": "KubeConfigFile", "kubeConfigFile": kubeconfig},
        "matchConditions": [{"expression": "has(request.resourceAttributes)"},
                            {"expression": "request.resourceAttributes.namespace == 'team-a'"}]}}
    authorizers = [webhook] if with_webhook else []
    return {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthorizationConfiguration",
            "authorizers": [*authorizers, {"type": "Node", "name": "node"}, {"type": "RBAC", "name": "rbac"}]}


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> Iterator[tuple[Server, HTTPSJSONServer, str, str]]:
    webhook = HTTPSJSONServer()
    webhook.answers["/authz"] = _review
    d = tmp_path_factory.mktemp("authzconfig")
    kubeconfig = _kubeconfig(d / "authz.kubeconfig", webhook, "/authz")
    config_file = d / "authorization.yaml"
    config_file.write_text(yaml.safe_dump(_configuration(kubeconfig)))
    tokens = d / "tokens.csv"
    tokens.write_text("wendy-token,wendy,wendy-uid\nbroken-token,broken,broken-uid\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(modes, "RELOAD_CHECK_SECONDS", 0.1)
        server = Server(str(d / "data"), ["--authorization-config", str(config_file),
                                          "--token-auth-file", str(tokens)]).start()
    yield server, webhook, str(config_file), kubeconfig
    server.stop()
    webhook.stop()


def _get(server: Server, path: str, token: str):
    return server.request("GET", path, token=token)


def test_the_webhook_decides_what_its_conditions_match(setup):
    server, webhook, _, _ = setup
    assert _get(server, "/api/v1/namespaces/team-a/configmaps", "wendy-token").status == 200
    asked = len(webhook.received["/authz"])
    denied = _get(server, "/api/v1/namespaces/team-b/configmaps", "wendy-token")
    assert denied.status == 403  # the conditions do not match: RBAC, which grants nothing
    assert _get(server, "/api", "wendy-token").status == 200  # non-resource: RBAC's discovery roles
    assert len(webhook.received["/authz"]) == asked  # neither was sent to the webhook


def test_a_failing_webhook_with_deny_fails_the_request(setup):
    server, _, _, _ = setup
    failed = _get(server, "/api/v1/namespaces/team-a/configmaps", "broken-token")
    assert failed.status == 500 and "status code 403" in failed.json()["message"]
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": "broken", "resourceAttributes": {"namespace": "team-a", "verb": "get",
                                                              "resource": "configmaps"}}}
    status = server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review).json()["status"]
    assert status["allowed"] is False and status["denied"] is True and status["evaluationError"]


def test_the_file_is_read_again_when_it_changes(setup):
    server, _, config_file, kubeconfig = setup
    try:
        with open(config_file, "w") as f:
            f.write("not: [valid")  # kept out: the chain in force stays
        time.sleep(0.3)
        assert _get(server, "/api/v1/namespaces/team-a/configmaps", "wendy-token").status == 200
        with open(config_file, "w") as f:
            yaml.safe_dump(_configuration(kubeconfig, with_webhook=False), f)
        wait_for(lambda: _get(server, "/api/v1/namespaces/team-a/configmaps", "wendy-token").status == 403)
    finally:
        with open(config_file, "w") as f:
            yaml.safe_dump(_configuration(kubeconfig), f)
        wait_for(lambda: _get(server, "/api/v1/namespaces/team-a/configmaps", "wendy-token").status == 200)


def _write(tmp_path, document) -> str:
    path = tmp_path / "authorization.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


def test_validation(tmp_path):
    base = {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthorizationConfiguration"}
    cases = [
        ({"authorizers": []}, "authorizers: Required value: at least one authorization mode must be defined"),
        ({"authorizers": [{"type": "RBAC", "name": "a"}, {"type": "RBAC", "name": "b"}]},
         'authorizers[1].type: Duplicate value: "RBAC"'),
        ({"authorizers": [{"type": "Magic", "name": "a"}]}, 'authorizers[0].type: Unsupported value: "Magic"'),
        ({"authorizers": [{"type": "RBAC", "name": "Not_DNS"}]}, "authorizers[0].name: Invalid value: \"Not_DNS\""),
        ({"authorizers": [{"type": "Webhook", "name": "w"}]},
         "authorizers[0].webhook: Required value: required when type=Webhook"),
        ({"authorizers": [{"type": "Webhook", "name": "w", "webhook": {
            "subjectAccessReviewVersion": "v1", "failurePolicy": "NoOpinion",
            "connectionInfo": {"type": "KubeConfigFile", "kubeConfigFile": "relative.yaml"}}}]},
         "authorizers[0].webhook.timeout: Required value"),
        ({"authorizers": [{"type": "Webhook", "name": "w", "webhook": {
            "timeout": "3s", "subjectAccessReviewVersion": "v1", "failurePolicy": "NoOpinion",
            "connectionInfo": {"type": "KubeConfigFile", "kubeConfigFile": "relative.yaml"}}}]},
         'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "relative.yaml": must be an absolute'),
        ({"authorizers": [{"type": "Webhook", "name": "w", "webhook": {
            "timeout": "3s", "subjectAccessReviewVersion": "v1", "failurePolicy": "NoOpinion",
            "matchConditionSubjectAccessReviewVersion": "v1", "connectionInfo": {"type": "InClusterConfig"},
            "matchConditions": [{"expression": "request.nope +"}]}}]},
         "authorizers[0].webhook.matchConditions[0].expression: Invalid value: \"request.nope +\": compilation failed"),
        ({"authorizers": [{"type": "RBAC", "name": "rbac", "extra": 1}]}, 'unknown field "authorizers[0].extra"'),
    ]
    for document, message in cases:
        with pytest.raises(authz_config.ConfigError) as err:
            authz_config.load_file(_write(tmp_path, {**base, **document}))
        assert message in str(err.value), (message, str(err.value))


def test_legacy_flags_are_mutually_exclusive(tmp_path):
    path = _write(tmp_path, {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthorizationConfiguration",
                             "authorizers": [{"type": "RBAC", "name": "rbac"}]})
    errors = ServerRunOptions.parse(["--data-dir", str(tmp_path), "--authorization-config", path,
                                     "--authorization-mode", "RBAC"]).complete().validate()
    assert ("--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* "
            "flags are defined") in errors
    assert not ServerRunOptions.parse(["--data-dir", str(tmp_path), "--authorization-config", path]
                                      ).complete().validate()


def test_a_file_that_is_not_yaml_is_one_line(tmp_path):
    path = tmp_path / "authorization.yaml"
    path.write_text("garbage: [\n")
    with pytest.raises(authz_config.ConfigError) as err:
        authz_config.load_file(str(path))
    assert str(err.value).startswith("error converting YAML to JSON: ") and "\n" not in str(err.value)
