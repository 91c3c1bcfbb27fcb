"""Audit filters (k8s.io/apiserver pkg/endpoints/filters: audit_init.go, audit.go, authn_audit.go).

with_audit_init (outermost, always on): every response carries an Audit-Id header, the caller's own if it
sent one. with_audit (after authentication) and with_failed_authentication_audit (around authentication)
exist only when both a policy and a backend are configured; otherwise the chain does not contain them."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from typing import Any, Protocol

from ...apimachinery import errors
from ...audit import (
    HEADER_AUDIT_ID,
    LEVEL_NONE,
    LEVEL_REQUEST_RESPONSE,
    STAGE_PANIC,
    STAGE_REQUEST_RECEIVED,
    STAGE_RESPONSE_COMPLETE,
    STAGE_RESPONSE_STARTED,
)
from ...audit.event import CONTEXT_KEY, AuditContext, Sink, decode_body, user_json
from ...endpoints.http import Handler, Request, Response, StreamingResponse
from .timeout import is_long_running

AUDIT_ID_KEY = "audit-id"  # Request.values: the request's audit ID and when it was received
RECEIVED_KEY = "audit-received"
IMPERSONATED_USER_KEY = "impersonated_user"


class PolicyRuleEvaluator(Protocol):
    def evaluate(self, user: Any, info: Any) -> Any: ...


AuditBackend = Sink


def new_audit_id() -> str:
    """A random (version 4) UUID, as uuid.New(); half the cost of str(uuid.uuid4()), paid on every request."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40
    raw[8] = raw[8] & 0x3F | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def with_audit_init(handler: Handler) -> Handler:
    """WithAuditInit: the audit ID is chosen before anything else can answer, and echoed on the response
    unless a proxied answer already carries one (an aggregated server's)."""
    async def init(req: Request) -> Response:
        audit_id = req.headers.get(HEADER_AUDIT_ID) or new_audit_id()
        req.values[AUDIT_ID_KEY] = audit_id
        req.values[RECEIVED_KEY] = time.time()
        resp = await handler(req)
        if not any(name.lower() == HEADER_AUDIT_ID for name, _ in resp.headers):
            resp.headers.append(("Audit-Id", audit_id))
        return resp
    return init


def new_context(req: Request, policy: PolicyRuleEvaluator, sink: Sink) -> AuditContext | None:
    """evaluatePolicyAndCreateAuditEvent: the request's level; None when it is not audited."""
    config = policy.evaluate(req.user, req.info)
    if config.level == LEVEL_NONE:
        return None
    values = req.values
    ac = AuditContext(config, sink, values.get(AUDIT_ID_KEY) or new_audit_id(),
                      values.get(RECEIVED_KEY) or time.time())
    ac.log_request_metadata(req)
    values[CONTEXT_KEY] = ac
    return ac


def with_audit(handler: Handler, sink: Sink | None, policy: PolicyRuleEvaluator | None) -> Handler:
    if sink is None or policy is None:
        return handler

    async def auditing(req: Request) -> Response:
        ac = new_context(req, policy, sink)
        if ac is None:
            return await handler(req)
        if not ac.process(STAGE_REQUEST_RECEIVED, time.time()):
            raise errors.internal_error(Exception("failed to store audit event"))
        long_running = is_long_running(req)
        try:
            resp = await handler(req)
        except errors.StatusError as err:
            _log_request(ac, req)
            ac.log_response_status(err.status())
            _respond(ac, long_running)
            raise
        except asyncio.CancelledError:
            # Nothing was answered (the client left, or the timeout filter gave up on the request).
            _log_request(ac, req)
            if ac.response_status is None:
                ac.response_status = {"metadata": {}, "status": "Success", "message": "Connection closed early",
                                      "code": 200}
            _respond(ac, long_running)
            raise
        except Exception as err:
            _log_request(ac, req)
            ac.response_status = {"metadata": {}, "status": "Failure", "message": f"APIServer panic'd: {err}",
                                  "reason": "InternalError", "code": 500}
            ac.process(STAGE_PANIC, time.time())
            raise
        _log_request(ac, req)
        _log_response(ac, resp)
        if isinstance(resp, StreamingResponse):
            if long_running:
                ac.process(STAGE_RESPONSE_STARTED, time.time())
            resp.chunks = _complete_when_done(resp.chunks, ac)
            return resp
        _respond(ac, long_running)
        return resp
    return auditing


