"""The storage codec: values written as JSON, YAML or kube-apiserver's protobuf envelope, all read back;
custom resources always JSON; a store written as JSON still read (and rewritten) after switching to protobuf."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kube_apiserver.apimachinery import protobuf
from kube_apiserver.apimachinery.protowire import fields_of
from kube_apiserver.storage import interface as storage
from kube_apiserver.storage.cacher import Cacher
from kube_apiserver.storage.codec import (
    JSON,
    PROTOBUF,
    YAML,
    StorageCodec,
    UndecodableValueError,
    decode_value,
)
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV

TESTS = Path(__file__).resolve().parents[2]
MANIFESTS = sorted((TESTS / "manifests" / "valid").glob("*.yaml"))
STORED = json.loads((TESTS / "data" / "storage" / "stored-objects.json").read_text())
REFERENCE_VALUES = json.loads((TESTS / "data" / "storage" / "reference-values.json").read_text())
MAGIC = b"k8s\x00"


def builtin_manifests() -> list[tuple[str, dict[str, Any]]]:
    docs = []
    for path in MANIFESTS:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and protobuf.has_kind(doc.get("apiVersion", ""), doc.get("kind", "")):
                docs.append((f"{path.name}:{doc['kind']}", doc))
    return docs


def go_zero(value: Any) -> bool:
    return value in (None, "", 0, False, [], {}) and not (value == 0 and isinstance(value, float))


def differences(sent: Any, back: Any, path: str = "") -> list[str]:
    """What decoding changed beyond Go's view of zero values: a field Go's JSON leaves out when zero may be
    gone, one it writes when zero ({}, null) may appear; anything else (a value lost or altered) counts."""
    if isinstance(sent, dict) and isinstance(back, dict):
        out = []
        for key in sent.keys() | back.keys():
            if key not in back:
                out += [] if go_zero(sent[key]) else [f"{path}.{key} lost"]
            elif key not in sent:
                out += [] if _only_zeros(back[key]) else [f"{path}.{key} added"]
            else:
                out += differences(sent[key], back[key], f"{path}.{key}")
        return out
    if isinstance(sent, list) and isinstance(back, list) and len(sent) == len(back):
        return [
            d
            for i, (a, b) in enumerate(zip(sent, back, strict=True))
            for d in differences(a, b, f"{path}[{i}]")
        ]
    if sent == back and type(sent) is type(back):
        return []
    if (
        isinstance(sent, int | float)
        and not isinstance(sent, bool)
        and sent == back
        and isinstance(back, int)
    ):
        return []  # a whole float Go writes as an integer
    return [f"{path}: {sent!r} -> {back!r}"]


def _only_zeros(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_only_zeros(v) for v in value.values())
    return go_zero(value)


@pytest.mark.parametrize(("name", "manifest"), builtin_manifests(), ids=[n for n, _ in builtin_manifests()])
def test_every_builtin_manifest_round_trips_as_protobuf(name: str, manifest: dict[str, Any]) -> None:
    codec = StorageCodec(PROTOBUF)
    value = codec.encode(manifest)
    assert value.startswith(MAGIC)
    back = decode_value(value)
    assert (back["apiVersion"], back["kind"]) == (manifest["apiVersion"], manifest["kind"])
    expected = copy.deepcopy(manifest)
    for claim in expected.get("spec", {}).get("volumeClaimTemplates", []):  # typed, as apps/v1 serves them
        claim.update(apiVersion="v1", kind="PersistentVolumeClaim")
    assert differences(expected, back) == []
    assert decode_value(codec.encode(back)) == back  # what was read is written and read back unchanged


@pytest.mark.parametrize("media_type", [JSON, YAML])
def test_every_builtin_manifest_round_trips_exactly_as_text(media_type: str) -> None:
    codec = StorageCodec(media_type)
    for name, manifest in builtin_manifests():
        value = codec.encode(manifest)
        assert value.startswith(b"{") == (media_type == JSON), name
        assert decode_value(value) == manifest, name


# Stored objects whose JSON form holds a zero value Go's JSON encoder would not write (as the client sent it,
# or as defaulting set it), or lacks one it would; read from protobuf they are as kube-apiserver serves them.
GO_FORM_DIFFERS = {
    "/registry/apiregistration.k8s.io/apiservices/v1.": "spec.group is omitempty",
    "/registry/priorityclasses/corpus-high": "globalDefault is omitempty",
    "/registry/resourceclaimtemplates/corpus/single-gpu": "spec.metadata is a struct: {} when empty",
    # status.currentMetrics: null, a nil slice Go writes; left out when read (this server's code appends to it)
    "/registry/horizontalpodautoscalers/corpus/web": "status.currentMetrics is left out",
}


@pytest.mark.parametrize("key", sorted(STORED))
def test_what_the_server_stores_reads_back_the_same_from_protobuf(key: str) -> None:
    obj = STORED[key]
    codec = StorageCodec(PROTOBUF)
    value = codec.encode(obj)
    back = codec.decode(value, 7)
    assert back.pop("metadata")["resourceVersion"] == "7"
    expected = {k: v for k, v in obj.items() if k != "metadata"}
    if not protobuf.has_kind(obj["apiVersion"], obj["kind"]):
        assert value.startswith(b"{")  # a custom resource
    elif key in GO_FORM_DIFFERS:
        assert differences(expected, back) == []
        assert back != expected
        return
    assert back == expected


def test_custom_resources_and_unknown_kinds_stay_json() -> None:
    codec = StorageCodec(PROTOBUF)
    custom = {
        "apiVersion": "corpus.example.com/v1",
        "kind": "Backup",
        "metadata": {"name": "b"},
        "spec": {"x": 1},
    }
    for obj in (custom, {"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "d"}}):
        value = codec.encode(obj)
        assert json.loads(value) == obj


def test_resource_version_is_never_stored_and_set_from_the_revision() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "41"}}
    for media_type in (JSON, YAML, PROTOBUF):
        codec = StorageCodec(media_type)
        value = codec.encode(obj)
        assert b"41" not in value
        assert codec.decode(value, 42)["metadata"]["resourceVersion"] == "42"
    assert obj["metadata"]["resourceVersion"] == "41"  # the caller's object is left alone


def test_statefulset_claim_templates_keep_their_type_through_protobuf() -> None:
    sts = STORED["/registry/statefulsets/corpus/db"]
    back = decode_value(StorageCodec(PROTOBUF).encode(sts))
    templates = back["spec"]["volumeClaimTemplates"]
    assert [(t["apiVersion"], t["kind"]) for t in templates] == [("v1", "PersistentVolumeClaim")]


def test_whole_floats_read_as_go_writes_them() -> None:
    crd = STORED["/registry/apiextensions.k8s.io/customresourcedefinitions/backups.corpus.example.com"]
    back = decode_value(StorageCodec(PROTOBUF).encode(crd))
    schema = back["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    minimum = schema["properties"]["spec"]["properties"]["retentionDays"]["minimum"]
    assert minimum == 1 and isinstance(minimum, int)


def test_nil_slices_stay_absent_so_code_can_append_to_them() -> None:
    """A CRD created without conditions (Go writes `conditions: null`, no omitempty): read from protobuf the
    field is absent, as in JSON storage, so the establishing controller's setdefault-and-append works."""
    crd = copy.deepcopy(
        STORED["/registry/apiextensions.k8s.io/customresourcedefinitions/backups.corpus.example.com"]
    )
    crd["status"] = {"storedVersions": ["v1"]}
    back = decode_value(StorageCodec(PROTOBUF).encode(crd))
    assert "conditions" not in back["status"]
    assert back["status"]["acceptedNames"] == {"plural": "", "kind": ""}  # a struct: scalars Go always writes


