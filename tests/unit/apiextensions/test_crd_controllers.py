"""The CustomResourceDefinition controllers' cache and worker: a status written by this process never
brings back a CRD its informer has seen deleted (by another replica sharing the storage), and the
finalizer waiting for custom resources that do not go yet (finalizers of their own) does not hold up
the one worker every other CRD is named, established and served by."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

from inprocess import eventually, in_process_server
from kube_apiserver.apiextensions import conditions
from kube_apiserver.apiextensions.controllers import CRDControllers
from kube_apiserver.apimachinery import errors
from kube_apiserver.storage.interface import DELETED, MODIFIED

GROUP = "controllers.example.com"
CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")


def crd(plural: str, kind: str) -> dict:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural[:-1], "kind": kind},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}],
        },
    }


class Serving:
    """What the controllers serve: the last CRD each sync was given (None: not served)."""

    def __init__(self) -> None:
        self.served: dict[str, Any] = {}

    async def sync(self, name: str, obj: dict | None) -> None:
        self.served[name] = obj

    def store_of(self, name: str) -> None:
        return None

    async def stop(self) -> None:
        pass


class RacingStatus:
    """A status write whose answer arrives after the informer delivered the write's own event and then
    the CRD's deletion by another replica (the finalizer released it there)."""

    def __init__(self) -> None:
        self.controllers: CRDControllers | None = None
        self.rv = 10
        self.gone = False

    async def update(self, ctx: Any, name: str, info: Any) -> tuple[dict, bool]:
        assert self.controllers is not None
        if self.gone:
            raise errors.not_found("customresourcedefinitions", "apiextensions.k8s.io", name)
        self.gone = True
        old = self.controllers.cache[name]
        new = await info.updated_object(ctx, copy.deepcopy(old))
        self.rv += 1
        new["metadata"] = {**new["metadata"], "resourceVersion": str(self.rv)}
        resource = self.controllers.informers[0].resource
        await self.controllers._on_event(resource, MODIFIED, new)
        gone = copy.deepcopy(new)
        gone["metadata"]["resourceVersion"] = str(self.rv + 1)
        await self.controllers._on_event(resource, DELETED, gone)
        return new, False


class Gone:
    """The CRD store once the CRD is gone: every update answers 404."""

    async def update(self, ctx: Any, name: str, info: Any) -> tuple[dict, bool]:
        raise errors.not_found("customresourcedefinitions", "apiextensions.k8s.io", name)


def test_a_status_write_answered_after_the_crd_was_deleted_does_not_bring_it_back() -> None:
    async def main() -> None:
        status, serving = RacingStatus(), Serving()
        controllers = CRDControllers(Gone(), status, serving)  # type: ignore[arg-type]
        status.controllers = controllers
        terminating = crd("widgets", "Widget")
        terminating["metadata"].update(uid="u1", resourceVersion="10", deletionTimestamp="2026-01-01T00:00:00Z",
                                       finalizers=[conditions.CLEANUP_FINALIZER])
        conditions.set_condition(terminating, conditions.ESTABLISHED, "True", "InitialNamesAccepted", "")
        name = terminating["metadata"]["name"]
        resource = controllers.informers[0].resource
        await controllers._on_event(resource, MODIFIED, terminating)
        await controllers.sync(controllers.queue.get_nowait())  # finalizes; the CRD goes meanwhile
        assert name not in controllers.cache
        while not controllers.queue.empty():  # the events the informer delivered meanwhile
            await controllers.sync(controllers.queue.get_nowait())
        assert serving.served[name] is None

    asyncio.run(main())


def test_custom_resources_that_do_not_go_yet_do_not_hold_up_other_crds(tmp_path: Path) -> None:
    async def main() -> None:
        async with in_process_server(str(tmp_path)) as server:
            await server.server.hooks.run_post_start_hooks()  # the apiextensions controllers among them
            crds = server.client.resource(*CRDS)

            async def established(name: str) -> bool:
                return conditions.is_true(await crds.get(name), conditions.ESTABLISHED)

            await crds.create(crd("widgets", "Widget"))
            await eventually(lambda: established(f"widgets.{GROUP}"))
            widgets = server.client.resource(GROUP, "v1", "widgets").namespace("default")
            held = {"metadata": {"name": "held", "finalizers": [f"{GROUP}/hold"]}}
            await widgets.create({"apiVersion": f"{GROUP}/v1", "kind": "Widget", **held})
            await crds.delete(f"widgets.{GROUP}")

            async def deleting() -> bool:
                return bool((await widgets.get("held"))["metadata"].get("deletionTimestamp"))

            await eventually(deleting)
            await crds.create(crd("gadgets", "Gadget"))
            await eventually(lambda: established(f"gadgets.{GROUP}"))
            widget = await widgets.get("held")
            widget["metadata"]["finalizers"] = []
            await widgets.update(widget)

            async def gone() -> bool:
                try:
                    await crds.get(f"widgets.{GROUP}")
                except errors.StatusError as err:
                    return err.code == 404
                return False

            await eventually(gone)

    asyncio.run(main())
