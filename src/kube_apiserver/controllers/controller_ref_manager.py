"""ControllerRefManager (pkg/controller/controller_ref_manager.go): which of the objects a controller's
selector finds are its own. An orphan that matches is adopted (a patch adding the controller's
reference, unless the controller is being deleted); an owned object that no longer matches is released
(a patch deleting the reference); objects another controller owns are left alone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ..apimachinery import errors
from ..apimachinery.labels import Selector
from .controller_utils import controller_of, delete_owner_ref_patch, owner_ref_controller_patch

Object = dict[str, Any]
# Patches one object (namespace, name, strategic merge patch).
Patcher = Callable[[str, str, Object], Awaitable[Any]]


class ControllerRefManager:
    def __init__(self, controller: Object, selector: Selector, api_version: str, kind: str, patch: Patcher,
                 can_adopt: Callable[[], Awaitable[None]] | None = None):
        """`can_adopt` raises when the controller may not adopt now (RecheckDeletionTimestamp: it was
        just deleted); asked once, before the first adoption."""
        self.controller = controller
        self.selector = selector
        self.api_version = api_version
        self.kind = kind
        self.patch = patch
        self._can_adopt = can_adopt
        self._can_adopt_error: Exception | None = None
        self._checked = False

    @property
    def uid(self) -> str:
        return self.controller["metadata"]["uid"]

    @property
    def deleting(self) -> bool:
        return bool(self.controller["metadata"].get("deletionTimestamp"))

    async def claim(self, objects: Iterable[Object], *filters: Callable[[Object], bool]) -> list[Object]:
        """The objects this controller owns once adoptions and releases are done; the first error is
        raised after every object was tried (utilerrors.NewAggregate)."""
        claimed, failures = [], []
        for obj in objects:
            try:
                if await self.claim_object(obj, lambda o: self._matches(o, filters)):
                    claimed.append(obj)
            except (errors.StatusError, AdoptionRefused) as err:
                failures.append(err)
        if failures:
            raise failures[0]
        return claimed

    def _matches(self, obj: Object, filters: tuple[Callable[[Object], bool], ...]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return self.selector.matches(labels) and all(f(obj) for f in filters)

    async def claim_object(self, obj: Object, match: Callable[[Object], bool]) -> bool:
        ref = controller_of(obj)
        if ref is not None:
            if ref.get("uid") != self.uid:
                return False  # another controller's
            if match(obj):
                return True
            if self.deleting:
                return False  # ignore: the garbage collector will take it
            await self._ignoring_not_found(self.release(obj))
            return False
        if self.deleting or not match(obj) or obj["metadata"].get("deletionTimestamp"):
            return False
        return await self._ignoring_not_found(self.adopt(obj))

    async def adopt(self, obj: Object) -> bool:
        await self._check_can_adopt(obj)
        meta = obj["metadata"]
        patch = owner_ref_controller_patch(self.controller, self.api_version, self.kind, meta["uid"])
        await self.patch(meta.get("namespace", ""), meta["name"], patch)
        return True

    async def release(self, obj: Object) -> bool:
        meta = obj["metadata"]
        try:
            await self.patch(meta.get("namespace", ""), meta["name"], delete_owner_ref_patch(meta["uid"], self.uid))
        except errors.StatusError as err:
            if err.code not in (404, 422):  # gone, or its uid changed (deleted and recreated): nothing to release
                raise
        return False

    async def _check_can_adopt(self, obj: Object) -> None:
        if not self._checked:
            self._checked = True
            if self._can_adopt is not None:
                try:
                    await self._can_adopt()
                except Exception as err:  # noqa: BLE001 - kept and reported for every adoption
                    self._can_adopt_error = err
        if self._can_adopt_error is not None:
            meta = obj["metadata"]
            raise AdoptionRefused(f"can't adopt {self.kind_of(obj)} {meta.get('namespace', '')}/{meta['name']} "
                                  f"({meta.get('uid', '')}): {self._can_adopt_error}")

    @staticmethod
    def kind_of(obj: Object) -> str:
        return obj.get("kind") or "object"

    @staticmethod
    async def _ignoring_not_found(call: Awaitable[bool]) -> bool:
        try:
            return await call
        except errors.StatusError as err:
            if err.code == 404:
                return False
            raise


class AdoptionRefused(Exception):
    """The controller may not adopt: it was deleted since its informer saw it."""


def recheck_deletion_timestamp(get: Callable[[], Awaitable[Object]]) -> Callable[[], Awaitable[None]]:
    """RecheckDeletionTimestamp: a fresh read of the controller (not the informer's) says whether it is
    being deleted, before anything is adopted for it."""

    async def check() -> None:
        obj = await get()
        meta = obj["metadata"]
        if meta.get("deletionTimestamp"):
            raise AdoptionRefused(f"{meta.get('namespace', '')}/{meta['name']} has just been deleted at "
                                  f"{meta['deletionTimestamp']}")

    return check
