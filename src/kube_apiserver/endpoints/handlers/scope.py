"""RequestScope: what every handler of one resource needs (k8s handlers.RequestScope)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ...admission.interfaces import Attributes, Chain
from ...apimachinery import errors
from ...apimachinery import field as fielderr
from ...apimachinery.managedfields import FieldManager
from ...apimachinery.openapischema import Node
from ...registry.context import ANONYMOUS, Context
from ...registry.rest import ResourceInfo
from ...registry.table import TableConvertor, default_table_convertor
from .. import negotiation
from ..http import Request
from .yielding import phase_clock

CONVERSIONS_WITHOUT_TABLE = frozenset(c for c in negotiation.RESOURCE_CONVERSIONS if c[0] != "Table")


@dataclass
class RequestScope:
    info: ResourceInfo
    storage: Any
    admission: Chain = field(default_factory=lambda: Chain([]))
    # None: the storage converts to no Table (rest.TableConvertor not implemented), so none is served.
    table: TableConvertor | None = field(default_factory=default_table_convertor)
    min_request_timeout: float = 1800.0
    # Set when the server shuts down: open watches end cleanly.
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    # The kind's OpenAPI schema (None: no schema known, e.g. preserve-unknown-fields resources).
    schema: Node | None = None
    # Records managedFields on every write and performs server-side apply.
    field_manager: FieldManager | None = None
    # Custom resources are decoded as unstructured JSON: wrong types are the schema validation's 422s,
    # not decoding 400s, and there is no strategic merge patch.
    custom_resource: bool = False
    # Warnings every request gets (a deprecated custom resource version's).
    warnings: tuple[str, ...] = ()

    @property
    def conversions(self) -> frozenset[tuple[str, str, str]]:
        """What Accept may ask a response to be converted to (AllowsMediaTypeTransform)."""
        if self.table is None:
            return CONVERSIONS_WITHOUT_TABLE
        return negotiation.RESOURCE_CONVERSIONS

    def manager_name(self, req: Request) -> str:
        """fieldManager, else the User-Agent's product (k8s prefixFromUserAgent)."""
        return req.param("fieldManager") or req.headers.get("user-agent", "").split("/", 1)[0][:128] or "unknown"

    def default(self, obj: Any) -> Any:
        """`obj` with its type's defaults (the strategy's), as decoding gives them in Kubernetes."""
        strategy = getattr(self.storage, "strategy", None)
        if strategy is not None and isinstance(obj, dict):
            strategy.default(obj)
        return obj

    def track(self, req: Request, live: Any, new: Any) -> Any:
        """`new` with an Update by this request's manager recorded in its managedFields."""
        if self.field_manager is None or not isinstance(new, dict):
            return new
        return self.field_manager.update(live, new, self.manager_name(req), self.info.subresource)

    def context(self, req: Request, dry_run: bool = False) -> Context:
        namespace = req.info.namespace if self.info.namespaced else ""
        if self.custom_resource:
            req.values["custom_resource"] = True  # its errors are written as JSON: no protobuf serializer
        # Warnings a strategy adds (WarningsOnCreate/WarningsOnUpdate) are returned as Warning headers.
        return Context(namespace, req.user or ANONYMOUS, dry_run, req.param("fieldManager"),
                       warnings=req.values.setdefault("warnings", []), phases=phase_clock(req))

    def attributes(self, req: Request, operation: str, obj: Any, old: Any, name: str, ctx: Context,
                   options: dict[str, Any] | None = None) -> Attributes:
        """The admission attributes of a write, with its options object: CreateOptions or UpdateOptions
        from the query unless `options` (DeleteOptions) is given."""
        if options is None and operation in OPTIONS_KINDS:
            options = operation_options(req, OPTIONS_KINDS[operation])
        return Attributes(operation, self.info.group, self.info.version, self.info.kind, self.info.resource,
                          self.info.subresource, ctx.namespace, name, obj, old, ctx.user, ctx.dry_run,
                          options=options or {}, warnings=ctx.warnings, audit=req.values.get("audit"),
                          resource_group=getattr(req.info, "api_group", None))


OPTIONS_KINDS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions"}


def operation_options(req: Request, kind: str) -> dict[str, Any]:
    """CreateOptions or UpdateOptions as the handlers decode them from the query, typed meta.k8s.io/v1, empty
    fields left out. A patch's PatchOptions reach admission as these too (patchToUpdateOptions and
    patchToCreateOptions: force is dropped), as do a PUT that creates (updateToCreateOptions)."""
    options: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    dry_run = req.query.get("dryRun")
    if dry_run:
        options["dryRun"] = list(dry_run)
    if req.param("fieldManager"):
        options["fieldManager"] = req.param("fieldManager")
    if req.param("fieldValidation"):
        options["fieldValidation"] = req.param("fieldValidation")
    return options


DRY_RUN_VALUES = ("All",)
FIELD_VALIDATION_VALUES = ("Ignore", "Warn", "Strict")


def write_options(req: Request, kind: str, extra: fielderr.ErrorList | None = None) -> bool:
    """Validates the query options of a write (CreateOptions, UpdateOptions, PatchOptions,
    DeleteOptions) as Kubernetes does; returns whether it is a dry run."""
    errs: fielderr.ErrorList = list(extra or [])
    dry_run = req.query.get("dryRun", [])
    for value in dry_run:
        if value not in DRY_RUN_VALUES:
            errs.append(fielderr.not_supported(fielderr.Path("dryRun"), value, DRY_RUN_VALUES))
    validation = req.param("fieldValidation")
    if validation and validation not in FIELD_VALIDATION_VALUES:
        errs.append(fielderr.not_supported(fielderr.Path("fieldValidation"), validation, FIELD_VALIDATION_VALUES))
    manager = req.param("fieldManager")
    if len(manager) > 128:
        errs.append(fielderr.too_long(fielderr.Path("fieldManager"), "", 128))
    if errs:
        raise errors.invalid(kind, "meta.k8s.io", "", errs)
    return bool(dry_run)
