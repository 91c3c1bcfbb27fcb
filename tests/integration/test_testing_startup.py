"""What a start waits for: the embedded controllers start once the server is ready (as kube-controller-manager
starts once its API server answers), so their informers' first lists do not hold up readiness."""

from __future__ import annotations

import asyncio

from inprocess import in_process_server


def test_the_embedded_controllers_start_after_readiness_not_before(tmp_path):
    async def scenario() -> tuple[list[str], list[str]]:
        async with in_process_server(str(tmp_path)) as cluster:
            return list(cluster.server.hooks.post_start), list(cluster.server.hooks.post_ready)

    post_start, post_ready = asyncio.run(scenario())
    assert "start-embedded-controllers" in post_ready
    assert (
        "start-embedded-controllers" not in post_start
    )  # not a readiness check: /readyz does not wait for it
    assert "rbac/bootstrap-roles" in post_start