@pytest.mark.parametrize("name", sorted(REFERENCE_VALUES))
def test_values_written_by_kube_apiserver_are_read(name: str) -> None:
    """Values kube-apiserver v1.20.2 wrote to etcd (protobuf, its default), read with etcdctl; next to each, the
    object it served for it (tests/integration/test_reference_interop.py checks the same live)."""
    entry = REFERENCE_VALUES[name]
    value = base64.b64decode(entry["value"])
    assert value.startswith(MAGIC)
    back = StorageCodec(JSON).decode(value, int(entry["served"]["metadata"]["resourceVersion"]))
    served = entry["served"]
    assert differences(served, back) == []
    assert back["metadata"] == {k: v for k, v in served["metadata"].items() if k != "selfLink"}


# Fields v1.34 writes that v1.20 does not have (ManagedFieldsEntry.subresource, v1.22), by message and number.
NEWER_THAN_V1_20 = {(protobuf.META + "ManagedFieldsEntry", 8)}


def wire_fields(message: str, data: bytes) -> list[Any]:
    """The fields of a message as written, in order, nested messages opened; a field the table does not have
    (one v1.34 removed, as ObjectMeta.clusterName) and the NEWER_THAN_V1_20 ones are left out."""
    specs = protobuf.MESSAGES.get(message)
    if specs is None:
        return [data]  # a well-known type's content (Time, Quantity...): compared byte for byte
    out: list[Any] = []
    for number, wire, value in fields_of(data):
        spec = specs.get(number)
        if spec is None or (message, number) in NEWER_THAN_V1_20:
            continue
        if spec.is_map:
            entry = [
                (n, wire_fields(spec.type, v) if n == 2 and spec.type in protobuf.MESSAGES else v)
                for n, _, v in fields_of(value)
            ]
            out.append((number, entry))
        elif wire == 2 and spec.type not in protobuf.SCALARS:
            out.append((number, wire_fields(spec.type, value)))
        else:
            out.append((number, value))
    return out


