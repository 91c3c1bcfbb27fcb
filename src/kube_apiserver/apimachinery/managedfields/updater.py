"""Ownership bookkeeping for updates and applies (SMD's merge.Updater).

Managers map an identifier to the fields it owns. An update takes ownership of every field it
changes; an apply merges the configuration, prunes fields its manager applied before and no one owns
any more, and fails with conflicts when it changes fields other managers own (unless forced)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .compare import Comparison, compare
from .fieldpath import FieldSet, Path
from .merge import merge
from .remove import remove_items
from .schematype import TypeRef
from .typed import ensure_named_fields_are_members, to_field_set
from .values import ABSENT, equal


@dataclass(frozen=True)
class VersionedSet:
    fields: FieldSet
    api_version: str
    applied: bool


Managers = dict[str, VersionedSet]


class Conflicts(Exception):
    """Fields an apply would change that other managers own: (manager identifier, path) pairs."""

    def __init__(self, conflicts: list[tuple[str, Path]]) -> None:
        super().__init__(f"{len(conflicts)} conflict(s)")
        self.conflicts = conflicts


class Updater:
    def __init__(self, root: TypeRef, ignored: FieldSet | None = None) -> None:
        self.root = root
        self.ignored = ignored if ignored is not None and not ignored.empty() else None

    def _filter(self, fields: FieldSet) -> FieldSet:
        return fields.recursive_difference(self.ignored) if self.ignored is not None else fields

    def _update(self, live: Any, new: Any, managers: Managers, workflow: str, force: bool,
                comparison: Comparison | None = None) -> tuple[Managers, Comparison]:
        comparison = (comparison or compare(live, new, self.root)).without(self.ignored)
        conflicts: dict[str, FieldSet] = {}
        removed = not comparison.removed.empty()
        changed = comparison.modified.union(comparison.added)
        for manager, owned in managers.items():
            if manager == workflow:
                continue
            clash = owned.fields.intersection(changed)
            if not clash.empty():
                conflicts[manager] = clash
        if conflicts and not force:
            raise Conflicts(_conflict_list(conflicts))
        out: Managers = {}
        for manager, owned in managers.items():
            fields = owned.fields
            if manager in conflicts:
                fields = fields.difference(conflicts[manager])
            if removed and manager != workflow:
                fields = fields.difference(comparison.removed)
            if not fields.empty():
                out[manager] = VersionedSet(fields, owned.api_version, owned.applied)
        return out, comparison

    def update(self, live: Any, new: Any, version: str, managers: Managers, manager: str,
               comparison: Comparison | None = None) -> Managers:
        """`comparison`: compare(live, new) when the caller has it already."""
        managers, comparison = self._update(live, new, managers, manager, force=True, comparison=comparison)
        previous = managers.get(manager)
        owned = previous.fields if previous is not None else FieldSet()
        owned = owned.difference(comparison.removed).union(comparison.modified).union(comparison.added)
        owned = self._filter(owned)
        managers = dict(managers)
        if owned.empty():
            managers.pop(manager, None)
        else:
            managers[manager] = VersionedSet(owned, version, False)
        return managers

    def apply(self, live: Any, config: Any, version: str, managers: Managers, manager: str, force: bool,
              ) -> tuple[Any, Managers]:
        """The new object (ABSENT when the apply changes nothing) and the new managers."""
        merged = merge(live, config, self.root)
        merged = {} if merged is ABSENT else merged
        last = managers.get(manager)
        managers = dict(managers)
        managers[manager] = VersionedSet(self._filter(to_field_set(config, self.root)), version, True)
        new = self._prune(merged, managers, last)
        managers, _ = self._update(live, new, managers, manager, force)
        if equal(live, new):
            return ABSENT, managers
        return new, managers

    def _named(self, fields: FieldSet) -> FieldSet:
        return ensure_named_fields_are_members(fields, self.root)

    def _prune(self, merged: Any, managers: Managers, last: VersionedSet | None) -> Any:
        """Removes what the applier applied last time, does not apply now, and nobody else owns."""
        if last is None or last.fields.empty():
            return merged
        pruned = remove_items(merged, self._named(last.fields), self.root)
        owned = FieldSet()
        for entry in managers.values():
            owned = owned.union(entry.fields)
        merged_set = self._named(to_field_set(merged, self.root))
        keep = self._named(to_field_set(pruned, self.root)).union(self._named(owned))
        pruned = remove_items(merged, merged_set.difference(keep), self.root)
        dangling = merged_set.difference(self._named(to_field_set(pruned, self.root)))
        return remove_items(merged, dangling.intersection(self._named(last.fields)), self.root)


def _conflict_list(conflicts: dict[str, FieldSet]) -> list[tuple[str, Path]]:
    return [(manager, path) for manager in sorted(conflicts) for path in conflicts[manager].paths()]
