"""PUT a whole object (k8s handlers.UpdateResource)."""

from __future__ import annotations

from typing import Any

from ...admission.interfaces import UPDATE
from ...apimachinery import deepjson, errors
from ...registry.context import Context
from ...registry.rest import UpdatedObjectInfo
from ...storage.interface import RequestTooLargeError
from ..http import Request, Response
from .decode import decode_object, ensure_namespace
from .responses import write_object
from .scope import RequestScope, write_options
from .yielding import phase_clock

Object = dict[str, Any]


def admission_hooks(scope: RequestScope, req: Request, name: str):
    """Mutating admission for the update loop, and validating admission for create and update."""

    async def admit(ctx: Context, obj: Object, old: Object | None) -> Object:
        attrs = scope.attributes(req, UPDATE if old else "CREATE", obj, old, name, ctx)
        await scope.admission.admit(attrs)
        return attrs.object or obj

    async def validate_create(ctx: Context, obj: Object) -> None:
        await phase_clock(req).between_phases()  # after the strategy's validation
        await scope.admission.validate(scope.attributes(req, "CREATE", obj, None, name, ctx))

    async def validate_update(ctx: Context, obj: Object, old: Object) -> None:
        await phase_clock(req).between_phases()  # after the strategy's validation
        await scope.admission.validate(scope.attributes(req, UPDATE, obj, old, name, ctx))

    return admit, validate_create, validate_update


async def update(scope: RequestScope, req: Request) -> Response:
    dry_run = write_options(req, "UpdateOptions")
    ctx = scope.context(req, dry_run)
    name = req.info.name
    # Each phase walks the whole object (a second for a big custom resource): others are answered between them.
    clock = phase_clock(req)
    obj = await decode_object(req, scope)
    ensure_namespace(obj, scope, ctx.namespace)
    body_name = obj["metadata"].get("name", "")
    if body_name != name:
        raise errors.bad_request(f"the name of the object ({body_name}) does not match the name on the URL ({name})")
    admit, validate_create, validate_update = admission_hooks(scope, req, name)

    async def replace(_ctx: Context, old: Object | None) -> Object:
        clock.restart()  # the object was just read from storage
        defaulted = await clock.run(lambda: scope.default(_copy(obj)))
        return await clock.run(scope.track, req, old, defaulted)

    info = UpdatedObjectInfo(name, replace, [admit])
    try:
        out, created = await scope.storage.update(ctx, name, info, validate_create, validate_update, False, {})
    except RequestTooLargeError:
        # Too large for storage: tried once more without the managedFields the client sent (update.go); the
        # stored object's are then kept, as the field manager does for a client that sends none.
        obj["metadata"].pop("managedFields", None)
        out, created = await scope.storage.update(ctx, name, info, validate_create, validate_update, False, {})
    return write_object(req, scope, 201 if created else 200, out)


def _copy(obj: Object) -> Object:
    return deepjson.loads(deepjson.dumps(obj))
