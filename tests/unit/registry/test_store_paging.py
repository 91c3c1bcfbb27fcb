"""A continue token from compacted history: 410 Expired carrying a token to go on from (k8s etcd3 store)."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from kube_apiserver.api.core import configmap
from kube_apiserver.apimachinery.errors import StatusError
from kube_apiserver.endpoints.handlers.responses import write_status_error
from kube_apiserver.endpoints.http import Request
from kube_apiserver.registry.context import Context
from kube_apiserver.registry.options import ListQuery
from kube_apiserver.storage.objectstore import INCONSISTENT_CONTINUE, ObjectStore
from kube_apiserver.storage.sqlite import SQLiteKV


def test_expired_continue_token(tmp_path):
    async def main():
        kv = await SQLiteKV.open(str(tmp_path))
        try:
            store = configmap.new_rest(ObjectStore(kv))["configmaps"]
            ctx = Context("default")
            for i in range(4):
                await store.create(ctx, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}})
            page = await store.list(ctx, ListQuery(limit=2))
            await store.create(ctx, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late"}})
            await kv.compact(await kv.current_revision())
            with pytest.raises(StatusError) as err:
                await store.list(ctx, ListQuery(limit=2, continue_token=page["metadata"]["continue"]))
            return err.value
        finally:
            await kv.close()

    err = asyncio.run(main())
    assert (err.code, err.reason, err.message) == (410, "Expired", INCONSISTENT_CONTINUE)
    body = json.loads(write_status_error(Request("GET", "/", b"", {}), err).body)
    token = json.loads(base64.urlsafe_b64decode(body["metadata"]["continue"] + "=="))
    assert token == {"v": "meta.k8s.io/v1", "rv": -1, "start": "c1\u0000"}  # relative to the list prefix
