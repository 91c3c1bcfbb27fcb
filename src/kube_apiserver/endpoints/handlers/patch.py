"""PATCH an object (k8s handlers.PatchResource): json, merge and strategic merge patches."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ...apimachinery import (
    errors,
    field,
    fieldvalidation,
    patch,
    schematypes,
    serializer,
    strategicpatch,
    typedwalk,
)
from ...apimachinery.field import go_json
from ...apimachinery.openapischema import Node
from ...registry.context import Context
from ...registry.rest import UpdatedObjectInfo
from ...storage.interface import RequestTooLargeError
from ..http import Request, Response
from . import apply
from .responses import write_object
from .scope import RequestScope, write_options
from .update import admission_hooks
from .yielding import phase_clock

Object = dict[str, Any]
PATCH_TYPES = [serializer.JSON_PATCH, serializer.MERGE_PATCH, serializer.STRATEGIC_MERGE_PATCH, serializer.APPLY_PATCH]
MAX_JSON_PATCH_OPERATIONS = 10000  # patch.go's maxJSONPatchOperations


def _apply(patch_type: str, current: Object, body: Any, schema: Node | None) -> tuple[Object, Callable[[], str]]:
    """The patched object, and how the patch shows in a strict decoding error (what Go prints there)."""
    if patch_type == serializer.STRATEGIC_MERGE_PATCH:
        consumed = copy.deepcopy(body)
        patched = strategicpatch.strategic_merge_patch(current, consumed, schema, mutate_patch=True)
        return patched, lambda: strategicpatch.go_format(consumed)
    if patch_type == serializer.JSON_PATCH:
        if _too_many_operations(patch_type, body):
            raise errors.request_entity_too_large(f"The allowed maximum operations in a JSON patch is "
                                                  f"{MAX_JSON_PATCH_OPERATIONS}, got {len(body)}")
        patched = patch.json_patch(current, body)
    else:
        patched = patch.merge_patch(current, body)
    return patched, lambda: go_json(patched)


def _too_many_operations(patch_type: str, body: Any) -> bool:
    """Refused with 413 once the object is read (a missing one is a 404 first, as upstream); until then the
    patch's strict decoding, which would only decorate the 413, is not worth its time."""
    return patch_type == serializer.JSON_PATCH and isinstance(body, list) and len(body) > MAX_JSON_PATCH_OPERATIONS


async def patch_resource(scope: RequestScope, req: Request) -> Response:
    patch_type = serializer.media_type_of(req.headers.get("content-type", ""))
    if patch_type not in PATCH_TYPES:
        raise errors.unsupported_media_type(patch_type, PATCH_TYPES)
    if patch_type == serializer.STRATEGIC_MERGE_PATCH and (scope.schema is None or scope.custom_resource):
        # As for custom resources: without patch strategies there is no strategic merge patch.
        raise errors.unsupported_media_type(patch_type, [t for t in PATCH_TYPES if t != patch_type])
    dry_run = write_options(req, "PatchOptions", _patch_option_errors(req, patch_type))
    if patch_type == serializer.APPLY_PATCH:
        return await apply.apply_patch(scope, req, dry_run)
    ctx = scope.context(req, dry_run)
    name = req.info.name
    raw = await req.body()
    body = await phase_clock(req).run(serializer.decode_json, raw)
    if patch_type != serializer.JSON_PATCH and not isinstance(body, dict):
        raise errors.bad_request("the body of the request was in an unknown format - patch must be a JSON object")
    admit, validate_create, validate_update = admission_hooks(scope, req, name)
    check_fields = _field_validation(req, scope.schema, patch_type, raw, body, typed=not scope.custom_resource)

    async def apply_patch(_ctx: Context, old: Object | None) -> Object:
        if old is None:
            raise errors.not_found(scope.info.resource, scope.info.group, name)
        # Each phase walks the whole object (seconds for a big one): the loop answers others between them.
        clock = phase_clock(req)
        clock.restart()  # the object was just read from storage
        patched, shown = await clock.run(_apply, patch_type, old, body, scope.schema)

        def checked_and_defaulted() -> Object:
            check_fields(patched, shown)
            _check_patched(patched, scope, name, ctx.namespace)
            return scope.default(patched)

        defaulted = await clock.run(checked_and_defaulted)
        return await clock.run(scope.track, req, old, defaulted)

    info = UpdatedObjectInfo(name, apply_patch, [admit])
    try:
        out, _ = await scope.storage.update(ctx, name, info, validate_create, validate_update, False, {})
    except RequestTooLargeError:
        # Too large for storage: managedFields can be large, so the patch is applied once more and the
        # result stored without them (patch.go, for every patch type but apply).
        info = UpdatedObjectInfo(name, apply_patch, [admit, _without_managed_fields])
        out, _ = await scope.storage.update(ctx, name, info, validate_create, validate_update, False, {})
    return write_object(req, scope, 200, out)


