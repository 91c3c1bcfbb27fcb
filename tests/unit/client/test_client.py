"""The loopback client against a real server built in-process: CRUD as client-go's dynamic client does it,
error answers as apimachinery's StatusError, watch, and the loopback token (system:apiserver, good for
its own server only)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest

from inprocess import in_process_server
from kube_apiserver.apimachinery.errors import StatusError
from kube_apiserver.client.rest import JSON_PATCH, Client, LoopbackTransport, SharedDecodes
from kube_apiserver.endpoints.http import Request


def run(coro):  # noqa: ANN001, ANN201
    return asyncio.run(coro)


async def _namespace(client: Client, name: str) -> None:
    await client.resource("", "v1", "namespaces").create({"metadata": {"name": name}})


def test_crud_round_trip(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            await _namespace(srv.client, "crud")
            cms = srv.client.resource("", "v1", "configmaps").namespace("crud")
            created = await cms.create(
                {"metadata": {"name": "one", "labels": {"a": "b"}}, "data": {"k": "v"}}
            )
            assert created["kind"] == "ConfigMap" and created["metadata"]["namespace"] == "crud"
            # the loopback client's writes are managed by "kube-apiserver", as its user agent says
            assert created["metadata"]["managedFields"][0]["manager"] == "kube-apiserver"
            assert (await cms.get("one"))["data"] == {"k": "v"}
            created["data"]["k"] = "w"
            updated = await cms.update(created)
            assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
            patched = await cms.patch("one", {"data": {"x": "y"}})
            assert patched["data"] == {"k": "w", "x": "y"}
            patched = await cms.patch("one", [{"op": "remove", "path": "/data/x"}], JSON_PATCH)
            assert patched["data"] == {"k": "w"}
            await cms.create({"metadata": {"name": "two"}})
            listed = await cms.list(label_selector="a=b")
            assert [i["metadata"]["name"] for i in listed["items"]] == ["one"]
            assert listed["metadata"]["resourceVersion"]
            deleted = await cms.delete("one")  # kube-apiserver answers a Success Status for configmaps
            assert deleted["status"] == "Success" and deleted["details"]["name"] == "one"
            await cms.delete_collection()
            assert (await cms.list())["items"] == []

    run(main())


def test_update_status_writes_the_status_subresource(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            await _namespace(srv.client, "quota")
            quotas = srv.client.resource("", "v1", "resourcequotas").namespace("quota")
            quota = await quotas.create({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "3"}}})
            quota["status"] = {"hard": {"pods": "3"}, "used": {"pods": "1"}}
            quota["spec"]["hard"]["pods"] = "9"  # the status subresource leaves the spec alone
            out = await quotas.update_status(quota)
            assert out["status"]["used"] == {"pods": "1"} and out["spec"]["hard"] == {"pods": "3"}

    run(main())


def test_error_answers_are_status_errors(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            await _namespace(srv.client, "errs")
            cms = srv.client.resource("", "v1", "configmaps").namespace("errs")
            with pytest.raises(StatusError) as missing:
                await cms.get("absent")
            assert (missing.value.code, missing.value.reason) == (404, "NotFound")
            assert missing.value.message == 'configmaps "absent" not found'
            assert missing.value.details == {"name": "absent", "kind": "configmaps"}
            await cms.create({"metadata": {"name": "dup"}})
            with pytest.raises(StatusError) as exists:
                await cms.create({"metadata": {"name": "dup"}})
            assert (exists.value.code, exists.value.reason) == (409, "AlreadyExists")
            with pytest.raises(StatusError) as invalid:
                await cms.create({"metadata": {"name": "Not_Valid"}})
            assert (invalid.value.code, invalid.value.reason) == (422, "Invalid")
            assert invalid.value.details["causes"][0]["field"] == "metadata.name"
            stale = await cms.get("dup")
            await cms.update({**stale, "data": {"changed": "yes"}})
            with pytest.raises(StatusError) as conflict:
                await cms.update(stale)
            assert (conflict.value.code, conflict.value.reason) == (409, "Conflict")
            with pytest.raises(StatusError) as unknown:
                await srv.client.resource("example.com", "v1", "widgets").list()
            assert unknown.value.code == 404

    run(main())


def test_watch_streams_events_until_stopped(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            await _namespace(srv.client, "w")
            cms = srv.client.resource("", "v1", "configmaps").namespace("w")
            start = (await cms.list())["metadata"]["resourceVersion"]
            watch = await cms.watch(resource_version=start, allow_watch_bookmarks=True)
            await cms.create({"metadata": {"name": "a"}})
            await cms.patch("a", {"data": {"k": "v"}})
            await cms.delete("a")
            seen = []
            async for event in watch:
                seen.append((event["type"], event["object"]["metadata"]["name"]))
                if len(seen) == 3:
                    break
            await watch.stop()
            assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]

    run(main())


def _authenticate(srv, token: str):  # noqa: ANN001, ANN202
    req = Request("GET", "/api", b"", {"authorization": f"Bearer {token}"})
    return srv.config.generic.authenticator.authenticate(req)


def test_the_loopback_token_is_system_apiserver_in_system_masters(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            user = await _authenticate(srv, srv.client.token)
            assert user.name == "system:apiserver" and user.uid
            assert user.groups == ("system:authenticated", "system:masters")
            # end to end: the server tells the loopback client who it is
            review = await srv.client.resource("authentication.k8s.io", "v1", "selfsubjectreviews").create(
                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
            )
            info = review["status"]["userInfo"]
            assert info["username"] == "system:apiserver"
            assert info["groups"] == ["system:authenticated", "system:masters"]

    run(main())


def test_another_servers_loopback_token_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        async with (
            in_process_server(str(tmp_path / "a")) as first,
            in_process_server(str(tmp_path / "b")) as second,
        ):
            assert first.client.token != second.client.token
            stranger = LoopbackTransport(first.client.token)
            stranger.attach(second.server.handler)
            with pytest.raises(StatusError) as refused:
                await Client(stranger).resource("", "v1", "namespaces").list()
            assert (refused.value.code, refused.value.reason) == (401, "Unauthorized")
            # a restart makes a new token: the earlier one is no longer good
        async with in_process_server(str(tmp_path / "a")) as restarted:
            assert restarted.client.token != first.client.token

    run(main())


def test_names_are_sent_as_they_are(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            roles = srv.client.resource("rbac.authorization.k8s.io", "v1", "clusterroles")
            await roles.create({"metadata": {"name": "system:colon"}, "rules": []})
            assert (await roles.get("system:colon"))["metadata"]["name"] == "system:colon"

    run(main())


def test_watches_of_one_client_share_the_objects_of_one_change(tmp_path: Path) -> None:
    """Every in-process informer of a resource is sent the same event line: one decoded object for all of
    them, not a copy each (each copy of every object cost more memory than the watch cache's own)."""

    async def main() -> None:
        async with in_process_server(str(tmp_path)) as srv:
            await _namespace(srv.client, "shared")
            cms = srv.client.resource("", "v1", "configmaps").namespace("shared")
            start = (await cms.list())["metadata"]["resourceVersion"]
            watches = [await cms.watch(resource_version=start) for _ in range(3)]
            await cms.create({"metadata": {"name": "a"}, "data": {"k": "v"}})
            events = []
            for watch in watches:
                async for event in watch:
                    events.append(event)
                    break
                await watch.stop()
            assert [e["type"] for e in events] == ["ADDED"] * 3
            assert events[0]["object"] is events[1]["object"] is events[2]["object"]
            assert events[0] is not events[1]  # the event dicts are the watches' own
            assert events[0]["object"]["data"] == {"k": "v"}

    run(main())


def test_watch_events_of_objects_written_alike_share_one_managed_fields_tree() -> None:
    decodes = SharedDecodes()
    lines = [
        orjson.dumps({"type": "ADDED", "object": {"metadata": {"name": name, "managedFields": [
            {"manager": "m", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:k": {}}}}]}}})
        for name in ("a", "b")
    ]
    a, b = (decodes.event(line)["object"] for line in lines)
    assert a["metadata"]["name"] == "a" and b["metadata"]["name"] == "b"
    assert a["metadata"]["managedFields"][0]["fieldsV1"] is b["metadata"]["managedFields"][0]["fieldsV1"]
