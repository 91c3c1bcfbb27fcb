"""The generic registry Store (k8s.io/apiserver/pkg/registry/generic/registry.Store): every verb of a
resource on top of storage.Interface, with the resource's strategy deciding what differs."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

from ..apimachinery import errors, field
from ..apimachinery.clock import wall_now
from ..storage import interface as storage
from ..storage.factory import StorageFactory
from .context import Context
from .options import DeleteOptions, ListQuery, compile_selection
from .rest import ResourceInfo, UpdatedObjectInfo, ValidateObjectFunc, ValidateObjectUpdateFunc
from .strategy import Strategy, before_create, before_update, generate_name
from .table import TableConvertor, default_table_convertor

Object = dict[str, Any]
GENERATE_NAME_RETRIES = 8


def path_segment_errors(name: str) -> list[str]:
    if "/" not in name and "%" not in name and name not in (".", ".."):
        return []  # every valid name: no list built
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


class Store:
    def __init__(self, info: ResourceInfo, strategy: Strategy, storage_: storage.Interface | StorageFactory,
                 key_prefix: str, table: TableConvertor | None = None, return_deleted_object: bool = False):
        self.info = info
        self.strategy = strategy
        self.key_prefix = key_prefix.rstrip("/")
        if isinstance(storage_, StorageFactory):
            storage_ = storage_.for_resource(self.key_prefix, (info.group, info.resource))
        self.storage: storage.Interface = storage_
        self.table = table or default_table_convertor()
        self.return_deleted_object = return_deleted_object
        self.supported_fields = {"metadata.name", *strategy.selectable_fields}
        if info.namespaced:
            self.supported_fields.add("metadata.namespace")

    # ---- keys and errors ----

    def key_root(self, ctx: Context) -> str:
        if self.info.namespaced and ctx.namespace:
            return f"{self.key_prefix}/{ctx.namespace}/"
        return f"{self.key_prefix}/"

    def key(self, ctx: Context, name: str) -> str:
        if self.info.namespaced and not ctx.namespace:
            raise errors.bad_request("Namespace parameter required.")
        if not name:  # an object whose validation lets it have none (core/v1 events)
            raise errors.bad_request("Name parameter required.")
        msgs = path_segment_errors(name)
        if msgs:
            raise errors.bad_request(f'Name parameter invalid: "{name}": {";".join(msgs)}')
        if self.info.namespaced:
            return f"{self.key_prefix}/{ctx.namespace}/{name}"
        return f"{self.key_prefix}/{name}"

    def interpret(self, err: storage.StorageError, name: str) -> errors.StatusError:
        group, resource = self.info.group, self.info.resource
        if isinstance(err, storage.KeyNotFoundError):
            return errors.not_found(resource, group, name)
        if isinstance(err, storage.KeyExistsError):
            return errors.already_exists(resource, group, name)
        if isinstance(err, storage.ConflictError):
            return errors.conflict(resource, group, name, err.detail)
        if isinstance(err, storage.ExpiredError):
            status = errors.expired(str(err))
            status.continue_token = err.continue_token  # type: ignore[attr-defined]
            return status
        if isinstance(err, storage.TooLargeResourceVersionError):
            return errors.StatusError(504, "Timeout", f"Timeout: {err}", {
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1})
        return errors.internal_error(err)

    # ---- verbs ----

    async def get(self, ctx: Context, name: str, options: dict[str, Any] | None = None) -> Object:
        try:
            return await self.storage.get(self.key(ctx, name))
        except storage.StorageError as err:
            raise self.interpret(err, name) from None

    async def create(self, ctx: Context, obj: Object, create_validation: ValidateObjectFunc | None = None,
                     options: dict[str, Any] | None = None) -> Object:
        # Only a name generated here is generated again on a conflict (createWithGenerateNameRetry): a name
        # the client gave, with or without generateName, is kept and an existing one is AlreadyExists.
        given = obj.get("metadata") or {}
        generated = not given.get("name") and bool(given.get("generateName"))
        await ctx.run_phase(before_create, self.strategy, ctx, obj)
        if create_validation is not None:
            await create_validation(ctx, obj)
        meta = obj["metadata"]
        for attempt in range(GENERATE_NAME_RETRIES if generated else 1):
            if attempt:
                meta["name"] = generate_name(meta["generateName"], meta.get("namespace", ""))
            key = self.key(ctx, meta.get("name") or "")
            try:
                if ctx.dry_run:
                    await self._check_absent(key, meta["name"])
                    return obj
                return await self.storage.create(key, obj, self.strategy.ttl(obj))
            except storage.KeyExistsError as err:
                last = err
        raise self.interpret(last, meta["name"])

    async def _check_absent(self, key: str, name: str) -> None:
        try:
            await self.storage.get(key)
        except storage.KeyNotFoundError:
            return
        raise errors.already_exists(self.info.resource, self.info.group, name)

    async def update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                     create_validation: ValidateObjectFunc | None = None,
                     update_validation: ValidateObjectUpdateFunc | None = None,
                     force_allow_create: bool = False, options: dict[str, Any] | None = None,
                     ) -> tuple[Object, bool]:
        key = self.key(ctx, name)
        created = False

        async def try_update(existing: Object) -> Object:
            nonlocal created
            created = not existing
            if created:
                return await self._create_on_update(ctx, name, obj_info, create_validation, force_allow_create)
            obj = await obj_info.updated_object(ctx, existing)
            self._check_resource_version(obj, existing, name)
            await ctx.run_phase(before_update, self.strategy, ctx, obj, existing)
            if update_validation is not None:
                await update_validation(ctx, obj, existing)
            return obj

        try:
            if ctx.dry_run:
                return await self._dry_run_update(ctx, key, try_update), created
            out = await self.storage.guaranteed_update(key, try_update, ignore_not_found=True, ttl=self.strategy.ttl)
        except storage.StorageError as err:
            raise self.interpret(err, name) from None
        if self.should_delete_during_update(out):
            return await self._delete_emptied(ctx, key, name, out), False
        return out, created

    async def _delete_emptied(self, ctx: Context, key: str, name: str, obj: Object) -> Object:
        """Completes the deletion an update allowed (deleteWithoutFinalizers): a later write that made
        the object wait again (a new finalizer) keeps it; one that deleted it already is no error."""
        while True:
            try:
                return await self._delete_now(ctx, key, name, obj)
            except ChangedSinceRead:
                pass
            except errors.StatusError as err:
                if err.code == 404:
                    return obj  # deleting is racy: several updates may remove the last finalizers
                raise
            try:
                obj = await self.storage.get(key)
            except storage.KeyNotFoundError:
                return obj
            if not self.should_delete_during_update(obj):
                return obj

    def should_delete_during_update(self, obj: Object) -> bool:
        """An update that removed the last finalizer of an object being deleted completes the deletion."""
        meta = obj.get("metadata") or {}
        return bool(meta.get("deletionTimestamp")) and not meta.get("finalizers") and \
            not meta.get("deletionGracePeriodSeconds")

    async def _dry_run_update(self, ctx: Context, key: str, try_update: Any) -> Object:
        try:
            existing = await self.storage.get(key)
        except storage.KeyNotFoundError:
            existing = {}
        out = await try_update(existing)
        if existing:
            out["metadata"]["resourceVersion"] = existing["metadata"]["resourceVersion"]
        return out

    async def _create_on_update(self, ctx: Context, name: str, obj_info: UpdatedObjectInfo,
                                create_validation: ValidateObjectFunc | None, force: bool) -> Object:
        if not (self.strategy.allow_create_on_update or force):
            raise errors.not_found(self.info.resource, self.info.group, name)
        obj = await obj_info.updated_object(ctx, None)
        if (obj.get("metadata") or {}).get("resourceVersion"):
            raise errors.not_found(self.info.resource, self.info.group, name)
        await ctx.run_phase(before_create, self.strategy, ctx, obj)
        if create_validation is not None:
            await create_validation(ctx, obj)
        return obj

    def _check_resource_version(self, obj: Object, existing: Object, name: str) -> None:
        meta = obj.setdefault("metadata", {})
        current = existing["metadata"]["resourceVersion"]
        requested = meta.get("resourceVersion")
        if not requested:
            if not self.strategy.allow_unconditional_update:
                raise errors.invalid(self.info.kind, self.info.group, name, [field.invalid(
                    field.Path("metadata", "resourceVersion"), "", "must be specified for an update")])
            meta["resourceVersion"] = current
        elif requested != current:
            raise errors.conflict(self.info.resource, self.info.group, name, errors.OPTIMISTIC_LOCK_MESSAGE)

    async def delete(self, ctx: Context, name: str, delete_validation: ValidateObjectFunc | None = None,
                     options: DeleteOptions | None = None) -> tuple[Object, bool]:
        """Returns (what to answer, whether the object is gone).

        What a delete does is decided on the object as read; when another writer changes it before the
        deletion is written, the decision is made again on what it wrote (GuaranteedUpdate's conflict retry),
        so only the client's own preconditions ever answer 409."""
        requested = options or DeleteOptions()
        key = self.key(ctx, name)
        while True:
            # Deciding changes the options (rest.BeforeDelete sets the grace period): each decision, and each
            # object of a collection (DeleteCollection deep-copies them), starts from the client's.
            options = dataclasses.replace(requested)
            existing = await self.get(ctx, name)
            preconditions = storage.Preconditions(options.preconditions_uid, options.preconditions_resource_version)
            try:
                preconditions.check(key, existing)
            except storage.ConflictError as err:
                raise self.interpret(err, name) from None
            if delete_validation is not None:
                await delete_validation(ctx, existing)
            grace = self._grace_period(existing, options)
            if grace == PENDING:
                return existing, False  # a graceful deletion is under way; only a shorter period changes it
            finalizers = deletion_finalizers(existing, options, orphan_by_default=self.strategy.orphan_by_default)
            try:
                if grace or finalizers:
                    return await self._mark_for_deletion(ctx, key, name, options, preconditions, grace), False
                if ctx.dry_run:
                    return self._deleted_answer(existing), True
                return await self._delete_now(ctx, key, name, existing, preconditions), True
            except ChangedSinceRead:
                continue

    def _grace_period(self, obj: Object, options: DeleteOptions) -> int | str:
        """rest.BeforeDelete: the grace period to wait (0: none), or PENDING when a graceful deletion
        already under way stays as it is."""
        if options.grace_period_seconds is not None and options.grace_period_seconds < 0:
            options.grace_period_seconds = 1  # negative values mean 1s on the delete path
        meta = obj["metadata"]
        if meta.get("deletionTimestamp"):
            current = meta.get("deletionGracePeriodSeconds")
            if not current:
                return 0
            shorter = options.grace_period_seconds
            return shorter if shorter is not None and shorter < current else PENDING
        if not self.strategy.check_graceful_delete(obj, options):
            return 0
        return options.grace_period_seconds or 0

    async def _mark_for_deletion(self, ctx: Context, key: str, name: str, options: DeleteOptions,
                                 preconditions: storage.Preconditions, grace: int = 0) -> Object:
        """Set deletionTimestamp (now + the grace period) and the finalizers; the end of the grace period
        (a delete with gracePeriodSeconds=0, by the kubelet) or the removal of the last finalizer
        deletes the object (k8s Store.updateForGracefulDeletionAndFinalizers). The finalizers are those of
        the object as it is when written, so a finalizer another writer just added is kept."""

        async def mark(current: Object) -> Object:
            finalizers = deletion_finalizers(current, options, orphan_by_default=self.strategy.orphan_by_default)
            if not grace and not finalizers:
                raise ChangedSinceRead(key)  # its finalizers went meanwhile: it is to be deleted now
            meta = current["metadata"]
            under_way = meta.get("deletionGracePeriodSeconds")
            if meta.get("deletionTimestamp") and under_way and grace < under_way:
                # Only a shorter period changes a graceful deletion under way: its end comes that much sooner.
                meta["deletionTimestamp"] = _shifted(meta["deletionTimestamp"], grace - under_way)
                meta["deletionGracePeriodSeconds"] = grace
            elif not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = _after(grace)
                meta["deletionGracePeriodSeconds"] = grace
                if grace and meta.get("generation"):
                    meta["generation"] += 1
            if finalizers:
                meta["finalizers"] = finalizers
            else:
                meta.pop("finalizers", None)
            return current

        if ctx.dry_run:
            return await mark(await self.get(ctx, name))
        try:
            return await self.storage.guaranteed_update(key, mark, preconditions)
        except storage.StorageError as err:
            raise self.interpret(err, name) from None

    async def _delete_now(self, ctx: Context, key: str, name: str, existing: Object,
                          preconditions: storage.Preconditions | None = None) -> Object:
        """Deletes the object if it is still `existing`; raises ChangedSinceRead when another write came
        first (the client's preconditions are checked first: theirs fail with 409)."""
        read = existing["metadata"]["resourceVersion"]

        async def unchanged(current: Object) -> None:
            if current["metadata"].get("resourceVersion") != read:
                raise ChangedSinceRead(key)

        try:
            deleted = await self.storage.delete(key, preconditions, unchanged)
        except storage.StorageError as err:
            raise self.interpret(err, name) from None
        return self._deleted_answer(deleted)

    def _deleted_answer(self, obj: Object) -> Object:
        if self.return_deleted_object:
            return obj
        meta = obj["metadata"]
        details: dict[str, Any] = {"name": meta["name"]}
        if self.info.group:
            details["group"] = self.info.group
        details["kind"] = self.info.resource
        details["uid"] = meta.get("uid", "")
        return errors.success_status(details)

    async def list(self, ctx: Context, query: ListQuery) -> Object:
        selection = compile_selection(query, self.strategy.field_set, self.supported_fields)
        opts = storage.ListOptions(query.resource_version, query.resource_version_match, query.limit,
                                   query.continue_token, None if selection.empty else selection.matches,
                                   selection.empty)
        try:
            result = await self.storage.get_list(self.key_root(ctx), opts)
        except ValueError as err:
            raise errors.bad_request(str(err)) from None
        except storage.StorageError as err:
            raise self.interpret(err, "") from None
        for item in result.items:
            item.setdefault("apiVersion", self.info.api_version)
            item.setdefault("kind", self.info.kind)
        return _list_object(self.info, result)

    async def watch(self, ctx: Context, query: ListQuery) -> storage.Watcher:
        selection = compile_selection(query, self.strategy.field_set, self.supported_fields)
        try:
            return await self.storage.watch(self.key_root(ctx), query.resource_version,
                                            None if selection.empty else selection.matches,
                                            query.send_initial_events, query.allow_watch_bookmarks)
        except storage.StorageError as err:
            # Past authentication, admission and parsing, a watch fails as a stream with one ERROR
            # event, not as an HTTP error (k8s cacher newErrWatcher).
            return ErrorWatcher(self.interpret(err, "").status())

    async def delete_collection(self, ctx: Context, delete_validation: ValidateObjectFunc | None,
                                options: DeleteOptions, query: ListQuery) -> Object:
        listed = await self.list(ctx, ListQuery(query.label_selector, query.field_selector,
                                                query.resource_version, query.resource_version_match))
        deleted = []
        for item in listed["items"]:
            item_ctx = Context(item["metadata"].get("namespace", ""), ctx.user, ctx.dry_run)
            try:
                await self.delete(item_ctx, item["metadata"]["name"], delete_validation, options)
            except errors.StatusError as err:
                if err.code != 404:
                    raise
                continue
            deleted.append(item)
        listed["items"] = deleted
        return listed


PENDING = "pending"


class ChangedSinceRead(Exception):  # noqa: N818 - a signal to decide again, not an error anyone sees
    """The object was written between the read a deletion was decided on and the deletion."""

    def __init__(self, key: str):
        super().__init__(f"{key} changed since it was read")


def _after(seconds: int) -> str:
    when = wall_now() + datetime.timedelta(seconds=seconds)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _shifted(stamp: str, seconds: int) -> str:
    try:
        when = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:  # not a timestamp this server wrote: the period counts from now
        return _after(seconds)
    return (when + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"


def deletion_finalizers(obj: Object, options: DeleteOptions | None, finalizers: list[str] | None = None,
                        orphan_by_default: bool = False) -> list[str]:
    """The finalizers an object keeps while being deleted, with those the propagation policy asks for:
    Orphan adds `orphan`, Foreground adds `foregroundDeletion`, Background drops both. Without a policy
    (nor a policy finalizer on the object) the strategy's default applies."""
    current = list(finalizers if finalizers is not None else (obj.get("metadata") or {}).get("finalizers") or [])
    if options is None:
        return current
    policy = options.propagation_policy
    if policy is None and options.orphan_dependents is not None:
        policy = "Orphan" if options.orphan_dependents else "Background"
    if policy is None and orphan_by_default and not {ORPHAN, FOREGROUND} & set(current):
        policy = "Orphan"
    wanted = {"Orphan": ORPHAN, "Foreground": FOREGROUND}.get(policy or "")
    if policy is not None:
        current = [f for f in current if f not in (ORPHAN, FOREGROUND) or f == wanted]
        if wanted and wanted not in current:
            current.append(wanted)
    return current


class ErrorWatcher:
    """A watch that yields one ERROR event and ends."""

    def __init__(self, status: Object):
        self.events = [storage.WatchEvent(storage.ERROR, status, 0)]

    def __aiter__(self) -> ErrorWatcher:
        return self

    async def __anext__(self) -> storage.WatchEvent:
        if not self.events:
            raise StopAsyncIteration
        return self.events.pop()

    def request_bookmark(self) -> None:
        pass

    async def stop(self) -> None:
        self.events = []


def _list_object(info: ResourceInfo, result: storage.ListResult) -> Object:
    meta: dict[str, Any] = {"resourceVersion": str(result.resource_version)}
    if result.continue_token:
        meta["continue"] = result.continue_token
    if result.remaining_item_count is not None:
        meta["remainingItemCount"] = result.remaining_item_count
    return {"kind": info.list_kind_name, "apiVersion": info.api_version, "metadata": meta, "items": result.items}
