"""List, watch and delete options as the registry receives them (metav1.ListOptions, DeleteOptions)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery import errors, fields, labels

Object = dict[str, Any]


@dataclass(slots=True)
class ListQuery:
    label_selector: str = ""
    field_selector: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    limit: int = 0
    continue_token: str = ""
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool = False
    send_initial_events: bool | None = None


@dataclass(slots=True)
class Selection:
    """A compiled label + field selector (k8s SelectionPredicate)."""

    label: Any
    field: Any
    field_set: Callable[[Object], dict[str, str]]
    empty: bool = field(init=False)

    def __post_init__(self) -> None:
        self.empty = self.label.empty() and self.field.empty()

    def matches(self, obj: Object) -> bool:
        if not self.label.empty():
            meta = obj.get("metadata") or {}
            if not self.label.matches(meta.get("labels") or {}):
                return False
        return self.field.empty() or self.field.matches(self.field_set(obj))


def compile_selection(query: ListQuery, field_set: Callable[[Object], dict[str, str]],
                      supported_fields: set[str]) -> Selection:
    try:
        label = labels.parse_selector(query.label_selector)
        fsel = fields.parse_field_selector(query.field_selector)
    except ValueError as err:
        raise errors.bad_request(str(err)) from None
    for requirement in fsel.requirements():
        if requirement[0] not in supported_fields:
            raise errors.bad_request(f"field label not supported: {requirement[0]}")
    return Selection(label, fsel, field_set)


@dataclass(slots=True)
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    preconditions_uid: str | None = None
    preconditions_resource_version: str | None = None
    dry_run: bool = False

    @classmethod
    def from_object(cls, body: Object | None, dry_run: bool) -> DeleteOptions:
        body = body or {}
        pre = body.get("preconditions") or {}
        return cls(body.get("gracePeriodSeconds"), body.get("propagationPolicy"), body.get("orphanDependents"),
                   pre.get("uid"), pre.get("resourceVersion"), dry_run or bool(body.get("dryRun")))
