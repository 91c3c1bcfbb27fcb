"""Authorization: may this user do this? A refusal is 403 Forbidden worded as Kubernetes words it."""

from __future__ import annotations

from ...apimachinery import errors
from ...authorization.authorizer import ALLOW, Attributes, AuthorizationError, Authorizer
from ...endpoints.http import Handler, Request, Response
from .audit import annotate_authorization

SELECTOR_VERBS = frozenset({"list", "watch", "deletecollection"})


def attributes_of(req: Request) -> Attributes:
    info = req.info
    selector = req.param("fieldSelector") if info.verb in SELECTOR_VERBS else ""
    return Attributes(req.user, info.verb, info.is_resource_request, info.path, info.namespace, info.api_group,
                      info.api_version, info.resource, info.subresource, info.name, selector)


def forbidden_message(attrs: Attributes) -> str:
    user = attrs.user.name
    if not attrs.is_resource_request:
        return f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    where = f' in the namespace "{attrs.namespace}"' if attrs.namespace else (
        "" if attrs.resource == "namespaces" and attrs.name else " at the cluster scope")
    return f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}"{where}'


def with_authorization(handler: Handler, authorizer: Authorizer) -> Handler:
    async def authorizing(req: Request) -> Response:
        attrs = attributes_of(req)
        try:
            decision, reason = await authorizer.authorize(attrs)
        except AuthorizationError as err:  # no authorizer decided and one failed: InternalError, as upstream
            annotate_authorization(req, False, "")
            raise errors.internal_error(str(err)) from None
        annotate_authorization(req, decision == ALLOW, reason)
        if decision == ALLOW:
            return await handler(req)
        message = forbidden_message(attrs) + (f": {reason}" if reason else "")
        if not attrs.is_resource_request:
            raise errors.StatusError(403, "Forbidden", f"forbidden: {message}", {})
        raise errors.forbidden(attrs.resource, attrs.api_group, attrs.name, message)
    return authorizing
