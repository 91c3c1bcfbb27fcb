"""PATCH an object (k8s handlers.PatchResource): json, merge and strategic merge patches."""

from __future__ import annotations

from typing import Any

from ...apimachinery import errors, patch, serializer
from ...registry.context import Context
from ...registry.rest import UpdatedObjectInfo
from ..http import Request, Response
from .responses import write_object
from .scope import RequestScope, write_options
from .update import admission_hooks

Object = dict[str, Any]
PATCH_TYPES = [serializer.JSON_PATCH, serializer.MERGE_PATCH, serializer.STRATEGIC_MERGE_PATCH]


def _apply(patch_type: str, current: Object, body: Any) -> Object:
    if patch_type == serializer.JSON_PATCH:
        return patch.json_patch(current, body)
    if patch_type == serializer.MERGE_PATCH:
        return patch.merge_patch(current, body)
    return patch.strategic_merge_patch(current, body)


async def patch_resource(scope: RequestScope, req: Request) -> Response:
    patch_type = serializer.media_type_of(req.headers.get("content-type", ""))
    if patch_type not in PATCH_TYPES:
        raise errors.unsupported_media_type(patch_type, PATCH_TYPES)
    dry_run = write_options(req, "PatchOptions")
    ctx = scope.context(req, dry_run)
    name = req.info.name
    body = serializer.decode_json(await req.body())
    if patch_type != serializer.JSON_PATCH and not isinstance(body, dict):
        raise errors.bad_request("the body of the request was in an unknown format - patch must be a JSON object")
    admit, validate_create, validate_update = admission_hooks(scope, req, name)

    async def apply_patch(_ctx: Context, old: Object | None) -> Object:
        if old is None:
            raise errors.not_found(scope.info.resource, scope.info.group, name)
        patched = _apply(patch_type, old, body)
        _check_patched(patched, scope, name, ctx.namespace)
        return patched

    info = UpdatedObjectInfo(name, apply_patch, [admit])
    out, _ = await scope.storage.update(ctx, name, info, validate_create, validate_update, False, {})
    return write_object(req, scope, 200, out)


def _check_patched(obj: Any, scope: RequestScope, name: str, namespace: str) -> None:
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        raise errors.bad_request("the patched object is not a valid object")
    if obj.get("kind") != scope.info.kind or obj.get("apiVersion") != scope.info.api_version:
        raise errors.bad_request(f'the object provided is unrecognized (must be of type {scope.info.kind}): '
                                 f'kind and apiVersion cannot be changed by a patch')
    meta = obj["metadata"]
    if meta.get("name", name) != name:
        raise errors.bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL "
                                 f"({name})")
    if scope.info.namespaced and meta.get("namespace", namespace) != namespace:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the "
                                 "request")
