"""Panic recovery: a Status error is answered as it is; the store out of reach is answered as kube-apiserver's
ErrorToAPIStatus answers an error that is not a Status (a 500 with its text, one line in the log); anything
else is a 500 InternalError with its traceback in the log."""

from __future__ import annotations

import asyncio
import json
import logging

from kube_apiserver.endpoints.http import Request, Response
from kube_apiserver.server.filters.recovery import with_panic_recovery
from kube_apiserver.storage.kv import StorageUnavailableError


def serve(exc: Exception) -> Response:
    async def failing(_req: Request) -> Response:
        raise exc

    return asyncio.run(with_panic_recovery(failing)(Request("GET", "/api/v1/namespaces/default/configmaps", b"", {})))


def test_the_store_out_of_reach_is_a_500_with_its_text_in_one_line(caplog):
    with caplog.at_level(logging.ERROR, logger="kube_apiserver"):
        resp = serve(StorageUnavailableError("etcd: failed to connect to all addresses"))
    assert resp.status == 500
    body = json.loads(resp.body)
    assert (body["kind"], body["status"], body["message"], body["code"]) == (
        "Status", "Failure", "etcd: failed to connect to all addresses", 500)
    assert "reason" not in body  # StatusReasonUnknown
    assert [(r.getMessage(), r.exc_info) for r in caplog.records] == [
        ("apiserver received an error that is not an metav1.Status: etcd: failed to connect to all addresses", None)]


def test_an_unexpected_error_is_a_500_internal_error_with_its_traceback(caplog):
    with caplog.at_level(logging.ERROR, logger="kube_apiserver"):
        resp = serve(KeyError("spec"))
    body = json.loads(resp.body)
    assert (resp.status, body["reason"]) == (500, "InternalError")
    assert len(caplog.records) == 1 and caplog.records[0].exc_info is not None
