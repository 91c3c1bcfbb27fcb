"""The field manager: records who owns which fields on every write, and performs server-side apply.

This is apimachinery's default field manager chain, flattened: version check, last-applied
updater/manager (kubectl CSA -> SSA), skip-non-applied, cap managers, build manager info, managed
fields updater, strip meta, structured merge."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from ...apimachinery.clock import wall_now
from ..errors import StatusError, bad_request
from ..openapischema import Node
from . import lastapplied
from . import managed as mf
from .compare import Comparison, compare
from .conflict import ApplyConflict, Conflict
from .fieldpath import FieldSet, make_path
from .managed import APPLY, UPDATE, Managed, ManagedFieldsError
from .schematype import of_root
from .updater import Conflicts, Updater, VersionedSet
from .validate import render, validate
from .values import ABSENT
from .zero import zero_object

CURRENT_OPERATION = "current-operation"
BEFORE_FIRST_APPLY = "before-first-apply"
# Fields never tracked (stripmeta.go).
STRIPPED = FieldSet(make_path("apiVersion"), make_path("kind"), make_path("metadata"),
                    *(make_path("metadata", name) for name in (
                        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
                        "generation", "managedFields", "resourceVersion")))
_ENTRY_FIELDS = ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource")
ADMISSION_WARNING = (".metadata.managedFields was in an invalid state after admission; this could be caused by "
                     "an outdated mutating admission controller; please fix your requests: {}")


def validate_managed_fields(entries: Any) -> str | None:
    """managedfields.ValidateManagedFields: the decoding error, or None when the entries are valid."""
    try:
        mf.decode(entries)
    except ManagedFieldsError as err:
        return str(err)
    return None


class FieldManager:
    """One kind at one API version. `reset_fields` are the paths the registry strategy resets for this
    (sub)resource (e.g. ("status",) for a main resource); they are never owned through it."""

    def __init__(self, schema: Node | None, api_version: str, *, kind: str = "",
                 reset_fields: Iterable[tuple[str, ...]] = (), clock: Callable[[], datetime] | None = None):
        self.root = of_root(schema)
        self.api_version = api_version
        self.kind = kind
        self.updater = Updater(self.root, FieldSet(*(make_path(*path) for path in reset_fields)))
        self.clock = clock or wall_now

    # ---- updates (create, update, non-apply patch) ----

    def update(self, live: dict[str, Any] | None, new: dict[str, Any], manager: str,
               subresource: str = "") -> dict[str, Any]:
        """Returns `new` with metadata.managedFields recording an Update by `manager` (live None = create)."""
        managed = _decode_live_or_new(live, new, ignore_new=bool(subresource))
        live_obj = _strip(live) if live is not None else zero_object(self.root)
        new_obj = _strip(new)
        if not managed.fields and _uid(live):
            return _with_managed(new, None)
        # Both objects are checked as SMD's typed conversion does, on the comparison's walk.
        comparison = compare(live_obj, new_obj, self.root, checked=True)
        if comparison.invalid:
            return _with_managed(new, _entries(live))  # UpdateNoErrors keeps the live entries
        ident = mf.identifier(manager or "unknown", UPDATE, self.api_version, subresource)
        managed = mf.cap_update_managers(self._record_update(live_obj, new_obj, managed, ident, comparison))
        return _with_managed(new, mf.encode(managed))

    def _record_update(self, live: Any, new: Any, managed: Managed, ident: str,
                       comparison: Comparison | None = None) -> Managed:
        fields = self.updater.update(live, new, self.api_version, managed.fields, CURRENT_OPERATION, comparison)
        fields = _stripped(fields, CURRENT_OPERATION)
        managed = Managed(fields, dict(managed.times), managed.written)
        current = fields.pop(CURRENT_OPERATION, None)
        if current is not None:
            previous = fields.get(ident)
            owned = current.fields.union(previous.fields) if previous is not None else current.fields
            fields[ident] = VersionedSet(owned, current.api_version, current.applied)
            managed.times[ident] = self._now()
        return managed

    def _now(self) -> datetime:
        return self.clock().astimezone(UTC).replace(microsecond=0)

    # ---- server-side apply ----

    def apply(self, live: dict[str, Any] | None, config: dict[str, Any], manager: str, force: bool,
              subresource: str = "") -> dict[str, Any]:
        """The object after applying `config` (live None = apply-on-create), with managedFields.

        Raises ApplyConflict, or StatusError (400 for a wrong kind or managedFields in the
        configuration, 500 when the configuration or live object does not fit the schema)."""
        self._check_kind(config)
        live = live if live is not None else zero_object(self.root)
        try:
            managed = mf.decode(_entries(live))
        except ManagedFieldsError as err:
            raise _unknown(f"failed to decode managed fields: {err}") from None
        try:
            obj, managed = self._apply_kubectl(live, config, managed, manager, force, subresource)
        except Conflicts as err:
            raise ApplyConflict([Conflict.of(ident, path) for ident, path in err.conflicts]) from None
        if manager == lastapplied.KUBECTL and lastapplied.has_last_applied(obj):
            lastapplied.set_last_applied(obj, lastapplied.build_last_applied(config))
        return copy.deepcopy(_with_managed(obj, mf.encode(managed)))

    def _check_kind(self, config: Any) -> None:
        if not isinstance(config, dict):
            raise bad_request("invalid object type: /, Kind=")
        # Unstructured's accessors read a value that is not a string as "".
        api_version, kind = (value if isinstance(value := config.get(key), str) else ""
                             for key in ("apiVersion", "kind"))
        if api_version != self.api_version or (self.kind and kind != self.kind):
            raise bad_request(f"invalid object type: {_gvk(api_version, kind)}")

    def _apply_kubectl(self, live: dict[str, Any], config: dict[str, Any], managed: Managed, manager: str,
                       force: bool, subresource: str) -> tuple[dict[str, Any], Managed]:
        """lastAppliedManager: kubectl's conflicts with what its last-applied annotation set are forced."""
        try:
            return self._apply_once(live, config, managed, manager, force, subresource)
        except Conflicts as err:
            if manager != lastapplied.KUBECTL:
                raise
            allowed = lastapplied.allowed_conflicts(live, self.root, self.api_version)
            if allowed is None:
                raise
            if not FieldSet(*(path for _, path in err.conflicts)).difference(allowed).empty():
                raise Conflicts([(ident, path) for ident, path in err.conflicts if not allowed.has(path)]) from None
        return self._apply_once(live, config, managed, manager, True, subresource)

    def _apply_once(self, live: dict[str, Any], config: dict[str, Any], managed: Managed, manager: str,
                    force: bool, subresource: str) -> tuple[dict[str, Any], Managed]:
        live_obj = _strip(live)
        if not managed.fields:  # skipNonApplied: what exists so far belongs to before-first-apply
            self._require_valid(live_obj, "failed to create manager for existing fields: "
                                "failed to convert new object ({}) to smd typed: {}", live)
            ident = mf.identifier(BEFORE_FIRST_APPLY, UPDATE, self.api_version, subresource)
            managed = mf.cap_update_managers(self._record_update(zero_object(self.root), live_obj, managed, ident))
        ident = mf.identifier(manager or "unknown", APPLY, self.api_version, subresource)
        self._check_config(config)
        self._require_valid(live_obj, "failed to create typed live object ({}): {}", live)
        new, fields = self.updater.apply(live_obj, config, self.api_version, managed.fields, ident, force)
        managed = Managed(_stripped(fields, ident), dict(managed.times), managed.written)
        if new is ABSENT:
            return _strip(live), managed
        managed.times[ident] = self._now()
        return new, managed

    def _check_config(self, config: dict[str, Any]) -> None:
        metadata = config.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("managedFields"), list):
            raise bad_request("metadata.managedFields must be nil")
        errors = validate(config, self.root, allow_duplicates=False, strict=True)
        if errors:
            raise _unknown(f"failed to create typed patch object ({_gvknn(config)}): {render(errors)}")

    def _require_valid(self, obj: Any, message: str, original: dict[str, Any]) -> None:
        errors = validate(obj, self.root, allow_duplicates=True, strict=False)
        if errors:
            raise _unknown(message.format(_gvknn(original), render(errors)))


