"""The post-start hook priority-and-fairness-config-producer (pkg/registry/flowcontrol/ensurer,
pkg/registry/flowcontrol/rest): missing bootstrap objects are created; the mandatory ones are kept to
their fixed spec; suggested ones are updated while their autoupdate-spec annotation allows it; objects
kube-apiserver once made (annotation "true") that it no longer makes are deleted."""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable
from typing import Any

from ...apimachinery import errors
from ...registry.context import Context, UserInfo
from ...registry.options import ListQuery
from ...registry.rest import UpdatedObjectInfo
from . import structs
from .bootstrap import (
    MANDATORY_FLOW_SCHEMAS,
    MANDATORY_PRIORITY_LEVELS,
    SUGGESTED_FLOW_SCHEMAS,
    SUGGESTED_PRIORITY_LEVELS,
    fresh,
)
from .common import AUTO_UPDATE_ANNOTATION, EXEMPT, as_dict, parse_bool

log = logging.getLogger("kube_apiserver.api")
Object = dict[str, Any]
Equalish = Callable[[Object, Object], bool]
FIELD_MANAGER = "api-priority-and-fairness-config-producer-v1"
SYSTEM_USER = UserInfo("system:apiserver", groups=("system:masters",))


def flow_schema_equalish(boot: Object, current: Object) -> bool:
    return structs.semantic_equal(structs.flow_schema_spec(boot["spec"]),
                                  structs.flow_schema_spec(as_dict(current.get("spec"))))


def priority_level_equalish(boot: Object, current: Object) -> bool:
    """plcSpecEqualish: the exempt level keeps what the operator set in its exempt section."""
    expected, actual = copy.deepcopy(boot["spec"]), as_dict(current.get("spec"))
    if boot["metadata"]["name"] == EXEMPT:
        if not isinstance(actual.get("exempt"), dict):
            return False
        expected["exempt"] = {key: actual["exempt"].get(key) for key in expected["exempt"]}
    return structs.semantic_equal(structs.priority_level_spec(expected), structs.priority_level_spec(actual))


def _auto_update_spec(current: Object) -> bool:
    """shouldUpdateSpec: the annotation when it is a boolean, else whether the spec was never changed."""
    meta = current["metadata"]
    parsed = parse_bool(as_dict(meta.get("annotations")).get(AUTO_UPDATE_ANNOTATION))
    return parsed if parsed is not None else meta.get("generation") == 1


def updated(current: Object, boot: Object, mandatory: bool, equalish: Equalish) -> Object | None:
    """ShouldUpdate: the object to write back, None when it is up to date."""
    auto_update = mandatory or _auto_update_spec(current)
    annotations = as_dict(current["metadata"].get("annotations"))
    fix_annotation = parse_bool(annotations.get(AUTO_UPDATE_ANNOTATION)) is not auto_update
    fix_spec = auto_update and not equalish(boot, current)
    if not (fix_annotation or fix_spec):
        return None
    new = copy.deepcopy(current)
    if fix_annotation:
        new["metadata"]["annotations"] = {**annotations, AUTO_UPDATE_ANNOTATION: str(auto_update).lower()}
    if fix_spec:
        new["spec"] = copy.deepcopy(boot["spec"])
    return new


class Ensurer:
    """Works on the two stores directly, as the loopback client of kube-apiserver would."""

    def __init__(self, flow_schemas: Any, priority_levels: Any):
        self.flow_schemas, self.priority_levels = flow_schemas, priority_levels
        self.ctx = Context(user=SYSTEM_USER, field_manager=FIELD_MANAGER)

    async def ensure(self) -> None:
        """ensure(): suggested, then mandatory configuration, then removal of dropped objects."""
        await self._ensure_all(self.priority_levels, SUGGESTED_PRIORITY_LEVELS, False, priority_level_equalish)
        await self._ensure_all(self.flow_schemas, SUGGESTED_FLOW_SCHEMAS, False, flow_schema_equalish)
        await self._ensure_all(self.priority_levels, MANDATORY_PRIORITY_LEVELS, True, priority_level_equalish)
        await self._ensure_all(self.flow_schemas, MANDATORY_FLOW_SCHEMAS, True, flow_schema_equalish)
        await self._remove_unwanted(self.flow_schemas, MANDATORY_FLOW_SCHEMAS + SUGGESTED_FLOW_SCHEMAS)
        await self._remove_unwanted(self.priority_levels, MANDATORY_PRIORITY_LEVELS + SUGGESTED_PRIORITY_LEVELS)

    async def _ensure_all(self, rest: Any, boots: tuple[Object, ...], mandatory: bool, equalish: Equalish) -> None:
        # independent objects: ensured together, so that one commit carries many of them
        await asyncio.gather(*(self._ensure_one(rest, boot, mandatory, equalish) for boot in boots))

    async def _ensure_one(self, rest: Any, boot: Object, mandatory: bool, equalish: Equalish) -> None:
        store, name = rest.scope.storage, boot["metadata"]["name"]
        try:
            current = await store.get(self.ctx, name)
        except errors.StatusError as err:
            if err.code != 404:
                raise
            await self._create(rest, boot)
            return
        new = updated(current, boot, mandatory, equalish)
        if new is not None:
            await self._update(rest, name, current, new)

    async def _create(self, rest: Any, boot: Object) -> None:
        obj = fresh(boot)
        rest.scope.storage.strategy.default(obj)
        try:
            await rest.scope.storage.create(self.ctx, self._managed(rest, None, obj))
            log.info("created %s %s", boot["kind"], boot["metadata"]["name"])
        except errors.StatusError as err:
            if err.code != 409:
                raise

    async def _update(self, rest: Any, name: str, current: Object, new: Object) -> None:
        async def transform(_ctx: Context, _old: Object | None) -> Object:
            return self._managed(rest, current, new)
        await rest.scope.storage.update(self.ctx, name, UpdatedObjectInfo(name, transform))
        log.info("updated %s %s to its bootstrap configuration", new.get("kind", ""), name)

    @staticmethod
    def _managed(rest: Any, live: Object | None, obj: Object) -> Object:
        manager = getattr(rest.scope, "field_manager", None)
        return obj if manager is None else manager.update(live, obj, FIELD_MANAGER)

    async def _remove_unwanted(self, rest: Any, boots: tuple[Object, ...]) -> None:
        """RemoveUnwantedObjects: only objects whose annotation says "true" are kube-apiserver's to delete."""
        wanted = {boot["metadata"]["name"] for boot in boots}
        store = rest.scope.storage
        for item in (await store.list(self.ctx, ListQuery()))["items"]:
            name = item["metadata"]["name"]
            annotations = as_dict(item["metadata"].get("annotations"))
            if name in wanted or parse_bool(annotations.get(AUTO_UPDATE_ANNOTATION)) is not True:
                continue
            try:
                await store.delete(self.ctx, name)
                log.info("deleted %s %s: no longer a bootstrap object", item.get("kind", ""), name)
            except errors.StatusError as err:
                if err.code != 404:
                    raise
