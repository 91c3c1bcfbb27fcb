"""WithPriorityAndFairness (k8s.io/apiserver pkg/server/filters/priority-and-fairness.go): each request is
classified by the FlowSchemas and waits in its priority level's queues for a seat; rejected, it is answered
429 with Retry-After. Long-running requests other than watches pass untracked; a watch holds its seat only
while it starts (until its handler has answered with the stream). Every classified response names the
UIDs of its FlowSchema and PriorityLevelConfiguration in the X-Kubernetes-PF-* headers."""

from __future__ import annotations

from collections.abc import Callable

from ...apimachinery import errors
from ...endpoints.handlers.responses import write_status_error
from ...endpoints.http import Handler, Request, Response
from ...flowcontrol.controller import Admission, Controller
from ...flowcontrol.request import list_seats
from ...flowcontrol.rule import RequestDigest
from .maxinflight import too_many_requests
from .timeout import is_long_running

FLOW_SCHEMA_UID_HEADER = "x-kubernetes-pf-flowschema-uid"
PRIORITY_LEVEL_UID_HEADER = "x-kubernetes-pf-prioritylevel-uid"


def request_digest(req: Request) -> RequestDigest:
    info, user = req.info, req.user
    assert info is not None, "request info runs before flow control"
    return RequestDigest(
        user_name=user.name if user is not None else "",
        groups=tuple(user.groups) if user is not None else (),
        is_resource_request=info.is_resource_request,
        verb=info.verb,
        path="" if info.is_resource_request else info.path,  # an object's name must not make a new digest
        api_group=info.api_group,
        namespace=info.namespace,
        resource=info.resource,
        subresource=info.subresource,
    )


def _with_headers(resp: Response, admission: Admission) -> Response:
    resp.headers.append((PRIORITY_LEVEL_UID_HEADER, admission.priority_level_uid))
    resp.headers.append((FLOW_SCHEMA_UID_HEADER, admission.flow_schema_uid))
    return resp


def _seat_estimator(req: Request, controller: Controller) -> Callable[[int], int] | None:
    """A list's (or a watch-list's) seats, from the stored object count; other requests take one."""
    info, count = req.info, controller.object_count
    if info is None or count is None or info.verb not in ("list", "watch"):
        return None
    return lambda level_max: list_seats(info.verb, info.api_group, info.resource, req.query, level_max, count)


def with_priority_and_fairness(handler: Handler, controller: Controller) -> Handler:
    async def flow_controlled(req: Request) -> Response:
        is_watch = req.info is not None and req.info.verb == "watch"
        if req.info is None or (is_long_running(req) and not is_watch):
            return await handler(req)
        admission = await controller.admit(request_digest(req), _seat_estimator(req, controller))
        if admission.seat is None:
            return _with_headers(too_many_requests(str(admission.retry_after)), admission)
        try:
            resp = await handler(req)
        except errors.StatusError as err:
            resp = write_status_error(req, err)
        finally:
            # A streamed body (a watch's events) is sent after the seat is given back: a watch holds its
            # seat while it starts, as upstream; nothing can keep a seat once its handler has answered.
            controller.finish(admission)
        return _with_headers(resp, admission)

    return flow_controlled