async def _without_managed_fields(_ctx: Context, obj: Object, _old: Object | None) -> Object:
    obj["metadata"].pop("managedFields", None)
    return obj


def _patch_option_errors(req: Request, patch_type: str) -> list[field.FieldError]:
    """The checks of ValidatePatchOptions that depend on the patch type."""
    if patch_type != serializer.APPLY_PATCH:
        if "force" in req.query:
            return [field.forbidden(field.Path("force"), "may not be specified for non-apply patch")]
        return []
    if not req.param("fieldManager"):
        return [field.required(field.Path("fieldManager"), "is required for apply patch")]
    return []


def _field_validation(req: Request, schema: Node | None, patch_type: str, raw: bytes, body: Any,
                      typed: bool = True) -> Callable[[Any, Callable[[], str]], None]:
    """Strict decoding of the patch and of the patched object: unknown and duplicate fields are reported
    per fieldValidation (Strict: 422 Invalid) and the unknown fields dropped."""
    directive = req.param("fieldValidation") or fieldvalidation.WARN
    warnings = req.values.setdefault("warnings", [])
    body_errors: list[str] = []
    if schema is not None and directive != fieldvalidation.IGNORE and not _too_many_operations(patch_type, body):
        body_errors = fieldvalidation.patch_body_errors(raw, body, patch_type == serializer.JSON_PATCH)

    def check(patched: Any, shown: Callable[[], str]) -> None:
        if schema is not None and isinstance(patched, dict) and typed:
            try:
                return _check_walked(patched, schema, shown)
            except typedwalk.Unsupported:  # a schema the one walk does not handle: the walks it replaces
                pass
        if schema is not None and isinstance(patched, dict):
            wrong_type = schematypes.decode(patched, schema) if typed else None
            if wrong_type is not None:
                raise fieldvalidation.invalid_patch(shown(), wrong_type)
            fieldvalidation.check_patched_object(
                directive, patched, schema, patch_type == serializer.STRATEGIC_MERGE_PATCH, body_errors, warnings,
                lambda message: fieldvalidation.invalid_patch(shown(), message), not typed)

    def _check_walked(patched: dict[str, Any], schema: Node, shown: Callable[[], str]) -> None:
        """The same checks in one walk: typed decoding, then the unknown fields (dropped as they are found)
        as the JSON decoder (keys sorted) or, for a strategic merge, the unstructured converter reports them."""
        try:
            walked = typedwalk.walk(patched, schema)
        except schematypes.TypeMismatch as err:
            raise fieldvalidation.invalid_patch(shown(), str(err)) from None
        strategic = patch_type == serializer.STRATEGIC_MERGE_PATCH
        paths = walked.unknown_paths(sort_keys=not strategic, map_keys=not strategic)
        fieldvalidation.report_unknown_fields(directive, paths, warnings,
                                              lambda message: fieldvalidation.invalid_patch(shown(), message),
                                              body_errors, sort=strategic)

    return check


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
