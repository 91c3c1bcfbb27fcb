"""Impersonation (k8s.io/apiserver pkg/endpoints/filters/impersonation.go): the Impersonate-* headers
switch the request's user, once the authenticated user has been allowed to `impersonate` each part
of the new identity. Runs after authentication and audit, before authorization."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from urllib.parse import unquote

from ...apimachinery import errors
from ...apimachinery.validation import is_dns1123_label, is_dns1123_subdomain
from ...audit.event import CONTEXT_KEY, user_json
from ...authorization.authorizer import ALLOW, NO_OPINION, Attributes, AuthorizationError, Authorizer
from ...endpoints.http import Handler, Request, Response, text
from ...registry.context import UserInfo
from ...serviceaccount.util import USERNAME_PREFIX, make_group_names, make_username
from .authorization import forbidden_message

log = logging.getLogger("kube_apiserver.impersonation")

USER_HEADER = "impersonate-user"
UID_HEADER = "impersonate-uid"
GROUP_HEADER = "impersonate-group"
EXTRA_PREFIX = "impersonate-extra-"
AUTHENTICATION_V1 = "authentication.k8s.io/v1"
ANONYMOUS = "system:anonymous"
ALL_AUTHENTICATED = "system:authenticated"
ALL_UNAUTHENTICATED = "system:unauthenticated"

# Repeated header lines arrive joined with ", " (endpoints/http.Request), so list-valued headers
# are split back on it; a group or extra value that itself holds ", " cannot be told apart.
_LIST_SEPARATOR = ", "
_BAD_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")
# responsewriters' sanitizer: nothing in an error may look like HTML.
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


@dataclass(frozen=True, slots=True)
class ImpersonationRequest:
    """One thing to impersonate, as upstream's v1.ObjectReference (FieldPath holds the extra key)."""

    kind: str
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""

    def go_string(self) -> str:
        """%v of the ObjectReference: its seven fields, space separated, in braces."""
        return "{" + " ".join((self.kind, self.namespace, self.name, "", self.api_version, "", self.field_path)) + "}"


class ImpersonationError(ValueError):
    pass


def split_service_account(username: str) -> tuple[str, str] | None:
    """(namespace, name) of a service account user name, or None (serviceaccount.SplitUsername)."""
    if not username.startswith(USERNAME_PREFIX):
        return None
    parts = username[len(USERNAME_PREFIX):].split(":")
    if len(parts) != 2 or is_dns1123_label(parts[0]) or is_dns1123_subdomain(parts[1]):
        return None
    return parts[0], parts[1]


def unescape_extra_key(encoded: str) -> str:
    # url.PathUnescape; a malformed key is still recorded, as it came.
    return encoded if _BAD_ESCAPE.search(encoded) else unquote(encoded)


def build_impersonation_requests(headers: dict[str, str]) -> list[ImpersonationRequest]:
    """Everything the headers ask to impersonate: the user, then groups, extras and the UID."""
    requests: list[ImpersonationRequest] = []
    requested_user = headers.get(USER_HEADER, "")
    if requested_user:
        sa = split_service_account(requested_user)
        requests.append(ImpersonationRequest("ServiceAccount", sa[1], sa[0]) if sa
                        else ImpersonationRequest("User", requested_user))
    groups = headers[GROUP_HEADER].split(_LIST_SEPARATOR) if GROUP_HEADER in headers else []
    requests.extend(ImpersonationRequest("Group", group) for group in groups)
    has_extra = False
    for header, values in headers.items():
        if not header.startswith(EXTRA_PREFIX):
            continue
        has_extra = True
        key = unescape_extra_key(header[len(EXTRA_PREFIX):])
        requests.extend(ImpersonationRequest("UserExtra", value, api_version=AUTHENTICATION_V1, field_path=key)
                        for value in values.split(_LIST_SEPARATOR))
    uid = headers.get(UID_HEADER, "")
    if uid:
        requests.append(ImpersonationRequest("UID", uid, api_version=AUTHENTICATION_V1))
    if (groups or has_extra or uid) and not requested_user:
        listed = " ".join(r.go_string() for r in requests)
        raise ImpersonationError(f"requested [{listed}] without impersonating a user")
    return requests


