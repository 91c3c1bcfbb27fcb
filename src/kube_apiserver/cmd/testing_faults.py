"""/debug/testing/faults and /debug/testing/requests (--enable-testing-endpoints): the server's fault rules and
its request history, installed in the handler chain (after impersonation) only when testing endpoints are
enabled. Requests to /debug/testing/ are neither recorded nor faulted.

  GET    /debug/testing/faults          the rules          POST /debug/testing/faults   add one (201)
  DELETE /debug/testing/faults          remove them all    GET|DELETE /debug/testing/faults/<id>
  GET    /debug/testing/requests?user=&verb=&group=&version=&resource=&subresource=&namespace=&name=&since=&limit=
  DELETE /debug/testing/requests        forget them"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..apimachinery import errors, serializer
from ..endpoints.http import Handler, Request, Response
from ..server.filters.faults import FaultInjector, RuleError, with_fault_injection
from ..server.filters.history import FILTER_FIELDS, RequestHistory, with_request_history
from ..storage.faults import install_write_faults

if TYPE_CHECKING:
    from ..server.generic_api_server import GenericAPIServer
    from .server import ServerConfig

FAULTS_PATH = "/debug/testing/faults"
REQUESTS_PATH = "/debug/testing/requests"
EXEMPT_PREFIX = "/debug/testing/"
MAX_RULE_BYTES = 64 << 10


def install_faults_and_history(config: ServerConfig, server: GenericAPIServer) -> None:
    injector, history = FaultInjector(), RequestHistory()

    def testing_filters(handler: Handler) -> Handler:
        # History outside, so what a fault answers is recorded too.
        return with_request_history(
            with_fault_injection(handler, injector, EXEMPT_PREFIX), history, EXEMPT_PREFIX
        )

    config.generic.config.testing_filters = testing_filters
    server.handler.rebuild_handler_chain()
    factory = config.extra.storage
    install_write_faults([factory.store, *factory.overrides.values()])
    mux = server.handler.non_restful_mux
    mux.handle_unlisted(FAULTS_PATH, _faults_handler(injector))
    mux.handle_prefix(FAULTS_PATH + "/", _fault_handler(injector))
    mux.unlisted.add(FAULTS_PATH + "/")
    mux.handle_unlisted(REQUESTS_PATH, _requests_handler(history))


def _json(status: int, body: dict[str, Any]) -> Response:
    return Response(status, serializer.encode_json(body))


def _status(err: errors.StatusError) -> Response:
    return _json(err.code, err.status())


def _methods(**handlers: Callable[[Request], Any]) -> Handler:
    """One handler per HTTP method; others are 405."""

    async def serve(req: Request) -> Response:
        handler = handlers.get(req.method.lower())
        if handler is None:
            return _status(errors.method_not_allowed())
        try:
            return await handler(req)
        except errors.StatusError as err:
            return _status(err)

    return serve


def _faults_handler(injector: FaultInjector) -> Handler:
    async def list_rules(req: Request) -> Response:
        return _json(200, {"kind": "FaultRuleList", "items": [r.to_dict() for r in injector.rules.values()]})

    async def add_rule(req: Request) -> Response:
        raw = await req.body(MAX_RULE_BYTES)
        try:
            body = json.loads(raw or b"null")
        except ValueError as err:
            raise errors.bad_request(f"the fault rule is not JSON: {err}") from None
        try:
            rule = injector.add(body)
        except RuleError as err:
            raise errors.bad_request(f"invalid fault rule: {err}") from None
        return _json(201, rule.to_dict())

    async def clear(req: Request) -> Response:
        injector.clear()
        return _json(200, errors.success_status())

    return _methods(get=list_rules, post=add_rule, delete=clear)


def _fault_handler(injector: FaultInjector) -> Handler:
    def rule_id(req: Request) -> str:
        rid = req.path[len(FAULTS_PATH) + 1 :]
        if rid not in injector.rules:
            raise errors.StatusError(404, "NotFound", f'fault rule "{rid}" not found', {"name": rid})
        return rid

    async def get(req: Request) -> Response:
        return _json(200, injector.rules[rule_id(req)].to_dict())

    async def delete(req: Request) -> Response:
        injector.remove(rule_id(req))
        return _json(200, errors.success_status({"name": req.path[len(FAULTS_PATH) + 1 :]}))

    return _methods(get=get, delete=delete)


def _integer_param(req: Request, name: str) -> int:
    value = req.param(name, "0")
    if not value.isdigit():
        raise errors.bad_request(f"{name}: must be a non-negative integer, not {value!r}")
    return int(value)


def _requests_handler(history: RequestHistory) -> Handler:
    async def query(req: Request) -> Response:
        unknown = sorted(set(req.query) - {*FILTER_FIELDS, "since", "limit"})
        if unknown:
            raise errors.bad_request(
                f"unknown parameters: {', '.join(unknown)}; filters are "
                f"{', '.join(FILTER_FIELDS)}, since and limit"
            )
        wanted = {name: req.param(name) for name in FILTER_FIELDS if name in req.query}
        found = history.query(_integer_param(req, "since"), _integer_param(req, "limit"), **wanted)
        return _json(
            200,
            {
                "kind": "RequestHistory",
                "lastSequence": history.last_sequence,
                "items": [r.to_dict() for r in found],
            },
        )

    async def clear(req: Request) -> Response:
        history.clear()
        return _json(200, errors.success_status())

    return _methods(get=query, delete=clear)
