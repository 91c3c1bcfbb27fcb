"""PATCH with application/apply-patch+yaml: server-side apply (k8s patch.go applyPatcher).

The body is the applier's whole intent; the field manager merges it into the live object, owning
what it sets, and answers 409 on fields another manager owns unless force=true. Applying to an
object that does not exist creates it."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors, schematypes, serializer
from ...apimachinery.managedfields import ApplyConflict
from ...registry.context import Context
from ...registry.rest import UpdatedObjectInfo
from ..http import Request, Response
from .decode import ensure_namespace
from .responses import write_object
from .scope import RequestScope
from .update import admission_hooks
from .yielding import phase_clock

Object = dict[str, Any]


def _decode(body: bytes) -> Object:
    config = serializer.decode_yaml(body)
    if not isinstance(config, dict):
        raise errors.bad_request("error decoding YAML: the apply configuration must be an object")
    return config


async def apply_patch(scope: RequestScope, req: Request, dry_run: bool) -> Response:
    ctx = scope.context(req, dry_run)
    name = req.info.name
    raw = await req.body()
    # Each phase walks the whole object (seconds for a big one): others are answered between them.
    clock = phase_clock(req)
    config = await clock.run(_decode, raw)
    config.setdefault("metadata", {})
    if not isinstance(config["metadata"], dict):
        raise errors.bad_request("error decoding YAML: metadata must be an object")
    typed = scope.schema is not None and not scope.custom_resource
    wrong_type = schematypes.check(config, scope.schema) if typed else None
    if wrong_type is not None:
        raise errors.bad_request(wrong_type)
    manager = req.param("fieldManager")
    force = req.param("force").lower() == "true"
    admit, validate_create, validate_update = admission_hooks(scope, req, name)

    async def apply(_ctx: Context, live: Object | None) -> Object:
        assert scope.field_manager is not None
        clock.restart()
        try:
            obj = await clock.run(scope.field_manager.apply, live, config, manager, force, scope.info.subresource)
        except ApplyConflict as conflict:
            raise conflict.status_error(scope.info.kind, scope.info.group, name) from None

        def decoded_and_defaulted() -> None:
            if typed:  # the merged object as Go decodes it (nulls the configuration set are zero values)
                schematypes.decode(obj, scope.schema)
            scope.default(obj)

        await clock.run(decoded_and_defaulted)
        meta = obj.setdefault("metadata", {})
        if meta.get("name", name) != name:
            raise errors.bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the "
                                     f"URL ({name})")
        meta["name"] = name
        ensure_namespace(obj, scope, ctx.namespace)
        await clock.between_phases()
        return obj

    info = UpdatedObjectInfo(name, apply, [admit])
    out, created = await scope.storage.update(ctx, name, info, validate_create, validate_update, True, {})
    return write_object(req, scope, 201 if created else 200, out)
