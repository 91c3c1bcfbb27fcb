"""A watch cache whose store goes out of reach (the --workers storage process gone, a connection lost) says
so in one warning line, without a traceback: every cache of a worker sees it at once."""

from __future__ import annotations

import asyncio
import logging

from kube_apiserver.storage.cacher import Cacher
from kube_apiserver.storage.kvsocket.client import StorageUnavailableError


class _LostStore:
    async def get_list(self, key, opts):
        raise StorageUnavailableError("the storage process closed the connection")


async def _run_once(caplog) -> None:
    cacher = Cacher(_LostStore(), "/registry/configmaps/")
    with caplog.at_level(logging.INFO, logger="kube_apiserver"):
        cacher.start()
        await asyncio.sleep(0.05)
        await cacher.stop()


def test_a_lost_store_is_one_warning_line_without_a_traceback(caplog):
    asyncio.run(_run_once(caplog))
    records = [r for r in caplog.records if "watch cache" in r.getMessage()]
    assert [(r.levelno, r.getMessage()) for r in records] == [(
        logging.WARNING,
        "watch cache of /registry/configmaps/: the storage process closed the connection; relisting")]
    assert records[0].exc_info is None
