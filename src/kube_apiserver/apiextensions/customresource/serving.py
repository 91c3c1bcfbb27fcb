"""Which custom resources the apiextensions server serves (the crdHandler's serving info and the
discovery controller): every served version of a CRD whose names are accepted becomes routes, discovery
and OpenAPI of its group version, rebuilt when the CRD changes and removed when it goes."""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from ...apimachinery import deepjson, errors
from ...lazyimport import lazy_import
from ...registry.context import Context
from ...registry.rest import ResourceInfo
from ...registry.store import Store
from ...registry.subresource import StatusREST, SubresourceStrategy
from ...server.generic_api_server import GenericAPIServer
from ...storage.factory import StorageFactory
from .. import conditions
from .conversion import Converter, ConvertingStorage, NoneConverter
from .openapi import own_definitions, own_definitions_v2, schema_source
from .scale import ScalePaths, ScaleREST
from .strategy import CustomResourceStrategy, VersionSchema
from .table import new_table

if TYPE_CHECKING:
    from .. import schema
else:
    schema = lazy_import("kube_apiserver.apiextensions.schema")  # ~60 ms: once a CRD is served

log = logging.getLogger("kube_apiserver.apiextensions")
Object = dict[str, Any]
_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
# crdHandler.tearDown: a deleted CRD's storage lives on this long, so that the requests that already hold
# it finish against a watch cache that still follows the storage (a stopped one would keep a consistent
# read waiting for a revision it never reaches).
TEARDOWN_DELAY = 1.0


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sorts versions as Kubernetes prefers them: GA, then beta, then alpha, newest first; other names
    last, alphabetically (version.CompareKubeAwareVersionStrings)."""
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), "")


def keep_status_for_custom_resource(new: Object, old: Object) -> Object:
    """statusStrategy.PrepareForUpdate: everything from the stored object but status (and the managed
    fields the status write recorded)."""
    merged = copy.deepcopy(old)
    if "status" in new:
        merged["status"] = new["status"]
    else:
        merged.pop("status", None)
    managed = (new.get("metadata") or {}).get("managedFields")
    if managed is not None:
        merged["metadata"]["managedFields"] = managed
    merged["metadata"]["resourceVersion"] = (new.get("metadata") or {}).get("resourceVersion",
                                                                          old["metadata"].get("resourceVersion"))
    return merged


class CustomResourceStore(Store):
    """The generic Store, refusing creation while the CRD is being deleted (forbidCreateAdmission)."""

    terminating = False
    warnings: tuple[str, ...] = ()
    definitions: dict[str, Object] = {}  # this version's OpenAPI definitions

    async def create(self, ctx: Context, obj: Object, create_validation: Any = None,
                     options: dict[str, Any] | None = None) -> Object:
        if self.terminating:
            raise errors.method_not_supported(self.info.resource, self.info.group, "CREATE")
        return await super().create(ctx, obj, create_validation, options)

    async def update(self, ctx: Context, name: str, obj_info: Any, create_validation: Any = None,
                     update_validation: Any = None, force_allow_create: bool = False,
                     options: dict[str, Any] | None = None) -> tuple[Object, bool]:
        if self.terminating:
            create_validation = _refuse_create(self)
        return await super().update(ctx, name, obj_info, create_validation, update_validation, force_allow_create,
                                    options)


def _refuse_create(store: Store) -> Any:
    async def refuse(ctx: Context, obj: Object) -> None:
        raise errors.method_not_supported(store.info.resource, store.info.group, "CREATE")
    return refuse


class CustomResourceServing:
    def __init__(self, server: GenericAPIServer, storage: StorageFactory,
                 converters: Callable[[Object], Converter] | None = None):
        self.server = server
        self.storage = storage
        # name -> (the CRD as served, version -> {path: REST storage})
        self.served: dict[str, tuple[Object, dict[str, dict[str, Any]]]] = {}
        self.new_converter = converters or (lambda crd: NoneConverter())
        self._teardowns: set[asyncio.Task[None]] = set()

    def store_of(self, name: str) -> Store | None:
        """A store of the CRD's objects (its storage version's when served), to list and delete them all."""
        served = self.served.get(name)
        if served is None:
            return None
        crd, versions = served
        paths = versions.get(conditions.storage_version(crd)) or next(iter(versions.values()), None)
        plural = ((crd.get("status") or {}).get("acceptedNames") or {}).get("plural") or crd["spec"]["names"]["plural"]
        return paths.get(plural) if paths else None

    def serving(self, crd: Object) -> bool:
        return conditions.is_true(crd, conditions.NAMES_ACCEPTED) or \
            conditions.is_true(crd, conditions.ESTABLISHED)

    async def sync(self, name: str, crd: Object | None) -> None:
        """Brings the routes of one CRD's group in line with the CRD (None: it is gone)."""
        previous = self.served.get(name)
        groups = {previous[0]["spec"]["group"]} if previous else set()
        if crd is not None and self.serving(crd):
            if previous is None or _signature(previous[0]) != _signature(crd):
                self.served[name] = (crd, self._storages(crd))
            else:
                self._set_terminating(previous[1], conditions.is_terminating(crd))
            groups.add(crd["spec"]["group"])
        elif previous is not None:
            del self.served[name]
            prefix = _key_prefix(previous[0])
            if crd is None:
                self._tear_down_later(prefix)
        for group in groups:
            self._install_group(group)

    def _tear_down_later(self, prefix: str) -> None:
        task = asyncio.get_running_loop().create_task(self._tear_down(prefix))
        self._teardowns.add(task)
        task.add_done_callback(self._teardowns.discard)

    async def _tear_down(self, prefix: str) -> None:
        await asyncio.sleep(TEARDOWN_DELAY)
        if any(_key_prefix(crd) == prefix for crd, _ in self.served.values()):
            return  # a CRD of the same resource was created again meanwhile: its storage is this one
        await self.storage.release(prefix)

    async def stop(self) -> None:
        """Storage torn down at shutdown anyway: pending teardowns are dropped."""
        for task in list(self._teardowns):
            task.cancel()
        await asyncio.gather(*self._teardowns, return_exceptions=True)

    def _set_terminating(self, versions: dict[str, dict[str, Any]], terminating: bool) -> None:
        for paths in versions.values():
            for storage in paths.values():
                if isinstance(storage, CustomResourceStore):
                    storage.terminating = terminating

    def _install_group(self, group: str) -> None:
        versions: dict[str, dict[str, Any]] = {}
        definitions: dict[str, dict[str, Object]] = {}
        definitions_v2: dict[str, dict[str, Object]] = {}
        for crd, storages in self.served.values():
            if crd["spec"]["group"] != group:
                continue
            for version, paths in storages.items():
                versions.setdefault(version, {}).update(paths)
                store = next(iter(paths.values()))
                definitions.setdefault(version, {}).update(store.definitions)
                definitions_v2.setdefault(version, {}).update(store.definitions_v2)
        installed = {v for g, v in self.server.restful.group_versions if g == group}
        for version in installed - set(versions):
            self.server.remove_group_version(group, version)
        for version, paths in versions.items():
            schemas = schema_source(self.server.config.schemas, definitions[version], definitions_v2[version])
            self.server.install_group_version(group, version, paths, schemas, custom_resource=True)
        if versions:
            self.server.config.discovery.order_versions(group, sorted(versions, key=version_priority))
            self.server.restful.root_paths.add("/apis")

    def _storages(self, crd: Object) -> dict[str, dict[str, Any]]:
        """version -> {plural, plural/status, plural/scale: REST storage} for every served version."""
        spec, names = crd["spec"], (crd.get("status") or {}).get("acceptedNames") or crd["spec"]["names"]
        stored_version = conditions.storage_version(crd)
        shared = self.storage.for_resource(_key_prefix(crd))
        converter: Converter = self.new_converter(crd)
        terminating = conditions.is_terminating(crd)
        out: dict[str, dict[str, Any]] = {}
        for version in spec.get("versions") or []:
            if not version.get("served"):
                continue
            out[version["name"]] = self._version_storages(crd, version, names, shared, converter, stored_version)
            self._set_terminating({"": out[version["name"]]}, terminating)
        return out

    def _version_storages(self, crd: Object, version: Object, names: Object, shared: Any, converter: Converter,
                          stored_version: str) -> dict[str, Any]:
        spec, plural = crd["spec"], names.get("plural") or crd["spec"]["names"]["plural"]
        group, kind = spec["group"], names.get("kind") or spec["names"]["kind"]
        info = ResourceInfo(group, version["name"], plural, kind, names.get("singular", ""),
                            spec.get("scope") == "Namespaced", tuple(names.get("shortNames") or ()),
                            tuple(names.get("categories") or ()), names.get("listKind", ""))
        subresources = version.get("subresources") or {}
        scale = ScalePaths.of(subresources.get("scale"))
        strategy = CustomResourceStrategy(info, VersionSchema.of(version), "status" in subresources, scale)
        storage = ConvertingStorage(shared, converter, info.api_version, f"{group}/{stored_version}",
                                    defaults_on_read(crd, stored_version))
        store = CustomResourceStore(info, strategy, storage, _key_prefix(crd),
                                    new_table(version.get("additionalPrinterColumns")))
        props = (version.get("schema") or {}).get("openAPIV3Schema")
        store.definitions = own_definitions(props, group, version["name"], kind, info.list_kind_name)
        store.definitions_v2 = own_definitions_v2(props, group, version["name"], kind, info.list_kind_name)
        store.warnings = deprecation_warnings(crd, version)
        paths: dict[str, Any] = {plural: store}
        if "status" in subresources:
            status_strategy = SubresourceStrategy(strategy, keep_status_for_custom_resource)
            status_strategy.reset_fields = (("metadata",), ("spec",))
            paths[f"{plural}/status"] = StatusREST(store, strategy=status_strategy)
        if scale is not None:
            paths[f"{plural}/scale"] = ScaleREST(store, scale)
        return paths