# ---- helpers ----

def _unknown(message: str) -> StatusError:
    """A plain Go error answered by the apiserver: 500 with reason "" (StatusReasonUnknown)."""
    return StatusError(500, "", message)


def _gvk(api_version: str, kind: str) -> str:
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"


def _gvknn(obj: Any) -> str:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    metadata = metadata if isinstance(metadata, dict) else {}
    gvk = _gvk(obj.get("apiVersion") or "", obj.get("kind") or "") if isinstance(obj, dict) else "/, Kind="
    return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}; {gvk}"


def _entries(obj: dict[str, Any] | None) -> Any:
    metadata = obj.get("metadata") if obj else None
    return metadata.get("managedFields") if isinstance(metadata, dict) else None


def _uid(obj: dict[str, Any] | None) -> bool:
    metadata = obj.get("metadata") if obj else None
    return bool(metadata.get("uid")) if isinstance(metadata, dict) else False


def _strip(obj: dict[str, Any]) -> dict[str, Any]:
    """A shallow copy without metadata.managedFields."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or "managedFields" not in metadata:
        return dict(obj)
    out = dict(obj)
    out["metadata"] = {k: v for k, v in metadata.items() if k != "managedFields"}
    return out


def _with_managed(obj: dict[str, Any], entries: list[dict[str, Any]] | None) -> dict[str, Any]:
    out = dict(obj)
    metadata = dict(out.get("metadata") or {})
    metadata.pop("managedFields", None)
    if entries is not None:
        metadata["managedFields"] = entries
    if metadata or "metadata" in out:
        out["metadata"] = metadata
    return out


def _stripped(fields: dict[str, VersionedSet], ident: str) -> dict[str, VersionedSet]:
    fields = dict(fields)
    owned = fields.get(ident)
    if owned is not None:
        rest = owned.fields.difference(STRIPPED)
        if rest.empty():
            del fields[ident]
        else:
            fields[ident] = VersionedSet(rest, owned.api_version, owned.applied)
    return fields


def _is_reset(entries: Any) -> bool:
    if not isinstance(entries, list):
        return False
    if not entries:
        return True
    return len(entries) == 1 and isinstance(entries[0], dict) and all(
        entries[0].get(name) in (None, "") for name in _ENTRY_FIELDS)


def _decode_or_empty(entries: Any) -> Managed:
    try:
        return mf.decode(entries)
    except ManagedFieldsError:
        return Managed()


def _decode_live_or_new(live: dict[str, Any] | None, new: dict[str, Any], ignore_new: bool) -> Managed:
    """decodeLiveOrNew: the request's entries when valid and non-empty, [] resets, else the live ones."""
    if ignore_new:
        return _decode_or_empty(_entries(live))
    requested = _entries(new)
    if _is_reset(requested):
        return Managed()
    try:
        managed = mf.decode(requested)
    except ManagedFieldsError:
        managed = Managed()
    return managed if managed.fields else _decode_or_empty(_entries(live))
