"""The ObjectStore with encryption at rest: values go through the resource's transformer between the codec and
the KV (keys never do); a value no provider knows is an internal error; a value read with another provider than
the first is written again on the next update even when nothing changed (stale), as kube-apiserver does."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from kube_apiserver.storage.interface import ListOptions
from kube_apiserver.storage.objectstore import ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV
from kube_apiserver.storage.value import config as ec
from kube_apiserver.storage.value.keys import KeyTransformers
from kube_apiserver.storage.value.transformer import TransformError

KEY1 = base64.b64encode(b"1" * 32).decode()
KEY2 = base64.b64encode(b"2" * 32).decode()
RESOURCES = {
    "/registry/secrets": ("", "secrets"),
    "/registry/deployments": ("apps", "deployments"),
    "/registry/services/specs": ("", "services"),
}


def configuration(tmp_path, *providers, resources=("secrets",)):
    path = tmp_path / f"enc{len(list(tmp_path.iterdir()))}.json"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "apiserver.config.k8s.io/v1",
                "kind": "EncryptionConfiguration",
                "resources": [{"resources": list(resources), "providers": list(providers)}],
            }
        )
    )
    return ec.load(str(path))


def aescbc(name, secret):
    return {"aescbc": {"keys": [{"name": name, "secret": secret}]}}


def secret(name, value="djE="):
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "ns"},
        "data": {"k": value},
    }


def run(coro_fn):
    def wrapper(tmp_path):
        async def main():
            kv = await SQLiteKV.open(str(tmp_path / "db"))
            try:
                await coro_fn(ObjectStore(kv), kv, tmp_path)
            finally:
                await kv.close()

        (tmp_path / "db").mkdir()
        asyncio.run(main())

    wrapper.__name__ = coro_fn.__name__
    return wrapper


@run
async def test_values_encrypted_keys_not(store, kv, tmp_path):
    store.transformers = KeyTransformers(configuration(tmp_path, aescbc("key1", KEY1)), RESOURCES)
    created = await store.create("/registry/secrets/ns/a", secret("a"))
    raw = await kv.get("/registry/secrets/ns/a")  # the key as it was
    assert raw.value.startswith(b"k8s:enc:aescbc:v1:key1:") and b"djE=" not in raw.value
    assert await store.get("/registry/secrets/ns/a") == created
    await store.create("/registry/configmaps/ns/c", {"kind": "ConfigMap", "metadata": {"name": "c"}})
    assert (await kv.get("/registry/configmaps/ns/c")).value.startswith(b"{")  # not configured: plain
    listed = await store.get_list("/registry/secrets/", ListOptions())
    assert [o["metadata"]["name"] for o in listed.items] == ["a"]


@run
async def test_watch_decrypts(store, kv, tmp_path):
    store.transformers = KeyTransformers(configuration(tmp_path, aescbc("key1", KEY1)), RESOURCES)
    await store.create("/registry/secrets/ns/a", secret("a"))
    watcher = await store.watch("/registry/secrets/", "")
    first = await asyncio.wait_for(watcher.__anext__(), 5)
    await store.create("/registry/secrets/ns/b", secret("b", "djI="))
    second = await asyncio.wait_for(watcher.__anext__(), 5)
    await watcher.stop()
    assert (first.type, first.object["data"]) == ("ADDED", {"k": "djE="})
    assert (second.type, second.object["data"]) == ("ADDED", {"k": "djI="})


@run
async def test_unknown_prefix_is_an_internal_error(store, kv, tmp_path):
    store.transformers = KeyTransformers(configuration(tmp_path, aescbc("key1", KEY1)), RESOURCES)
    await store.create("/registry/secrets/ns/a", secret("a"))
    store.transformers.set(configuration(tmp_path, aescbc("key2", KEY2)))  # key1 forgotten
    with pytest.raises(TransformError, match="^no matching key was found for the provided AES transformer$"):
        await store.get("/registry/secrets/ns/a")
    raw = await kv.get("/registry/secrets/ns/a")
    await kv.update("/registry/secrets/ns/a", b"garbage", raw.mod_revision)
    with pytest.raises(TransformError, match="^no matching prefix found$"):
        await store.get("/registry/secrets/ns/a")
    with pytest.raises(
        TransformError, match='^unable to transform key "/registry/secrets/ns/a": no matching prefix'
    ):
        await store.get_list("/registry/secrets/", ListOptions())


@run
async def test_stale_value_rewritten_on_unchanged_update(store, kv, tmp_path):
    store.transformers = KeyTransformers(configuration(tmp_path, aescbc("key1", KEY1)), RESOURCES)
    await store.create("/registry/secrets/ns/a", secret("a"))
    before = await kv.get("/registry/secrets/ns/a")

    async def unchanged(obj):
        return obj

    # the first key reads it: not stale, nothing written
    await store.guaranteed_update("/registry/secrets/ns/a", unchanged)
    assert (await kv.get("/registry/secrets/ns/a")).mod_revision == before.mod_revision
    # a new first key: the old one reads it (stale), so the same object is written again with the new key
    store.transformers.set(configuration(tmp_path, aescbc("key2", KEY2), aescbc("key1", KEY1)))
    await store.guaranteed_update("/registry/secrets/ns/a", unchanged)
    after = await kv.get("/registry/secrets/ns/a")
    assert after.mod_revision > before.mod_revision
    assert after.value.startswith(b"k8s:enc:aescbc:v1:key2:")
    store.transformers.set(configuration(tmp_path, aescbc("key2", KEY2)))  # the old key can go now
    assert (await store.get("/registry/secrets/ns/a"))["data"] == {"k": "djE="}


@run
async def test_identity_first_reads_encrypted_and_writes_plain(store, kv, tmp_path):
    store.transformers = KeyTransformers(configuration(tmp_path, aescbc("key1", KEY1)), RESOURCES)
    await store.create("/registry/secrets/ns/a", secret("a"))
    store.transformers.set(configuration(tmp_path, {"identity": {}}, aescbc("key1", KEY1)))
    assert (await store.get("/registry/secrets/ns/a"))["data"] == {"k": "djE="}
    await store.create("/registry/secrets/ns/b", secret("b"))
    assert (await kv.get("/registry/secrets/ns/b")).value.startswith(b"{")


def test_key_resources_and_authenticated_data(tmp_path):
    keys = KeyTransformers(configuration(tmp_path, aescbc("key1", KEY1)), RESOURCES, "/custom")
    assert keys.resource_of("/registry/secrets/ns/a") == ("", "secrets")
    assert keys.resource_of("/registry/services/specs/ns/a") == ("", "services")
    assert keys.resource_of("/registry/deployments/ns/a") == ("apps", "deployments")
    assert keys.resource_of("/registry/example.com/widgets/ns/a") == ("example.com", "widgets")
    assert keys.resource_of("/registry/configmaps/ns/a") == ("", "configmaps")
    _, context = keys.for_key("/registry/secrets/ns/a")
    assert context.authenticated_data == b"/custom/secrets/ns/a"  # the etcd key under --etcd-prefix
    assert context.resource == "secrets"
    assert keys.for_key("/registry/deployments/ns/a")[1].resource == "deployments.apps"