def defaults_on_read(crd: Object, stored_version: str) -> Callable[[Object], Object] | None:
    """Objects read from storage get the storage version's defaults (those added to the schema after
    they were written); a copy is made only for an object the defaults change."""
    version = conditions.version_of(crd, stored_version) or {}
    props = (version.get("schema") or {}).get("openAPIV3Schema")
    if not isinstance(props, dict) or b'"default"' not in deepjson.dumps(props):
        return None
    structural = schema.new_structural(props)

    def on_read(obj: Object) -> Object:
        defaulted = schema.deep_copy_json(obj)
        schema.default(defaulted, structural)
        return obj if defaulted == obj else defaulted
    return on_read


def deprecation_warnings(crd: Object, version: Object) -> tuple[str, ...]:
    """A deprecated version's warning: its own, or defaultDeprecationWarning (naming the newest served
    version that is not deprecated and is newer)."""
    if not version.get("deprecated"):
        return ()
    if version.get("deprecationWarning") is not None:
        return (version["deprecationWarning"],)
    spec, name = crd["spec"], version["name"]
    message = f"{spec['group']}/{name} {spec['names']['kind']} is deprecated"
    newer = [v["name"] for v in spec.get("versions") or [] if v.get("served") and not v.get("deprecated")
             and version_priority(v["name"]) < version_priority(name)]
    if newer:
        message += f"; use {spec['group']}/{min(newer, key=version_priority)} {spec['names']['kind']}"
    return (message,)


def _key_prefix(crd: Object) -> str:
    names = (crd.get("status") or {}).get("acceptedNames") or {}
    return f"/registry/{crd['spec']['group']}/{names.get('plural') or crd['spec']['names']['plural']}"


def _signature(crd: Object) -> bytes:
    """What the routes are built from: a change of anything else (status conditions) keeps them."""
    status = crd.get("status") or {}
    return deepjson.dumps([crd["metadata"].get("uid"), crd["spec"], status.get("acceptedNames")],
                        option=orjson.OPT_SORT_KEYS)
