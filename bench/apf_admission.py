"""The cost API Priority and Fairness adds to a request: classification by the bootstrap FlowSchemas, then
a seat taken and given back, for an exempt (system:masters) request and a limited one (global-default,
128 queues). Prints microseconds per request."""

from __future__ import annotations

import asyncio
import time

from kube_apiserver.api.flowcontrol import bootstrap
from kube_apiserver.flowcontrol.controller import Controller
from kube_apiserver.flowcontrol.rule import RequestDigest

N = 20000


async def per_request(controller: Controller, digest: RequestDigest) -> float:
    start = time.perf_counter()
    for _ in range(N):
        controller.finish(await controller.admit(digest))
    return (time.perf_counter() - start) / N * 1e6


async def main() -> None:
    controller = Controller(600, 15.0, bootstrap.MANDATORY_PRIORITY_LEVELS, bootstrap.MANDATORY_FLOW_SCHEMAS)
    schemas = [
        bootstrap.fresh(s) for s in bootstrap.MANDATORY_FLOW_SCHEMAS + bootstrap.SUGGESTED_FLOW_SCHEMAS
    ]
    levels = [
        bootstrap.fresh(p) for p in bootstrap.MANDATORY_PRIORITY_LEVELS + bootstrap.SUGGESTED_PRIORITY_LEVELS
    ]
    controller.configure(schemas, levels)
    masters = RequestDigest(
        "admin", ("system:masters", "system:authenticated"), True, "create", "", "", "ns", "configmaps"
    )
    user = RequestDigest("alice", ("system:authenticated",), True, "create", "", "", "ns", "configmaps")
    print(f"exempt (system:masters): {await per_request(controller, masters):.1f} us/request")
    print(f"limited (global-default, 128 queues): {await per_request(controller, user):.1f} us/request")


if __name__ == "__main__":
    asyncio.run(main())
