"""POST a new object (k8s handlers.CreateResource)."""

from __future__ import annotations

from ...admission.interfaces import CREATE
from ...registry.context import Context
from ...storage.interface import RequestTooLargeError
from ..http import Request, Response
from .decode import decode_object, ensure_namespace
from .responses import write_object
from .scope import RequestScope, write_options
from .yielding import phase_clock


async def create(scope: RequestScope, req: Request) -> Response:
    dry_run = write_options(req, "CreateOptions")
    ctx = scope.context(req, dry_run)
    # Each phase walks the whole object (a second for a big custom resource): others are answered between them.
    clock = phase_clock(req)
    obj = await decode_object(req, scope)
    ensure_namespace(obj, scope, ctx.namespace)
    obj = await clock.run(scope.track, req, None, await clock.run(scope.default, obj))
    # a named subresource's create (pods/eviction, serviceaccounts/token) is about the object the URL names
    name = req.info.name if scope.info.subresource else obj["metadata"].get("name", "")
    attrs = scope.attributes(req, CREATE, obj, None, name, ctx)
    await scope.admission.admit(attrs)
    obj = attrs.object or obj

    async def validate(ctx_: Context, created: dict) -> None:
        await clock.between_phases()  # after the strategy's validation
        attrs.object, attrs.name = created, created["metadata"].get("name", "")
        await scope.admission.validate(attrs)

    # A named subresource (pods/binding, pods/eviction) checks the name in the URL (rest.NamedCreater).
    options = {"name": req.info.name} if scope.info.subresource else {}
    try:
        out = await scope.storage.create(ctx, obj, validate, options)
    except RequestTooLargeError:
        # Too large for storage: managedFields can be large, so the object is tried once more without them.
        obj["metadata"].pop("managedFields", None)
        out = await scope.storage.create(ctx, obj, validate, options)
    return write_object(req, scope, 201, out)
