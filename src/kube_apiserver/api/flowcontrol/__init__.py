"""flowcontrol.apiserver.k8s.io/v1: FlowSchema and PriorityLevelConfiguration (each with its status
subresource), and the configuration objects kube-apiserver maintains itself.

The API Priority and Fairness filter that classifies and queues requests by them is in
kube_apiserver.flowcontrol (it reads these objects through the loopback informers)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ...apimachinery.wait import cancel_and_wait
from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import flowschema, prioritylevel
from .common import GROUP, VERSION
from .ensurer import Ensurer

POST_START_HOOK = "priority-and-fairness-config-producer"
REENSURE_SECONDS = 60.0  # upstream re-ensures the bootstrap configuration every minute
log = logging.getLogger("kube_apiserver.api")


class ConfigProducer:
    """The post-start hook: the configuration ensured once (the hook is done then), and again every minute
    until the server stops (its `stop` is the pre-shutdown hook), as ensureAPFBootstrapConfiguration does."""

    def __init__(self, ensurer: Ensurer, period: float = REENSURE_SECONDS):
        self.ensurer, self.period = ensurer, period
        self._task: asyncio.Task[None] | None = None

    async def __call__(self) -> None:
        await self.ensurer.ensure()
        self._task = asyncio.get_running_loop().create_task(self._keep_ensuring())

    async def _keep_ensuring(self) -> None:
        while True:
            await asyncio.sleep(self.period)
            try:
                await self.ensurer.ensure()
            except Exception:  # noqa: BLE001 - logged; the next period tries again
                log.exception("failed to ensure the API Priority and Fairness bootstrap configuration")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    return APIGroupInfo(GROUP, {VERSION: {**flowschema.new_rest(storage), **prioritylevel.new_rest(storage)}})


def post_start_hooks(group_versions: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    resources = group_versions[(GROUP, VERSION)]
    ensurer = Ensurer(resources["flowschemas"], resources["prioritylevelconfigurations"])
    return {POST_START_HOOK: ConfigProducer(ensurer)}
