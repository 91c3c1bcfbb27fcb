"""GET one object, or LIST a collection (k8s handlers.GetResource, ListResource)."""

from __future__ import annotations

from ...apimachinery import errors
from ...registry.options import ListQuery
from ..http import Request, Response
from .responses import write_object
from .scope import RequestScope


async def get(scope: RequestScope, req: Request) -> Response:
    ctx = scope.context(req)
    obj = await scope.storage.get(ctx, req.info.name, {})
    return write_object(req, scope, 200, obj)


def _int_param(req: Request, name: str) -> int | None:
    value = req.param(name)
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f'invalid value for {name}: strconv.ParseInt: parsing "{value}": invalid syntax'
                                 ) from None


def _bool_param(req: Request, name: str) -> bool | None:
    value = req.param(name)
    if value == "":
        return None if name not in req.query else True
    return value.lower() in ("true", "1")


def list_query(req: Request) -> ListQuery:
    query = ListQuery(req.param("labelSelector"), req.param("fieldSelector"), req.param("resourceVersion"),
                      req.param("resourceVersionMatch"), _int_param(req, "limit") or 0, req.param("continue"),
                      _int_param(req, "timeoutSeconds"), bool(_bool_param(req, "allowWatchBookmarks")),
                      _bool_param(req, "sendInitialEvents"))
    _validate_list_query(query)
    return query


def _validate_list_query(q: ListQuery) -> None:
    """metainternalversion validation.ValidateListOptions (the common cases)."""
    if q.continue_token and q.resource_version not in ("", "0"):
        raise errors.StatusError(422, "Invalid", 'ListOptions.meta.k8s.io "" is invalid: resourceVersion: '
                                 'Forbidden: specifying resource version is not allowed when using continue',
                                 {"group": "meta.k8s.io", "kind": "ListOptions", "causes": [{
                                     "reason": "FieldValueForbidden", "field": "resourceVersion",
                                     "message": "Forbidden: specifying resource version is not allowed when "
                                                "using continue"}]})
    if q.resource_version:
        try:
            if int(q.resource_version) < 0:
                raise ValueError
        except ValueError:
            raise errors.bad_request(f'invalid resource version: "{q.resource_version}"') from None
    if q.resource_version_match not in ("", "NotOlderThan", "Exact"):
        raise errors.bad_request(f'resourceVersionMatch: Unsupported value: "{q.resource_version_match}": '
                                 'supported values: "Exact", "NotOlderThan"')
    if q.resource_version_match and not q.resource_version:
        raise errors.bad_request("resourceVersionMatch is forbidden unless resourceVersion is provided")
    if q.resource_version_match == "Exact" and q.resource_version == "0":
        raise errors.bad_request("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"")


async def list_(scope: RequestScope, req: Request) -> Response:
    ctx = scope.context(req)
    query = list_query(req)
    result = await scope.storage.list(ctx, query)
    return write_object(req, scope, 200, result)
