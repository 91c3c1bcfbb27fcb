"""Admission and CRD conversion webhooks served from plain Python functions, for tests.

    def deny_privileged(request: dict) -> Any:
        if request["object"]["metadata"].get("labels", {}).get("privileged"):
            return deny("privileged objects are not allowed")
        return allow()

    with admission_webhook(server, deny_privileged, rules=[rule(["CREATE"], "", "v1", "configmaps")]):
        ...  # the server calls deny_privileged for every configmap created

The function runs in a thread of an HTTPS server with a generated serving certificate (SANs 127.0.0.1, ::1,
localhost) whose CA is the configuration's caBundle. Registration waits until the server applies the
configuration (a probe webhook in the same configuration answers a dry-run request), and leaving the context
unregisters it, waits until the server stops calling it, then stops the HTTPS server."""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import os
import socket
import ssl
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from .certs import LOOPBACK_SANS, CertificateAuthority, write_pair

AdmissionFunction = Callable[[dict[str, Any]], Any]  # AdmissionReview.request -> see admission_response
ConversionFunction = Callable[[dict[str, Any], str], dict[str, Any]]  # (object, desired apiVersion) -> object
Route = Callable[[Any], dict[str, Any]]

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
PROBE_LABEL = "testing.kube-apiserver.io/webhook-probe"
PROBE_NAMESPACE = "default"
MAX_REVIEW_BYTES = 64 << 20


