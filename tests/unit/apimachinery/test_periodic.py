"""Periodic: a failure is logged and the function runs again at the next interval; the store out of reach (a
ConnectionError: etcd unavailable, the storage process gone) is one line, anything else its traceback."""

from __future__ import annotations

import asyncio
import logging

from kube_apiserver.apimachinery.wait import Periodic


def run_failing(exc: Exception, caplog) -> list[logging.LogRecord]:  # noqa: ANN001
    async def main() -> int:
        calls = 0

        async def fails() -> None:
            nonlocal calls
            calls += 1
            raise exc

        periodic = Periodic("apiserver identity lease controller", 0.001, fails)
        periodic.start()
        while calls < 2:
            await asyncio.sleep(0.001)
        await periodic.stop()
        return calls

    with caplog.at_level(logging.ERROR, logger="kube_apiserver"):
        assert asyncio.run(main()) >= 2  # tried again after a failure
    return caplog.records


def test_the_store_out_of_reach_is_one_line_each_time(caplog):
    records = run_failing(ConnectionError("etcd: failed to connect to all addresses"), caplog)
    assert {(r.getMessage(), r.exc_info) for r in records} == {
        ("apiserver identity lease controller failed: etcd: failed to connect to all addresses", None)}


def test_anything_else_keeps_its_traceback(caplog):
    records = run_failing(KeyError("spec"), caplog)
    assert all(r.getMessage() == "apiserver identity lease controller failed" and r.exc_info for r in records)
