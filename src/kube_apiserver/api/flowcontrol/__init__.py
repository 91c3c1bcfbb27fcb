"""flowcontrol.apiserver.k8s.io/v1: FlowSchema and PriorityLevelConfiguration (each with its status
subresource), and the configuration objects kube-apiserver maintains itself.

Only the API objects live here: the API Priority and Fairness filter that classifies and queues
requests by them is separate work."""

from __future__ import annotations

from typing import Any

from ...server.api_group_info import APIGroupInfo
from ...storage.factory import StorageFactory
from . import flowschema, prioritylevel
from .common import GROUP, VERSION
from .ensurer import Ensurer

POST_START_HOOK = "priority-and-fairness-config-producer"


def new_api_group_info(storage: StorageFactory) -> APIGroupInfo:
    return APIGroupInfo(GROUP, {VERSION: {**flowschema.new_rest(storage), **prioritylevel.new_rest(storage)}})


def post_start_hooks(group_versions: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    resources = group_versions[(GROUP, VERSION)]
    ensurer = Ensurer(resources["flowschemas"], resources["prioritylevelconfigurations"])
    return {POST_START_HOOK: ensurer.ensure}
