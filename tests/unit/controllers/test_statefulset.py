"""The statefulset controller against a real server (in-process, its loopback client); the test plays
the kubelet (pods/status Running and Ready). Ordered creation and identities, claims from templates and
their retention policy, scale-down from the highest ordinal, rolling updates with a partition, OnDelete,
Parallel, status, revisions and Events."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from inprocess import ControllerCluster, controller_cluster, eventually, mark_pod, repeating
from kube_apiserver.controllers.statefulset import COMPONENT, StatefulSetController

NS = "default"


def _set(name: str = "web", replicas: int = 3, **spec: object) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": "nginx",
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
            **spec,
        },
    }


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path) -> AsyncIterator[ControllerCluster]:
    def controllers(c: ControllerCluster) -> list:
        return [StatefulSetController(c.client, c.informers, c.recorder(COMPONENT))]

    async with controller_cluster(str(tmp_path), controllers) as c:
        yield c


def _api(client, resource: str, group: str = ""):  # noqa: ANN001, ANN202
    return client.resource(group, "v1", resource).namespace(NS)


async def _live_pods(client) -> dict[str, dict]:  # noqa: ANN001
    pods = (await _api(client, "pods").list())["items"]
    return {p["metadata"]["name"]: p for p in pods if not p["metadata"].get("deletionTimestamp")}


@contextlib.asynccontextmanager
async def kubelet(client) -> AsyncIterator[None]:  # noqa: ANN001
    """Marks every pod Running and Ready, as a kubelet would, until the block ends."""

    async def step() -> None:
        for name, pod in (await _live_pods(client)).items():
            if (pod.get("status") or {}).get("phase") != "Running":
                with contextlib.suppress(Exception):
                    await mark_pod(client, NS, name)

    async with repeating(step):
        yield


async def _status(client, name: str, **expected: object) -> dict | None:  # noqa: ANN001
    status = (await _api(client, "statefulsets", "apps").get(name)).get("status") or {}
    return status if all(status.get(k) == v for k, v in expected.items()) else None


def _names(pods: dict) -> list[str]:
    return sorted(pods)


def test_ordered_creation_identity_claims_status_and_events(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            client = c.client
            claim_template = {
                "metadata": {"name": "www"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }
            sts = await _api(client, "statefulsets", "apps").create(
                _set(volumeClaimTemplates=[claim_template])
            )
            first = await eventually(lambda: _live_pods(client))
            assert _names(first) == ["web-0"]
            pod = first["web-0"]
            labels = pod["metadata"]["labels"]
            assert labels["statefulset.kubernetes.io/pod-name"] == "web-0"
            assert labels["apps.kubernetes.io/pod-index"] == "0"
            assert labels["controller-revision-hash"].startswith("web-")
            assert pod["spec"]["hostname"] == "web-0" and pod["spec"]["subdomain"] == "nginx"
            assert {"name": "www", "persistentVolumeClaim": {"claimName": "www-web-0"}} in pod["spec"][
                "volumes"
            ]
            assert pod["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"]
            claim = await _api(client, "persistentvolumeclaims").get("www-web-0")
            assert claim["metadata"]["labels"] == {"app": "web"}
            assert not claim["metadata"].get("ownerReferences")  # Retain, Retain: nothing owns it
            # OrderedReady: web-1 waits for web-0 to be Running and Ready.
            await asyncio.sleep(0.3)
            assert _names(await _live_pods(client)) == ["web-0"]
            await mark_pod(client, NS, "web-0")
            assert _names(await eventually(lambda: _n_pods(client, 2))) == ["web-0", "web-1"]
            await mark_pod(client, NS, "web-1")
            await eventually(lambda: _n_pods(client, 3))
            await mark_pod(client, NS, "web-2")
            status = await eventually(lambda: _status(client, "web", readyReplicas=3, availableReplicas=3))
            assert (
                status["replicas"] == 3 and status["currentReplicas"] == 3 and status["updatedReplicas"] == 3
            )
            assert status["currentRevision"] == status["updateRevision"] == labels["controller-revision-hash"]
            assert status["observedGeneration"] == 1 and status["collisionCount"] == 0
            revision = await _api(client, "controllerrevisions", "apps").get(status["updateRevision"])
            assert revision["revision"] == 1
            assert revision["data"]["spec"]["template"]["$patch"] == "replace"
            # Scale down: the highest ordinal goes.
            await _api(client, "statefulsets", "apps").patch("web", {"spec": {"replicas": 2}})
            assert _names(await eventually(lambda: _n_pods(client, 2))) == ["web-0", "web-1"]
            await c.events.flush()
            messages = {
                (e["reason"], e["message"])
                for e in (await _api(client, "events").list())["items"]
                if e["involvedObject"]["kind"] == "StatefulSet"
            }
            assert ("SuccessfulCreate", "create Pod web-0 in StatefulSet web successful") in messages
            assert (
                "SuccessfulCreate",
                "create Claim www-web-0 Pod web-0 in StatefulSet web success",
            ) in messages
            assert ("SuccessfulDelete", "delete Pod web-2 in StatefulSet web successful") in messages

    asyncio.run(main())


async def _n_pods(client, count: int) -> dict | None:  # noqa: ANN001
    pods = await _live_pods(client)
    return pods if len(pods) == count else None


def _image(pod: dict) -> str:
    return pod["spec"]["containers"][0]["image"]


def test_rolling_update_with_a_partition_then_to_the_end(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c, kubelet(c.client):
            client = c.client
            sets = _api(client, "statefulsets", "apps")
            await sets.create(
                _set(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
            )
            first = await eventually(lambda: _status(client, "web", readyReplicas=3))
            patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
            await sets.patch("web", patch, "application/strategic-merge-patch+json")
            # Only the ordinals at or above the partition move to the update revision.
            status = await eventually(lambda: _status(client, "web", updatedReplicas=1, readyReplicas=3))
            assert status["currentRevision"] == first["currentRevision"] != status["updateRevision"]
            pods = await _live_pods(client)
            assert [_image(pods[n]) for n in ("web-0", "web-1", "web-2")] == ["nginx", "nginx", "nginx:2"]
            await sets.patch("web", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}})
            done = await eventually(
                lambda: _status(client, "web", updatedReplicas=3, readyReplicas=3, currentReplicas=3)
            )
            assert done["currentRevision"] == done["updateRevision"] == status["updateRevision"]
            pods = await _live_pods(client)
            assert {_image(p) for p in pods.values()} == {"nginx:2"}
            # Back to the first template: the old revision is renumbered, not copied.
            patch["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx"
            await sets.patch("web", patch, "application/strategic-merge-patch+json")
            back = await eventually(
                lambda: _status(
                    client,
                    "web",
                    updatedReplicas=3,
                    readyReplicas=3,
                    currentReplicas=3,
                    updateRevision=first["updateRevision"],
                    currentRevision=first["updateRevision"],
                )
            )
            assert back is not None
            revisions = (await _api(client, "controllerrevisions", "apps").list())["items"]
            numbers = {r["metadata"]["name"]: r["revision"] for r in revisions}
            assert numbers == {first["updateRevision"]: 3, status["updateRevision"]: 2}

    asyncio.run(main())


def test_on_delete_and_parallel(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            client = c.client
            sets = _api(client, "statefulsets", "apps")
            # Parallel: every pod at once, none waited for.
            await sets.create(_set(podManagementPolicy="Parallel", updateStrategy={"type": "OnDelete"}))
            pods = await eventually(lambda: _n_pods(client, 3))
            assert _names(pods) == ["web-0", "web-1", "web-2"]
            for name in pods:
                await mark_pod(client, NS, name)
            first = await eventually(lambda: _status(client, "web", readyReplicas=3))
            patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
            await sets.patch("web", patch, "application/strategic-merge-patch+json")
            status = await eventually(lambda: _status(client, "web", observedGeneration=2))
            assert (
                status["updateRevision"] != first["updateRevision"] and status.get("updatedReplicas", 0) == 0
            )
            await asyncio.sleep(0.3)
            assert {_image(p) for p in (await _live_pods(client)).values()} == {
                "nginx"
            }  # OnDelete: untouched
            # A pod the user deletes comes back at the update revision.
            await _api(client, "pods").delete("web-1")
            recreated = await eventually(lambda: _pod_with_image(client, "web-1", "nginx:2"))
            assert recreated["metadata"]["labels"]["controller-revision-hash"] == status["updateRevision"]
            # A failed pod is deleted and made again under its name.
            failed = (await _live_pods(client))["web-2"]
            await _api(client, "pods").patch("web-2", {"status": {"phase": "Failed"}}, subresource="status")
            again = await eventually(lambda: _recreated(client, "web-2", failed["metadata"]["uid"]))
            assert again["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "web-2"

    asyncio.run(main())


async def _recreated(client, name: str, old_uid: str) -> dict | None:  # noqa: ANN001
    pod = (await _live_pods(client)).get(name)
    return pod if pod is not None and pod["metadata"]["uid"] != old_uid else None


async def _pod_with_image(client, name: str, image: str) -> dict | None:  # noqa: ANN001
    pod = (await _live_pods(client)).get(name)
    return pod if pod is not None and _image(pod) == image else None


def test_claim_retention_policy_owner_references(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c, kubelet(c.client):
            client = c.client
            template = {
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }
            sts = await _api(client, "statefulsets", "apps").create(
                _set(
                    replicas=2,
                    volumeClaimTemplates=[template],
                    persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Delete"},
                )
            )
            await eventually(lambda: _status(client, "web", readyReplicas=2))
            claims = _api(client, "persistentvolumeclaims")

            async def owners(name: str) -> list[str] | None:
                refs = (await claims.get(name))["metadata"].get("ownerReferences") or []
                return [r["kind"] for r in refs] or None

            # In range: owned by the set (deleted with it).
            assert await eventually(lambda: owners("data-web-1")) == ["StatefulSet"]
            assert (await claims.get("data-web-1"))["metadata"]["ownerReferences"][0]["uid"] == sts[
                "metadata"
            ]["uid"]
            pod1 = (await _live_pods(client))["web-1"]
            await _api(client, "statefulsets", "apps").patch("web", {"spec": {"replicas": 1}})

            # Scaled away: owned by its pod instead (deleted with it by the garbage collector).
            async def pod_owned() -> list[dict] | None:
                refs = (await claims.get("data-web-1"))["metadata"].get("ownerReferences") or []
                return refs if [r["kind"] for r in refs] == ["Pod"] else None

            refs = await eventually(pod_owned)
            assert refs[0]["uid"] == pod1["metadata"]["uid"] and refs[0]["controller"] is True
            assert await owners("data-web-0") == ["StatefulSet"]

    asyncio.run(main())


def test_a_bad_selector_or_revision_is_skipped(tmp_path: Path) -> None:
    async def main() -> None:
        async with cluster(tmp_path) as c:
            client = c.client
            # An orphan revision with data of the wrong shape is adopted and does no harm.
            await _api(client, "controllerrevisions", "apps").create(
                {
                    "metadata": {"name": "web-junk", "labels": {"app": "web"}},
                    "data": {"spec": "junk"},
                    "revision": 7,
                }
            )
            await _api(client, "statefulsets", "apps").create(_set(replicas=1))
            pods = await eventually(lambda: _n_pods(client, 1))
            assert _names(pods) == ["web-0"]
            junk = await _api(client, "controllerrevisions", "apps").get("web-junk")
            assert junk["metadata"]["ownerReferences"][0]["name"] == "web"
            status = await eventually(lambda: _status(client, "web", replicas=1))
            revision = await _api(client, "controllerrevisions", "apps").get(status["updateRevision"])
            assert revision["revision"] == 8  # after the adopted one

    asyncio.run(main())


def test_revision_names_are_kube_controller_managers(tmp_path: Path) -> None:
    """The StatefulSet of upstream's compatibility test data (pkg/controller/statefulset/testdata/
    compatibility_set_1.34.0.json) gets the revision kube-controller-manager v1.34 named test-776999688b:
    the defaulted template hashes byte for byte as Go encodes it."""

    async def main() -> None:
        async with cluster(tmp_path) as c:
            template = {
                "metadata": {"labels": {"app": "foo"}, "annotations": {"test": "value"}},
                "spec": {"containers": [{"name": "test", "image": "test"}]},
            }
            body = {
                "metadata": {"name": "test", "labels": {"sslabel": "value"}},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "foo"}}, "template": template},
            }
            await _api(c.client, "statefulsets", "apps").create(body)
            status = await eventually(lambda: _status(c.client, "test", observedGeneration=1))
            assert status["updateRevision"] == status["currentRevision"] == "test-776999688b"

    asyncio.run(main())
