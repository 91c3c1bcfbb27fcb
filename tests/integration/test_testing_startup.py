"""What a start waits for and what a stop leaves: the embedded controllers start once the server is ready (as
kube-controller-manager starts once its API server answers), and a stopped server's garbage is collected at stop."""

from __future__ import annotations

import asyncio
import gc

from inprocess import in_process_server
from kube_apiserver.testing import APIServer


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


def test_a_stopped_in_process_server_leaves_no_cyclic_garbage():
    # Its ~20k objects are collected at stop, not by a full collection in the middle of the next start.
    APIServer().start().stop()
    assert gc.collect() < 2000
