"""DELETE one object or a collection (k8s handlers.DeleteResource, DeleteCollection)."""

from __future__ import annotations

from typing import Any

from ...admission.interfaces import DELETE
from ...apimachinery import errors, field, jsontypes, serializer
from ...registry.context import Context
from ...registry.options import DeleteOptions
from ..http import Request, Response
from .get import bool_param, int_param, list_query
from .responses import write_object
from .scope import DRY_RUN_VALUES, RequestScope

Object = dict[str, Any]


DELETE_OPTIONS = jsontypes.Struct("DeleteOptions", "v1.DeleteOptions", {
    "kind": "string", "apiVersion": "string", "gracePeriodSeconds": "int64",
    "preconditions": jsontypes.Struct("Preconditions", "v1.Preconditions", {"uid": "string",
                                                                           "resourceVersion": "string"}),
    "orphanDependents": "bool", "propagationPolicy": "string", "dryRun": "[]string",
    "ignoreStoreReadErrorWithClusterBreakingPotential": "bool"})
PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")


async def _delete_options(req: Request) -> DeleteOptions:
    """The request's DeleteOptions: from the body when there is one (the query is then ignored, as in
    Kubernetes), else from the query; a value Go cannot decode is a 400, invalid options a 422."""
    body = await req.body()
    if body.strip():
        decoded = serializer.decode_body(body, req.headers.get("content-type", ""))
        if decoded is None:
            decoded = {}  # JSON null decodes to the empty options
        if not isinstance(decoded, dict):
            raise errors.bad_request("the body of the request was in an unknown format")
        try:
            jsontypes.check(decoded, DELETE_OPTIONS)
        except jsontypes.TypeMismatch as err:
            raise errors.bad_request(str(err)) from None
        dry_run = ["" if value is None else value for value in decoded.get("dryRun") or []]
        opts = DeleteOptions.from_object(decoded, False)
    else:
        dry_run = req.query.get("dryRun", [])
        orphan = bool_param(req, "orphanDependents")
        policy = req.query.get("propagationPolicy")
        opts = DeleteOptions(int_param(req, "gracePeriodSeconds"), policy[0] if policy else None, orphan)
    opts.dry_run = bool(dry_run)
    errs = _validation_errors(opts, dry_run)
    if errs:
        raise errors.invalid("DeleteOptions", "meta.k8s.io", "", errs)
    return opts


def _validation_errors(opts: DeleteOptions, dry_run: list[str]) -> field.ErrorList:
    """ValidateDeleteOptions."""
    errs: field.ErrorList = []
    policy = field.Path("propagationPolicy")
    if opts.orphan_dependents is not None and opts.propagation_policy is not None:
        errs.append(field.invalid(policy, opts.propagation_policy,
                                  "orphanDependents and deletionPropagation cannot be both set"))
    if opts.propagation_policy is not None and opts.propagation_policy not in PROPAGATION_POLICIES:
        errs.append(field.not_supported(policy, opts.propagation_policy, [*PROPAGATION_POLICIES, "nil"]))
    if any(value not in DRY_RUN_VALUES for value in dry_run):
        errs.append(field.not_supported(field.Path("dryRun"), dry_run, DRY_RUN_VALUES))
    return errs


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
    options = await _delete_options(req)
    ctx = scope.context(req, options.dry_run)
    out, _gone = await scope.storage.delete(ctx, req.info.name, _validation(scope, req, options), options)
    return write_object(req, scope, 200, out)


async def delete_collection(scope: RequestScope, req: Request) -> Response:
    options = await _delete_options(req)
    ctx = scope.context(req, options.dry_run)
    out = await scope.storage.delete_collection(ctx, _validation(scope, req, options), options, list_query(req))
    return write_object(req, scope, 200, out)
