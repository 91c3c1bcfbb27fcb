"""DELETE one object or a collection (k8s handlers.DeleteResource, DeleteCollection)."""

from __future__ import annotations

from typing import Any

from ...admission.interfaces import DELETE
from ...apimachinery import errors, serializer
from ...registry.context import Context
from ...registry.options import DeleteOptions
from ..http import Request, Response
from .get import list_query
from .responses import write_object
from .scope import RequestScope, write_options

Object = dict[str, Any]


async def _delete_options(req: Request, dry_run: bool) -> DeleteOptions:
    body = await req.body()
    options: Object | None = None
    if body.strip():
        decoded = serializer.decode_body(body, req.headers.get("content-type", ""))
        if not isinstance(decoded, dict):
            raise errors.bad_request("the body of the request was in an unknown format")
        options = decoded
    opts = DeleteOptions.from_object(options, dry_run)
    grace = req.param("gracePeriodSeconds")
    if grace:
        opts.grace_period_seconds = int(grace)
    policy = req.param("propagationPolicy")
    if policy:
        opts.propagation_policy = policy
    if opts.propagation_policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.StatusError(422, "Invalid", f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: '
                                 f'Unsupported value: "{opts.propagation_policy}": supported values: '
                                 f'"Foreground", "Background", "Orphan", "nil"',
                                 {"group": "meta.k8s.io", "kind": "DeleteOptions"})
    return opts


def options_object(opts: DeleteOptions) -> Object:
    """The DeleteOptions admission sees (meta.k8s.io/v1, empty fields left out), as they are when it runs."""
    out: Object = {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}
    if opts.grace_period_seconds is not None:
        out["gracePeriodSeconds"] = opts.grace_period_seconds
    preconditions = {k: v for k, v in (("uid", opts.preconditions_uid),
                                       ("resourceVersion", opts.preconditions_resource_version)) if v is not None}
    if preconditions:
        out["preconditions"] = preconditions
    if opts.orphan_dependents is not None:
        out["orphanDependents"] = opts.orphan_dependents
    if opts.propagation_policy is not None:
        out["propagationPolicy"] = opts.propagation_policy
    if opts.dry_run:
        out["dryRun"] = ["All"]
    return out


def _validation(scope: RequestScope, req: Request, options: DeleteOptions):
    async def validate(ctx: Context, obj: Object) -> None:
        name = obj["metadata"].get("name", "")
        await scope.admission.validate(scope.attributes(req, DELETE, None, obj, name, ctx, options_object(options)))
    return validate


async def delete(scope: RequestScope, req: Request) -> Response:
    dry_run = write_options(req, "DeleteOptions")
    options = await _delete_options(req, dry_run)
    ctx = scope.context(req, options.dry_run)
    out, _gone = await scope.storage.delete(ctx, req.info.name, _validation(scope, req, options), options)
    return write_object(req, scope, 200, out)


async def delete_collection(scope: RequestScope, req: Request) -> Response:
    dry_run = write_options(req, "DeleteOptions")
    options = await _delete_options(req, dry_run)
    ctx = scope.context(req, options.dry_run)
    out = await scope.storage.delete_collection(ctx, _validation(scope, req, options), options, list_query(req))
    return write_object(req, scope, 200, out)
