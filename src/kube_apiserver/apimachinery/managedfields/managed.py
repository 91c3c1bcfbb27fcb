"""metadata.managedFields entries <-> managers and their field sets (apimachinery managedfields.go).

A manager is identified by the JSON of its entry without time and fields (and without apiVersion for
Apply entries), exactly as BuildManagerIdentifier marshals it."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .fieldpath import FieldSet
from .fieldsv1 import FieldsV1Error, copy_fields, read_fields, set_to_fields
from .updater import Managers, VersionedSet
from .values import go_json_string

APPLY, UPDATE = "Apply", "Update"
ANCIENT_CHANGES = "ancient-changes"
MAX_UPDATE_MANAGERS = 10


class ManagedFieldsError(ValueError):
    pass


@dataclass
class Managed:
    fields: Managers = field(default_factory=dict)
    times: dict[str, datetime | None] = field(default_factory=dict)
    # The decoded entries' fieldsV1 written as this server writes them, with the set each decoded to: an entry
    # whose set is the same when encoded again is written as a copy of it (most entries of an update).
    written: dict[str, tuple[FieldSet, dict[str, Any]]] = field(default_factory=dict, compare=False, repr=False)

    def copy(self) -> Managed:
        return Managed(dict(self.fields), dict(self.times), self.written)


@functools.lru_cache(maxsize=1024)
def identifier(manager: str, operation: str, api_version: str, subresource: str = "") -> str:
    """BuildManagerIdentifier: json.Marshal of the entry's manager, operation, apiVersion, subresource."""
    parts = []
    if manager:
        parts.append(f'"manager":{go_json_string(manager)}')
    if operation:
        parts.append(f'"operation":{go_json_string(operation)}')
    if api_version and operation != APPLY:
        parts.append(f'"apiVersion":{go_json_string(api_version)}')
    if subresource:
        parts.append(f'"subresource":{go_json_string(subresource)}')
    return "{" + ",".join(parts) + "}"


def parse_identifier(ident: str) -> dict[str, str]:
    return dict(_parsed_identifier(ident))


@functools.lru_cache(maxsize=1024)
def _parsed_identifier(ident: str) -> tuple[tuple[str, Any], ...]:
    """Memoized: every encode parses each entry's identifier (a pure function of a string; the pairs are
    immutable, identifiers hold only strings)."""
    try:
        parsed = json.loads(ident)
    except ValueError:
        return ()
    return tuple(parsed.items()) if isinstance(parsed, dict) else ()


# ---- decoding ----

def decode(entries: Any) -> Managed:
    """DecodeManagedFields; raises ManagedFieldsError with Kubernetes' message."""
    managed = Managed()
    if entries is None:
        return managed
    if not isinstance(entries, list):
        raise ManagedFieldsError("managedFields must be a list")
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ManagedFieldsError("managedFields entries must be objects")
        _check(entry, position)
        ident = identifier(_str(entry, "manager"), entry["operation"], entry["apiVersion"], _str(entry, "subresource"))
        raw = entry.get("fieldsV1")
        try:
            fields, canonical = read_fields(raw)
        except FieldsV1Error as err:
            raise ManagedFieldsError(f"error decoding versioned set from {_go_entry(entry)}: "
                                     f"error decoding set: {err}") from None
        managed.fields[ident] = VersionedSet(fields, entry["apiVersion"], entry["operation"] == APPLY)
        if canonical:
            managed.written[ident] = (fields, raw)
        else:
            managed.written.pop(ident, None)  # a repeated identifier: the last entry's set is kept
        managed.times[ident] = parse_time(entry.get("time"))
    return managed


def _str(entry: dict[str, Any], name: str) -> str:
    value = entry.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ManagedFieldsError(f"{name} must be a string")
    return value


def _check(entry: dict[str, Any], position: int) -> None:
    if entry.get("operation") not in (APPLY, UPDATE):
        raise ManagedFieldsError("operation must be `Apply` or `Update`")
    if not _str(entry, "apiVersion"):
        raise ManagedFieldsError("apiVersion must not be empty")
    fields_type = _str(entry, "fieldsType")
    if fields_type == "":
        raise ManagedFieldsError(f"missing fieldsType in managed fields entry {position}")
    if fields_type != "FieldsV1":
        raise ManagedFieldsError(f'invalid fieldsType "{fields_type}" in managed fields entry {position}')


