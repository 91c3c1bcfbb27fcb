"""The webhook dispatchers with a fake webhook client: response checks, denial statuses, failure
policies, dry run, JSON patches and reinvocation, parallel validating calls."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

from kube_apiserver.admission.interfaces import Attributes
from kube_apiserver.admission.webhook import MutatingAdmissionWebhook, ValidatingAdmissionWebhook
from kube_apiserver.admission.webhook.client import CallError, ClientConfig, generic_server_response
from kube_apiserver.admission.webhook.errors import to_status_error
from kube_apiserver.admission.webhook.hooks import Hook, hooks_of
from kube_apiserver.admission.webhook.review import InvalidResponse, verify_response
from kube_apiserver.apimachinery import errors
from kube_apiserver.registry.context import UserInfo

RULES = [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]
Answer = Any


def attrs(operation: str = "CREATE", dry_run: bool = False, obj: Any = "configmap") -> Attributes:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}} if obj == "configmap" else obj
    return Attributes(operation, "", "v1", "ConfigMap", "configmaps", "", "default", "c", obj, None,
                      UserInfo("alice", groups=("dev",)), dry_run, warnings=[])


def hook(name: str, url: str, mutating: bool = False, **extra: Any) -> Hook:
    spec = {"name": name, "clientConfig": {"url": url}, "rules": RULES, "failurePolicy": "Fail",
            "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}, "sideEffects": "None",
            "timeoutSeconds": 10, "admissionReviewVersions": ["v1"], **extra}
    return hooks_of({"metadata": {"name": f"cfg-{name}"}, "webhooks": [spec]}, mutating)[0]


class FakeSource:
    def __init__(self, hooks: list[Hook]):
        self._hooks = hooks

    async def hooks(self) -> list[Hook]:
        return self._hooks


class FakeClient:
    """Answers by URL with a function of the review; records the reviews."""

    def __init__(self, answers: dict[str, Any]):
        self.answers, self.reviews = answers, []

    async def post(self, config: ClientConfig, body: bytes, timeout: int) -> Any:
        review = json.loads(body)
        self.reviews.append((config.url, review))
        answer = self.answers[config.url]
        if isinstance(answer, Exception):
            raise answer
        response = {"uid": review["request"]["uid"], "allowed": True, **answer(review)}
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


async def no_namespace(name: str) -> dict | None:
    return {"metadata": {"name": name}}


def plugin(kind: type, hooks: list[Hook], answers: dict[str, Any]) -> Any:
    p = kind(no_namespace)
    p.source, p.client = FakeSource(hooks), FakeClient(answers)
    return p


def json_patch(*ops: dict) -> dict:
    return {"patchType": "JSONPatch", "patch": base64.b64encode(json.dumps(list(ops)).encode()).decode()}


def test_verify_response_checks():
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "u", "allowed": True}}
    assert verify_response("u", "v1", False, review).allowed
    with pytest.raises(InvalidResponse, match='expected response.uid="u", got "x"'):
        verify_response("u", "v1", False, {**review, "response": {"uid": "x"}})
    with pytest.raises(InvalidResponse, match="webhook response was absent"):
        verify_response("u", "v1", False, {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})
    untyped = {"response": {"uid": "u", "allowed": True}}
    with pytest.raises(InvalidResponse, match="expected webhook response of admission.k8s.io/v1, "
                                              "Kind=AdmissionReview, got /, Kind="):
        verify_response("u", "v1", False, untyped)
    patched = {**review, "response": {"uid": "u", "allowed": True, "patch": "W10="}}
    with pytest.raises(InvalidResponse, match="validating webhook may not return response.patch"):
        verify_response("u", "v1", False, patched)
    with pytest.raises(InvalidResponse, match="webhook returned response.patch but not response.patchType"):
        verify_response("u", "v1", True, patched)
    beta = verify_response("other", "v1beta1", True, {"response": {"allowed": True, "patch": "W10="}})
    assert beta.patch == b"[]" and beta.patch_type == "JSONPatch"


def test_status_of_a_denial():
    err = to_status_error("w.example.com", {"code": 200, "message": "no"})
    assert (err.code, err.message) == (400, 'admission webhook "w.example.com" denied the request: no')
    err = to_status_error("w.example.com", {"code": 422, "reason": "Invalid"})
    assert (err.code, err.reason, err.message) == (422, "Invalid", 'admission webhook "w.example.com" denied the '
                                                                   "request: Invalid")
    assert to_status_error("w", None).message == 'admission webhook "w" denied the request without explanation'


def test_client_wording():
    config = ClientConfig(None, "ns", "svc", "/a//b/", 8443, "")
    assert config.display_url(10) == "https://svc.ns.svc:8443/a/b?timeout=10s"
    assert ClientConfig("https://h:1", "", "", "", 443, "").display_url(3) == "https://h:1/?timeout=3s"
    status = generic_server_response(500, b"boom\n", True)
    assert status.message == 'an error on the server ("boom") has prevented the request from succeeding'
    assert generic_server_response(404, b"", True).message == "the server could not find the requested resource"


def test_validating_denial_and_failure_policies():
    hooks = [hook("ok.example.com", "https://ok"), hook("ignored.example.com", "https://down", failurePolicy="Ignore"),
             hook("no.example.com", "https://no")]
    down = CallError('failed to call webhook: Post "https://down/?timeout=10s": context deadline exceeded',
                     errors.service_unavailable("x"))
    p = plugin(ValidatingAdmissionWebhook, hooks, {
        "https://ok": lambda r: {"warnings": ["w1"]}, "https://down": down,
        "https://no": lambda r: {"allowed": False, "status": {"code": 403, "message": "nope"}}})
    a = attrs()
    with pytest.raises(errors.StatusError) as err:
        asyncio.run(p.validate(a))
    assert (err.value.code, err.value.message) == (403, 'admission webhook "no.example.com" denied the request: nope')
    assert a.warnings == ["w1"] and len(p.client.reviews) == 3
    p = plugin(ValidatingAdmissionWebhook, [hook("down.example.com", "https://down")], {"https://down": down})
    with pytest.raises(errors.StatusError) as err:
        asyncio.run(p.validate(attrs()))
    assert err.value.code == 500 and err.value.message == (
        'Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post '
        '"https://down/?timeout=10s": context deadline exceeded')


def test_dry_run_needs_side_effect_free_webhooks():
    p = plugin(ValidatingAdmissionWebhook, [hook("side.example.com", "https://s", sideEffects="Some")],
               {"https://s": lambda r: {}})
    with pytest.raises(errors.StatusError) as err:
        asyncio.run(p.validate(attrs(dry_run=True)))
    assert (err.value.code, err.value.message) == (400, 'admission webhook "side.example.com" does not support dry run')
    asyncio.run(p.validate(attrs()))  # without dry run it is called


def test_request_sent():
    p = plugin(ValidatingAdmissionWebhook, [hook("rec.example.com", "https://rec")], {"https://rec": lambda r: {}})
    asyncio.run(p.validate(attrs(dry_run=True)))
    request = p.client.reviews[0][1]["request"]
    assert request["userInfo"] == {"username": "alice", "groups": ["dev"]}
    assert request["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]}
    assert request["dryRun"] is True and "subResource" not in request


def test_mutating_patch_and_reinvocation():
    hooks = [hook("first.example.com", "https://first", True, reinvocationPolicy="IfNeeded"),
             hook("second.example.com", "https://second", True)]
    answers = {"https://first": lambda r: {},
               "https://second": lambda r: json_patch({"op": "add", "path": "/data", "value": {"k": "v"}})}
    p = plugin(MutatingAdmissionWebhook, hooks, answers)
    a = attrs()
    asyncio.run(p.admit(a))
    assert a.object["data"] == {"k": "v"}
    urls = [url for url, _ in p.client.reviews]
    assert urls == ["https://first", "https://second", "https://first"]
    assert p.client.reviews[2][1]["request"]["object"]["data"] == {"k": "v"}


def test_mutating_patch_errors():
    bad = {"https://m": lambda r: json_patch({"op": "remove", "path": "/nothing"})}
    with pytest.raises(errors.StatusError) as err:
        asyncio.run(plugin(MutatingAdmissionWebhook, [hook("m.example.com", "https://m", True)], bad).admit(attrs()))
    assert err.value.code == 500 and err.value.message.startswith("Internal error occurred: ")
    delete = attrs("DELETE", obj=None)
    delete.old_object = {"metadata": {"name": "c"}}
    patching = {"https://m": lambda r: json_patch({"op": "add", "path": "/x", "value": 1})}
    with pytest.raises(errors.StatusError) as err:
        asyncio.run(plugin(MutatingAdmissionWebhook, [hook("m.example.com", "https://m", True)], patching).admit(delete))
    assert err.value.message == ('Internal error occurred: admission webhook "m.example.com" attempted to modify the '
                                 "object, which is not supported for this operation")


def test_unmatched_and_exempt_requests_call_nothing():
    p = plugin(ValidatingAdmissionWebhook, [hook("x.example.com", "https://x")], {"https://x": lambda r: {}})
    other = Attributes("CREATE", "", "v1", "Secret", "secrets", "", "default", "s", {}, None, UserInfo("u"))
    asyncio.run(p.validate(other))
    config = Attributes("CREATE", "admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration",
                        "mutatingwebhookconfigurations", "", "", "m", {}, None, UserInfo("u"))
    asyncio.run(p.validate(config))
    assert p.client.reviews == []
