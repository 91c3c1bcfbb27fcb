"""The per-resource strategy (k8s RESTCreateStrategy/RESTUpdateStrategy/RESTDeleteStrategy) and the
generic steps every create and update take (rest.BeforeCreate, rest.BeforeUpdate)."""

from __future__ import annotations

from typing import Any

from ..apimachinery import errors, field, validation
from ..apimachinery.clock import NAME_SUFFIX_ALPHABET, NAME_SUFFIX_LENGTH, current_ids
from ..apimachinery.meta import new_uid, now_rfc3339
from .context import Context
from .rest import ResourceInfo

Object = dict[str, Any]
GENERATE_NAME_ALPHABET = NAME_SUFFIX_ALPHABET
GENERATE_NAME_SUFFIX = NAME_SUFFIX_LENGTH
MAX_GENERATE_NAME_PREFIX = 63 - GENERATE_NAME_SUFFIX


class Strategy:
    """Defaults fit most resources; a resource's module overrides what differs."""

    allow_create_on_update = False
    allow_unconditional_update = True
    tracks_generation = False  # metadata.generation starts at 1 and grows on spec changes
    has_status_subresource = False  # status is written only through /status
    name_validator = staticmethod(validation.name_is_dns_subdomain)
    # Fields a field selector may name besides metadata.name and metadata.namespace.
    selectable_fields: tuple[str, ...] = ()
    # Fields this endpoint never changes (GetResetFields): not owned by whoever writes through it.
    reset_fields: tuple[tuple[str, ...], ...] = ()
    # Whether validate_update checks the whole object (validate() then runs on create only), as for
    # strategies whose update validation is ratcheted against the old object.
    update_validates_fully = False
    # DefaultGarbageCollectionPolicy: a delete naming no propagation policy orphans the dependents
    # (batch/v1 Jobs, for compatibility) when True.
    orphan_by_default = False
    # The group a 422 names (BeforeCreate/BeforeUpdate take ObjectKinds(obj)[0]): the first group that
    # registered the internal type, when that is not the served one ("extensions" for Ingress).
    error_group: str | None = None

    def __init__(self, info: ResourceInfo):
        self.info = info
        if self.has_status_subresource and not self.reset_fields:
            self.reset_fields = (("status",),)

    def prepare_for_create(self, ctx: Context, obj: Object) -> None:
        if self.has_status_subresource:
            obj.pop("status", None)
        if self.tracks_generation:
            obj["metadata"]["generation"] = 1

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        if self.has_status_subresource:
            _copy_field(old, obj, "status")
        if self.tracks_generation:
            generation = old["metadata"].get("generation", 1)
            obj["metadata"]["generation"] = generation + 1 if _spec_changed(obj, old) else generation

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return validation.validate_object_meta(obj.get("metadata") or {}, self.info.namespaced,
                                               self.name_validator, field.Path("metadata"))

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return validation.validate_object_meta_update(obj.get("metadata") or {}, old.get("metadata") or {},
                                                      field.Path("metadata"))

    def canonicalize(self, obj: Object) -> None:
        pass

    def check_graceful_delete(self, obj: Object, options: Any) -> bool:
        """RESTGracefulDeleteStrategy.CheckGracefulDelete: whether deletion waits a grace period; may set
        options.grace_period_seconds (pods: their terminationGracePeriodSeconds when bound to a node).
        Most resources are deleted at once."""
        return False

    def default(self, obj: Object) -> None:
        """The type's defaults (k8s SetDefaults_*), applied to every object a request sends, before
        admission: created, replaced, patched or applied."""

    def ttl(self, obj: Object) -> float:
        """Seconds the object lives after each write (k8s Store.TTLFunc); 0: until deleted."""
        return 0

    def field_set(self, obj: Object) -> dict[str, str]:
        """The fields a field selector can match (k8s GetAttrs)."""
        meta = obj.get("metadata") or {}
        fields = {"metadata.name": meta.get("name", "")}
        if self.info.namespaced:
            fields["metadata.namespace"] = meta.get("namespace", "")
        return fields


def _copy_field(src: Object, dst: Object, key: str) -> None:
    if key in src:
        dst[key] = src[key]
    else:
        dst.pop(key, None)


def _spec_changed(obj: Object, old: Object) -> bool:
    ignored = ("metadata", "status")
    return {k: v for k, v in obj.items() if k not in ignored} != {k: v for k, v in old.items() if k not in ignored}


# ---- the generic steps (k8s.io/apiserver/pkg/registry/rest/create.go, update.go) ----

def generate_name(prefix: str, namespace: str = "") -> str:
    """The prefix and a random suffix (seeded by (namespace, prefix) under --deterministic)."""
    prefix = prefix[:MAX_GENERATE_NAME_PREFIX]
    return prefix + current_ids().name_suffix(namespace, prefix)


def _error_group(strategy: Strategy) -> str:
    return strategy.error_group if strategy.error_group is not None else strategy.info.group


def before_create(strategy: Strategy, ctx: Context, obj: Object) -> None:
    meta = obj.setdefault("metadata", {})
    if strategy.info.namespaced:
        if not meta.get("namespace"):
            meta["namespace"] = ctx.namespace
    else:
        meta.pop("namespace", None)
    for system_field in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "generation"):
        meta.pop(system_field, None)
    # The system fields and a generated name come first: PrepareForCreate may use them (a Job's selector).
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = generate_name(meta["generateName"], meta.get("namespace", ""))
    meta["uid"] = new_uid(strategy.info.resource, meta.get("namespace", ""), meta.get("name", ""))
    meta["creationTimestamp"] = now_rfc3339()
    strategy.prepare_for_create(ctx, obj)
    errs = strategy.validate(ctx, obj)
    if errs:
        raise errors.invalid(strategy.info.kind, _error_group(strategy), meta.get("name", ""), errs)
    strategy.canonicalize(obj)


def before_update(strategy: Strategy, ctx: Context, obj: Object, old: Object) -> None:
    meta = obj.setdefault("metadata", {})
    old_meta = old.get("metadata") or {}
    if strategy.info.namespaced:
        meta.setdefault("namespace", ctx.namespace)
    # System fields are the server's: keep the stored values whatever the client sent.
    for system_field in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                         "generation", "selfLink"):
        if system_field in old_meta:
            meta[system_field] = old_meta[system_field]
        else:
            meta.pop(system_field, None)
    strategy.prepare_for_update(ctx, obj, old)
    errs = strategy.validate_update(ctx, obj, old)
    if not strategy.update_validates_fully:
        errs += strategy.validate(ctx, obj)
    if errs:
        raise errors.invalid(strategy.info.kind, _error_group(strategy), meta.get("name", ""), errs)
    strategy.canonicalize(obj)