class WebhookServer:
    """An HTTPS JSON server in a thread: POSTs to a path go to its route; what each path received is kept."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Route] = {}
        self.received: dict[str, list[Any]] = {}
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        ca = CertificateAuthority.generate("kube-apiserver-testing-webhook-ca")
        cert_pem, key_pem = ca.issue("webhook", sans=LOOPBACK_SANS)
        self.directory = tempfile.mkdtemp(prefix="webhook-")
        cert_file, key_file = write_pair(self.directory, "tls", cert_pem, key_pem)
        self.ca_pem = ca.cert_pem
        self.ca_bundle = base64.b64encode(ca.cert_pem).decode()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        self.httpd = http.server.ThreadingHTTPServer((host, 0), self._handler())
        self.httpd.daemon_threads = True
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.host, self.port = host, self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="testing-webhook")
        self._thread.start()

    def url(self, path: str) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}{path}"

    def client_config(self, path: str) -> dict[str, Any]:
        """A webhook clientConfig reaching `path` here: url and caBundle."""
        return {"url": self.url(path), "caBundle": self.ca_bundle}

    def reviews(self, path: str) -> list[Any]:
        """What `path` received so far, oldest first."""
        with self._lock:
            return list(self.received.get(path, ()))

    def count(self, path: str) -> int:
        with self._lock:
            return len(self.received.get(path, ()))

    def _record(self, path: str, body: Any) -> None:
        with self._lock:
            self.received.setdefault(path, []).append(body)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(10)
        # Kept-alive connections end now: the server's pooled connections see them closed at once rather than
        # linger until its own shutdown.
        with self._lock:
            connections, self._connections = list(self._connections), set()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        for name in os.listdir(self.directory):
            os.unlink(os.path.join(self.directory, name))
        os.rmdir(self.directory)

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 60  # an idle kept-alive connection's thread ends

            def setup(self) -> None:
                super().setup()
                with owner._lock:
                    owner._connections.add(self.connection)

            def finish(self) -> None:
                try:
                    super().finish()
                finally:
                    with owner._lock:
                        owner._connections.discard(self.connection)

            def log_message(self, *args: Any) -> None:
                pass  # a test's output stays the test's

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                path = self.path.partition("?")[0]
                route = owner.routes.get(path)
                length = int(self.headers.get("Content-Length") or 0)
                if route is None or length > MAX_REVIEW_BYTES:
                    self._send(404 if route is None else 413, b"{}")
                    return
                try:
                    body = json.loads(self.rfile.read(length))
                    owner._record(path, body)
                    self._send(200, json.dumps(route(body)).encode())
                except Exception:  # noqa: BLE001 - the test function's failure is the webhook's 500
                    self._send(500, traceback.format_exc().encode(), "text/plain")

            def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


# What an admission function returns -------------------------------------------------------------------------


def allow(warnings: list[str] | None = None) -> dict[str, Any]:
    return {"allowed": True, **({"warnings": warnings} if warnings else {})}


def deny(
    message: str, code: int = 403, reason: str = "", warnings: list[str] | None = None
) -> dict[str, Any]:
    """Refused: the server answers `admission webhook "<name>" denied the request: <message>` with `code`."""
    status: dict[str, Any] = {"code": code, "message": message}
    if reason:
        status["reason"] = reason
    return {"allowed": False, "status": status, **({"warnings": warnings} if warnings else {})}


def patch(operations: list[dict[str, Any]], warnings: list[str] | None = None) -> dict[str, Any]:
    """Allowed with a JSON patch (RFC 6902 operations) of the object: mutating webhooks only."""
    encoded = base64.b64encode(json.dumps(operations).encode()).decode()
    return {
        "allowed": True,
        "patchType": "JSONPatch",
        "patch": encoded,
        **({"warnings": warnings} if warnings else {}),
    }


def admission_response(uid: str, answer: Any) -> dict[str, Any]:
    """The AdmissionReview answering request `uid`: `answer` is allow()/deny()/patch() (or any response fields),
    None or True (allowed), False (denied), or a list of JSON patch operations."""
    if answer is None or answer is True:
        fields = allow()
    elif answer is False:
        fields = {"allowed": False}
    elif isinstance(answer, list):
        fields = patch(answer)
    elif isinstance(answer, dict):
        fields = answer
    else:
        raise TypeError(f"an admission function returns a dict, a bool, None or a JSON patch, not {answer!r}")
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {**fields, "uid": uid},
    }


def rule(
    operations: list[str], api_group: str, api_version: str, resource: str, scope: str = "*"
) -> dict[str, Any]:
    """One RuleWithOperations: rule(["CREATE", "UPDATE"], "apps", "v1", "deployments")."""
    return {
        "operations": operations,
        "apiGroups": [api_group],
        "apiVersions": [api_version],
        "resources": [resource],
        "scope": scope,
    }


# Admission webhooks -----------------------------------------------------------------------------------------


class AdmissionWebhook:
    """A registered admission webhook: `requests` are the AdmissionReview requests its function received."""

    def __init__(self, server: Any, hooks: WebhookServer, kind: str, name: str) -> None:
        self.server, self.hooks, self.kind, self.name = server, hooks, kind, name

    @property
    def collection(self) -> str:
        return f"{ADMISSION}/{self.kind.lower()}configurations"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return [review.get("request") or {} for review in self.hooks.reviews("/admit")]


def _probe_webhook(hooks: WebhookServer, name: str, token: str) -> dict[str, Any]:
    """Matches only dry-run configmaps labelled with `token`: when it is called, the server applies the
    configuration (both webhooks arrive in the same object)."""
    return {
        "name": f"probe.{name}",
        "clientConfig": hooks.client_config("/probe"),
        "rules": [rule(["CREATE"], "", "v1", "configmaps", "Namespaced")],
        "objectSelector": {"matchLabels": {PROBE_LABEL: token}},
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Ignore",
        "timeoutSeconds": 5,
    }


def _without_probes(selector: dict[str, Any] | None) -> dict[str, Any]:
    """The caller's objectSelector, excluding the probe's configmaps so its function never sees them."""
    selector = dict(selector or {})
    expressions = [*selector.get("matchExpressions", []), {"key": PROBE_LABEL, "operator": "DoesNotExist"}]
    return {**selector, "matchExpressions": expressions}


def _probe(server: Any, hooks: WebhookServer, token: str) -> bool:
    """Whether the server calls the probe webhook now (one dry-run create)."""
    before = hooks.count("/probe")
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"generateName": "webhook-probe-", "labels": {PROBE_LABEL: token}},
    }
    server.request("POST", f"/api/v1/namespaces/{PROBE_NAMESPACE}/configmaps?dryRun=All", configmap)
    return hooks.count("/probe") > before


def _wait(condition: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout}s")
        time.sleep(0.02)


@contextlib.contextmanager
def admission_webhook(
    server: Any,
    function: AdmissionFunction,
    *,
    rules: list[dict[str, Any]],
    mutating: bool = False,
    name: str = "",
    failure_policy: str = "Fail",
    namespace_selector: dict[str, Any] | None = None,
    object_selector: dict[str, Any] | None = None,
    timeout_seconds: int = 10,
    extra: dict[str, Any] | None = None,
    timeout: float = 30.0,
) -> Iterator[AdmissionWebhook]:
    """Serves `function` as a validating (or, mutating=True, mutating) webhook for `rules` and registers it;
    `extra` adds fields to the webhook (matchPolicy, matchConditions, reinvocationPolicy...). Unregisters and
    stops on exit."""
    kind = "MutatingWebhook" if mutating else "ValidatingWebhook"
    token = os.urandom(6).hex()
    name = name or f"testing-{token}.webhooks.kube-apiserver.io"
    hooks = WebhookServer()
    hooks.routes["/admit"] = lambda review: admission_response(
        review["request"]["uid"], function(review["request"])
    )
    hooks.routes["/probe"] = lambda review: admission_response(review["request"]["uid"], allow())
    webhook = {
        "name": name,
        "clientConfig": hooks.client_config("/admit"),
        "rules": rules,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": failure_policy,
        "timeoutSeconds": timeout_seconds,
        "objectSelector": _without_probes(object_selector),
        **({"namespaceSelector": namespace_selector} if namespace_selector is not None else {}),
        **(extra or {}),
    }
    registered = AdmissionWebhook(server, hooks, kind, name)
    config = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": f"{kind}Configuration",
        "metadata": {"name": name},
        "webhooks": [webhook, _probe_webhook(hooks, name, token)],
    }
    try:
        _expect(server.request("POST", registered.collection, config), 201, f"register {name}")
        _wait(lambda: _probe(server, hooks, token), f"the server did not call webhook {name}", timeout)
        yield registered
    finally:
        _unregister(server, registered, token, timeout)


def _unregister(server: Any, registered: AdmissionWebhook, token: str, timeout: float) -> None:
    try:
        resp = server.request("DELETE", f"{registered.collection}/{registered.name}")
        if resp.status == 200:
            _wait(
                lambda: not _probe(server, registered.hooks, token),
                "the server still calls the webhook",
                timeout,
            )
    finally:
        registered.hooks.stop()


def _expect(resp: Any, status: int, what: str) -> None:
    if resp.status != status:
        raise RuntimeError(f"{what}: {resp.status} {resp.body!r}")


# CRD conversion webhooks ------------------------------------------------------------------------------------


class ConversionWebhook:
    """A conversion webhook: `conversion` is the CRD's spec.conversion reaching it; `reviews` what it received."""

    def __init__(self, hooks: WebhookServer, review_versions: list[str]) -> None:
        self.hooks = hooks
        self.conversion = {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": hooks.client_config("/convert"),
                "conversionReviewVersions": review_versions,
            },
        }

    @property
    def reviews(self) -> list[dict[str, Any]]:
        return self.hooks.reviews("/convert")


