"""GET one object, or LIST a collection (k8s handlers.GetResource, ListResource)."""

from __future__ import annotations

from ...apimachinery import errors, field, fields
from ...apimachinery.gostrconv import quote
from ...registry.options import ListQuery
from ..http import Request, Response
from .responses import write_list, write_object
from .scope import RequestScope


async def get(scope: RequestScope, req: Request) -> Response:
    ctx = scope.context(req)
    obj = await scope.storage.get(ctx, req.info.name, {})
    return write_object(req, scope, 200, obj)


def int_param(req: Request, name: str) -> int | None:
    """An int64 query parameter as Kubernetes converts it (strconv.ParseInt(value, 10, 64)): absent is None;
    anything else that is not a decimal int64, even an empty value, is a 400 with Go's error."""
    if name not in req.query:
        return None
    value = req.param(name)
    digits = value[1:] if value[:1] in ("+", "-") else value
    if not (digits.isascii() and digits.isdigit()):
        raise errors.bad_request(f"strconv.ParseInt: parsing {quote(value)}: invalid syntax")
    number = int(value)
    if not -(1 << 63) <= number < 1 << 63:
        raise errors.bad_request(f"strconv.ParseInt: parsing {quote(value)}: value out of range")
    return number


def bool_param(req: Request, name: str) -> bool | None:
    """A boolean query parameter as Kubernetes converts it: absent is None; "0" and "false" (any case) are
    false; anything else, even an empty value, is true."""
    if name not in req.query:
        return None
    value = req.param(name)
    return not (value == "0" or value.lower() == "false")


def list_query(req: Request, watch: bool = False) -> ListQuery:
    query = ListQuery(req.param("labelSelector"), req.param("fieldSelector"), req.param("resourceVersion"),
                      req.param("resourceVersionMatch"), int_param(req, "limit") or 0, req.param("continue"),
                      int_param(req, "timeoutSeconds"), bool(bool_param(req, "allowWatchBookmarks")),
                      bool_param(req, "sendInitialEvents"))
    _select_path_name(req, query)
    errs = _watch_errors(query) if watch else _list_errors(query)
    if errs:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", errs)
    if query.continue_token and query.resource_version not in ("", "0"):
        raise errors.bad_request("specifying resource version is not allowed when using continue")
    if query.resource_version:
        _check_resource_version(query.resource_version)
    return query


def _select_path_name(req: Request, query: ListQuery) -> None:
    """A list or watch whose request names an object (/watch/namespaces/ns/pods/p, or the metadata.name
    field selector request info took the name from) selects that object only (ListResource's name
    selector); a field selector naming another is refused."""
    name = req.info.name if req.info is not None else ""
    if not name:
        return
    if not query.field_selector:
        query.field_selector = f"metadata.name={fields.escape_value(name)}"
        return
    try:
        selected = fields.parse_field_selector(query.field_selector).requires_exact_match("metadata.name")
    except ValueError:
        return  # the storage answers the selector's own error
    if selected != name:
        raise errors.bad_request("fieldSelector metadata.name doesn't match requested name")


def _check_resource_version(rv: str) -> None:
    """storage.ValidateListOptions: the resourceVersion must parse as a uint64 (APIObjectVersioner)."""
    if not (rv.isascii() and rv.isdigit()):
        problem = "invalid syntax"
    elif int(rv) >= 1 << 64:
        problem = "value out of range"
    else:
        return
    raise errors.bad_request(f"invalid resource version: resourceVersion: Invalid value: {quote(rv)}: "
                             f"strconv.ParseUint: parsing {quote(rv)}: {problem}")


MATCH = field.Path("resourceVersionMatch")


def _list_errors(q: ListQuery) -> field.ErrorList:
    """metainternalversion validation.ValidateListOptions, for a list."""
    errs: field.ErrorList = []
    match = q.resource_version_match
    if match:
        if not q.resource_version:
            errs.append(field.forbidden(MATCH, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if q.continue_token:
            errs.append(field.forbidden(MATCH, "resourceVersionMatch is forbidden when continue is provided"))
        if match not in ("Exact", "NotOlderThan"):
            errs.append(field.not_supported(MATCH, match, ["Exact", "NotOlderThan", ""]))
        if match == "Exact" and q.resource_version == "0":
            errs.append(field.forbidden(MATCH, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if q.send_initial_events is not None:
        errs.append(field.forbidden(field.Path("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
    return errs


def _watch_errors(q: ListQuery) -> field.ErrorList:
    """metainternalversion validation.ValidateListOptions, for a watch (the WatchList feature is on)."""
    errs: field.ErrorList = []
    match = q.resource_version_match
    if q.send_initial_events is not None and match != "NotOlderThan":
        errs.append(field.forbidden(MATCH, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
    if match:
        if q.send_initial_events is None:
            errs.append(field.forbidden(MATCH, "resourceVersionMatch is forbidden for watch unless sendInitialEvents "
                                               "is provided"))
        if match != "NotOlderThan":
            errs.append(field.not_supported(MATCH, match, ["NotOlderThan"]))
        if q.continue_token:
            errs.append(field.forbidden(MATCH, "resourceVersionMatch is forbidden when continue is provided"))
    return errs


async def list_(scope: RequestScope, req: Request) -> Response:
    ctx = scope.context(req)
    query = list_query(req)
    result = await scope.storage.list(ctx, query)
    return await write_list(req, scope, 200, result)