@pytest.mark.parametrize("name", sorted(REFERENCE_VALUES))
def test_protobuf_is_written_as_kube_apiserver_writes_it(name: str) -> None:
    """The object kube-apiserver served, encoded here, has its stored value's fields, in its order, with the
    same zero values written (a Time's zero nanoseconds, empty strings) but for the fields of other versions."""
    entry = REFERENCE_VALUES[name]
    theirs = protobuf._envelope(base64.b64decode(entry["value"]))  # noqa: SLF001
    ours = protobuf._envelope(StorageCodec(PROTOBUF).encode(entry["served"]))  # noqa: SLF001
    assert ours[:2] == theirs[:2]
    message = protobuf.message_of(*theirs[:2])
    assert message is not None
    assert wire_fields(message, ours[2]) == wire_fields(message, theirs[2])


def test_a_value_nothing_reads_is_a_storage_error() -> None:
    for value in (b"k8s\x00\x0a\x05broken", b"[1, 2]", b"{not json", b"- a\n- b\n"):
        with pytest.raises(UndecodableValueError) as err:
            decode_value(value)
        assert isinstance(err.value, storage.StorageError)
        assert "data from the storage is not decodable" in str(err.value)


def test_unknown_media_type_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported storage media type"):
        StorageCodec("application/cbor")


def cm(name: str, data: str = "x") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns"},
        "data": {"k": data},
    }


def test_a_json_store_keeps_working_after_switching_to_protobuf(tmp_path: Path) -> None:
    """Values written as JSON (every data directory before --storage-media-type) are read, listed and watched
    by a store writing protobuf; an update rewrites the value as protobuf."""

    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            before = ObjectStore(kv, JSON)
            a = await before.create("/registry/configmaps/ns/a", cm("a"))
            b = await before.create("/registry/configmaps/ns/b", cm("b"))
            after = ObjectStore(kv, PROTOBUF)
            assert await after.get("/registry/configmaps/ns/a") == a
            watcher = await after.watch("/registry/configmaps/", b["metadata"]["resourceVersion"])

            async def change(current: dict[str, Any]) -> dict[str, Any]:
                return {**current, "data": {"k": "y"}}

            updated = await after.guaranteed_update("/registry/configmaps/ns/b", change)
            stored = await kv.get("/registry/configmaps/ns/b")
            assert stored is not None and stored.value.startswith(MAGIC)
            assert (await kv.get("/registry/configmaps/ns/a")).value.startswith(b"{")  # type: ignore[union-attr]
            event = await asyncio.wait_for(watcher.__anext__(), 5)
            assert (event.type, event.object) == (storage.MODIFIED, updated)
            await watcher.stop()
            listed = await after.get_list("/registry/configmaps/", storage.ListOptions())
            assert [o["data"]["k"] for o in listed.items] == ["x", "y"]
            assert await ObjectStore(kv, JSON).get("/registry/configmaps/ns/b") == updated  # and back again
        finally:
            await kv.close()

    asyncio.run(main())


class CountingCodec(StorageCodec):
    __slots__ = ("decoded",)

    def __init__(self, media_type: str):
        super().__init__(media_type)
        self.decoded: list[int] = []

    def decode(self, value: bytes, revision: int) -> dict[str, Any]:
        self.decoded.append(revision)
        return super().decode(value, revision)


def test_the_watch_cache_decodes_each_protobuf_value_once_however_many_watch(tmp_path: Path) -> None:
    async def main() -> None:
        kv = await SQLiteKV.open(str(tmp_path))
        store = ObjectStore(kv, PROTOBUF)
        store.codec = codec = CountingCodec(PROTOBUF)
        cacher = Cacher(store, "/registry/configmaps/")
        cacher.start()
        try:
            watchers = [await cacher.watch("/registry/configmaps/", "") for _ in range(5)]
            created = await store.create("/registry/configmaps/ns/a", cm("a"))
            revision = int(created["metadata"]["resourceVersion"])
            events = [await asyncio.wait_for(watcher.__anext__(), 5) for watcher in watchers]
            assert all(event.object == created for event in events)
            # every watcher is given the one WatchEvent (and so its one JSON or protobuf encoding)
            assert len({id(event) for event in events}) == 1
            # one decode for the create's answer, one for the cache's watch event: not one per watcher
            assert codec.decoded.count(revision) == 2
            for watcher in watchers:
                await watcher.stop()
        finally:
            await cacher.stop()
            await kv.close()

    asyncio.run(main())