def conversion_response(review: dict[str, Any], convert: ConversionFunction) -> dict[str, Any]:
    """The ConversionReview answering `review`: each object converted by `convert` (apiVersion set to the
    desired one when it does not); an exception is a Failure with its message."""
    request = review.get("request") or {}
    desired = request.get("desiredAPIVersion", "")
    response: dict[str, Any] = {"uid": request.get("uid", "")}
    try:
        converted = [{**convert(obj, desired), "apiVersion": desired} for obj in request.get("objects") or []]
        response.update(result={"status": "Success"}, convertedObjects=converted)
    except Exception as err:  # noqa: BLE001 - the test function's failure is the review's Failure
        response["result"] = {"status": "Failure", "message": str(err) or type(err).__name__}
    return {
        "apiVersion": review.get("apiVersion", "apiextensions.k8s.io/v1"),
        "kind": "ConversionReview",
        "response": response,
    }


@contextlib.contextmanager
def conversion_webhook(
    server: Any, convert: ConversionFunction, *, crd: str = "", review_versions: list[str] | None = None
) -> Iterator[ConversionWebhook]:
    """Serves `convert(object, desired_api_version) -> object` as a CRD conversion webhook. With `crd` (a CRD's
    name) it sets that CRD's spec.conversion to it, and back to the None strategy on exit; without, put
    `hook.conversion` in the CRD you create."""
    hooks = WebhookServer()
    hooks.routes["/convert"] = lambda review: conversion_response(review, convert)
    webhook = ConversionWebhook(hooks, review_versions or ["v1"])
    merge = {"Content-Type": "application/merge-patch+json"}
    try:
        if crd:
            resp = server.request(
                "PATCH", f"{CRDS}/{crd}", {"spec": {"conversion": webhook.conversion}}, merge
            )
            _expect(resp, 200, f"set the conversion of {crd}")
        yield webhook
    finally:
        try:
            if crd:
                server.request(
                    "PATCH",
                    f"{CRDS}/{crd}",
                    {"spec": {"conversion": {"strategy": "None", "webhook": None}}},
                    merge,
                )
        finally:
            hooks.stop()