@dataclass
class _Identity:
    """The user being assembled while each part is authorized."""

    name: str = ""
    uid: str = ""
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None

    def user(self) -> UserInfo:
        groups = list(self.groups or [])
        if self.name != ANONYMOUS:
            # system:authenticated unless the request already named either of the two.
            if ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
                groups.append(ALL_AUTHENTICATED)
        elif ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_UNAUTHENTICATED)
        return UserInfo(self.name, self.uid, tuple(groups), dict(self.extra or {}))


def _acting_as(requestor: UserInfo, r: ImpersonationRequest, identity: _Identity,
               groups_specified: bool) -> Attributes:
    """The impersonate check for one request; records its part of the new identity on the way."""
    group, _, version = r.api_version.rpartition("/")
    resource, subresource = "", ""
    if r.kind == "ServiceAccount":
        resource, identity.name = "serviceaccounts", make_username(r.namespace, r.name)
        if not groups_specified:
            # A service account's groups are a fixed mapping of its namespace.
            identity.groups = list(make_group_names(r.namespace))
    elif r.kind == "User":
        resource, identity.name = "users", r.name
    elif r.kind == "Group":
        resource = "groups"
        identity.groups = [*(identity.groups or []), r.name]
    elif r.kind == "UserExtra":
        resource, subresource = "userextras", r.field_path
        identity.extra = identity.extra or {}
        identity.extra.setdefault(r.field_path, []).append(r.name)
    elif r.kind == "UID":
        resource, identity.uid = "uids", r.name
    return Attributes(requestor, "impersonate", True, namespace=r.namespace, api_group=group,
                      api_version=version, resource=resource, subresource=subresource, name=r.name)


def _forbidden(attrs: Attributes, reason: str) -> errors.StatusError:
    message = forbidden_message(attrs).translate(_HTML) + (f": {reason}" if reason else "")
    return errors.forbidden(attrs.resource, attrs.api_group, attrs.name, message)


def _internal_error(req: Request, err: Exception) -> Response:
    """responsewriters.InternalError: plain text, the request URI quoted."""
    uri = req.path + (f"?{req.query_string.decode('latin-1')}" if req.query_string else "")
    quoted = '"' + uri.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text(500, f"Internal Server Error: {quoted}: {err}".translate(_HTML) + "\n")


def _strip_headers(headers: dict[str, str]) -> None:
    for header in [h for h in headers if h in (USER_HEADER, GROUP_HEADER, UID_HEADER) or h.startswith(EXTRA_PREFIX)]:
        del headers[header]


def _describe(user: UserInfo | None) -> str:
    """userString: name[group,group]."""
    if user is None:
        return "<none>"
    return (user.name or "<empty>") + (f"[{','.join(user.groups)}]" if user.groups else "")


def _log_impersonated_user(req: Request) -> None:
    """audit.LogImpersonatedUser: the event's impersonatedUser; its user stays the authenticated one."""
    ac = req.values.get(CONTEXT_KEY)
    if ac is not None:
        ac.impersonated_user = user_json(req.user)


def with_impersonation(handler: Handler, authorizer: Authorizer) -> Handler:
    async def impersonating(req: Request) -> Response:
        try:
            requests = build_impersonation_requests(req.headers)
        except ImpersonationError as err:
            log.debug("%s", err)
            return _internal_error(req, err)
        if not requests:
            return await handler(req)
        requestor: UserInfo | None = req.user
        if requestor is None:
            return _internal_error(req, RuntimeError("no user found for request"))
        # Groups named in the request are the authority, even for a service account.
        identity, groups_specified = _Identity(), GROUP_HEADER in req.headers
        for r in requests:
            attrs = _acting_as(requestor, r, identity, groups_specified)
            try:
                decision, reason = await authorizer.authorize(attrs)
            except AuthorizationError as err:  # upstream: an error is a refusal to impersonate
                decision, reason = NO_OPINION, str(err)
            if decision != ALLOW:
                log.debug("Forbidden: %s %s: %s", req.method, req.path, reason)
                raise _forbidden(attrs, reason)
        req.user = identity.user()
        log.debug("%s is impersonating %s", _describe(requestor), _describe(req.user))
        _log_impersonated_user(req)
        _strip_headers(req.headers)
        return await handler(req)
    return impersonating