def _respond(ac: AuditContext, long_running: bool) -> None:
    """The response is written whole: ResponseStarted first for a long-running request, then Complete."""
    now = time.time()
    if long_running:
        ac.process(STAGE_RESPONSE_STARTED, now)
    ac.process(STAGE_RESPONSE_COMPLETE, now)


async def _complete_when_done(chunks: AsyncIterator[bytes], ac: AuditContext) -> AsyncIterator[bytes]:
    """A watch's ResponseComplete is sent when its stream ends, however it ends."""
    try:
        async for chunk in chunks:
            yield chunk
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
        ac.process(STAGE_RESPONSE_COMPLETE, time.time())


def _log_request(ac: AuditContext, req: Request) -> None:
    # The body as far as the handler read it; a request refused before that has none to record.
    ac.log_request_object(req._body, req.headers.get("content-type", ""))
    impersonated = req.values.get(IMPERSONATED_USER_KEY)  # set by the impersonation filter
    if impersonated is not None:
        ac.impersonated_user = user_json(impersonated)


def _log_response(ac: AuditContext, resp: Response) -> None:
    _log_response_body(ac, resp)
    # After the body, as kube-apiserver's response writer records the code after the handler logged its
    # object: a Status without a code (a delete's Success) is audited with the response's code.
    ac.set_code(resp.status)


def _log_response_body(ac: AuditContext, resp: Response) -> None:
    if isinstance(resp, StreamingResponse) or not resp.body:
        return
    content_type = next((v for k, v in resp.headers if k.lower() == "content-type"), "")
    # A Status answer (a delete's, or an error a handler wrote) fills responseStatus at every level.
    if resp.body.startswith(b'{"kind":"Status"'):
        status = decode_body(resp.body, content_type)
        if isinstance(status, dict):
            ac.log_response_status(status)
            return
    if ac.at_least(LEVEL_REQUEST_RESPONSE):
        obj = decode_body(resp.body, content_type)
        if obj is not None:
            ac.log_response_object(obj)


def with_failed_authentication_audit(handler: Handler, sink: Sink | None,
                                     policy: PolicyRuleEvaluator | None) -> Handler:
    """WithFailedAuthenticationAudit: a 401 is audited (no user) as a ResponseStarted event whose status
    message names the credentials that were tried."""
    if sink is None or policy is None:
        return handler

    async def auditing_failures(req: Request) -> Response:
        methods = _auth_methods(req)  # before authentication drops the credential
        try:
            return await handler(req)
        except errors.StatusError as err:
            if err.code != 401 or req.user is not None:
                raise
            ac = new_context(req, policy, sink)
            if ac is not None:
                ac.response_status = {"metadata": {}, "message": methods, "code": 401}
                ac.process(STAGE_RESPONSE_STARTED, time.time())
            raise
    return auditing_failures


def _auth_methods(req: Request) -> str:
    methods = []
    auth = req.headers.get("authorization", "").strip()
    if auth[:6].lower() == "basic ":
        methods.append("basic")
    parts = auth.split(" ")
    if len(parts) > 1 and parts[0].lower() == "bearer":
        methods.append("bearer")
    if req.param("access_token").strip():
        methods.append("access_token")
    if req.client_cert:
        methods.append("x509")
    if methods:
        return "Authentication failed, attempted: " + ", ".join(methods)
    return "Authentication failed, no credentials provided"


DECISION_ANNOTATION = "authorization.k8s.io/decision"
REASON_ANNOTATION = "authorization.k8s.io/reason"


def annotate_authorization(req: Request, allowed: bool, reason: str) -> None:
    """The authorizer's decision and reason on the request's event (one dict lookup when not audited)."""
    ac = req.values.get(CONTEXT_KEY)
    if ac is not None:
        ac.add_annotation(DECISION_ANNOTATION, "allow" if allowed else "forbid")
        ac.add_annotation(REASON_ANNOTATION, reason)