def _go_entry(entry: dict[str, Any]) -> str:
    return "{" + " ".join(str(entry.get(name, "")) for name in
                          ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1",
                           "subresource")) + "}"


def parse_time(raw: Any) -> datetime | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ManagedFieldsError("time must be an RFC3339 string")
    return _parse_time_text(raw)


@functools.lru_cache(maxsize=1024)
def _parse_time_text(raw: str) -> datetime:
    """Memoized as format_time is (most entries keep their time from update to update)."""
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        raise ManagedFieldsError(f'parsing time "{raw}" as RFC3339: invalid') from None
    if parsed.tzinfo is None:
        raise ManagedFieldsError(f'parsing time "{raw}" as RFC3339: missing time zone')
    return parsed.astimezone(UTC).replace(microsecond=0)


@functools.lru_cache(maxsize=1024)
def format_time(when: datetime) -> str:
    """Memoized: every encode formats each entry's time again, and most entries keep theirs (a pure function
    of an immutable value, so a shared cache holds no state of any server)."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _seconds(when: datetime | None) -> int:
    return int(when.timestamp()) if when is not None else 0


# ---- encoding ----

def encode(managed: Managed) -> list[dict[str, Any]] | None:
    """encodeManagedFields: None when there are no managers; entries in Kubernetes' order."""
    if not managed.fields:
        return None
    entries = []
    for ident, owned in managed.fields.items():
        when = managed.times.get(ident)
        entry = _entry(ident, owned, when, managed.written.get(ident))
        entries.append((_sort_key(entry, when), entry))
    entries.sort(key=lambda keyed: keyed[0])
    return [_ordered(entry) for _, entry in entries]


def _entry(ident: str, owned: VersionedSet, when: datetime | None,
           written: tuple[FieldSet, dict[str, Any]] | None) -> dict[str, Any]:
    entry: dict[str, Any] = parse_identifier(ident)
    entry["apiVersion"] = owned.api_version
    if owned.applied:
        entry["operation"] = APPLY
    if when is not None:
        entry["time"] = format_time(when)
    entry["fieldsType"] = "FieldsV1"
    if written is not None and (written[0] is owned.fields or written[0] == owned.fields):
        entry["fieldsV1"] = copy_fields(written[1])  # what set_to_fields would make, as read_fields found
    else:
        entry["fieldsV1"] = set_to_fields(owned.fields)
    return entry


def _sort_key(entry: dict[str, Any], when: datetime | None) -> tuple[Any, ...]:
    """The entry's time as written (whole seconds) without parsing it back."""
    seconds = _seconds(when.replace(microsecond=0)) if when is not None else 0
    return (entry.get("operation", ""), seconds, entry.get("manager", ""),
            entry.get("apiVersion", ""), entry.get("subresource", ""))


_ORDER = ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource")


def _ordered(entry: dict[str, Any]) -> dict[str, Any]:
    return {name: entry[name] for name in _ORDER if entry.get(name) not in (None, "")}


# ---- capping ----

def cap_update_managers(managed: Managed, limit: int = MAX_UPDATE_MANAGERS) -> Managed:
    """capManagersManager: the oldest Update managers beyond `limit` merge into "ancient-changes"."""
    updaters = [ident for ident, owned in managed.fields.items() if not owned.applied]
    if len(updaters) <= limit:
        return managed
    managed = managed.copy()
    updaters.sort(key=lambda ident: (_seconds(managed.times.get(ident)), ident))
    first_by_version: dict[str, str] = {}
    length = len(updaters)
    for ident in updaters:
        if length <= limit:
            break
        owned, when = managed.fields[ident], managed.times.get(ident)
        bucket = identifier(ANCIENT_CHANGES, UPDATE, owned.api_version)
        first = first_by_version.get(owned.api_version)
        if first is None:
            first_by_version[owned.api_version] = ident
            continue
        if bucket not in managed.fields:
            managed.fields[bucket] = managed.fields.pop(first)
        merged = owned.fields.union(managed.fields[bucket].fields)
        managed.fields[bucket] = VersionedSet(merged, owned.api_version, owned.applied)
        del managed.fields[ident]
        length -= 1
        managed.times[bucket] = when
    return managed
