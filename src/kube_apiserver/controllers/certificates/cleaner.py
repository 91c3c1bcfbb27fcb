"""The csrcleaner controller (pkg/controller/certificates/cleaner): every hour it deletes the CSRs nobody
needs any more, so that automatically created ones do not pile up: approved and issued more than an
hour ago, denied or failed more than an hour ago, pending more than a day, or whose certificate expired."""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Callable
from typing import Any

from cryptography import x509

from ...apimachinery import errors
from ...apimachinery.clock import wall_now
from ...client.informers import SharedIndexInformer
from ...client.rest import Client
from .csr import APPROVED, DENIED, FAILED, GROUP, RESOURCE, VERSION, conditions, decode_bytes

log = logging.getLogger("kube_apiserver.controllers")
Object = dict[str, Any]
POLLING_INTERVAL = 3600.0
APPROVED_EXPIRATION = datetime.timedelta(hours=1)
DENIED_EXPIRATION = datetime.timedelta(hours=1)
PENDING_EXPIRATION = datetime.timedelta(hours=24)
Clock = Callable[[], datetime.datetime]


def _parse_time(value: Any) -> datetime.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def _older_than(value: Any, age: datetime.timedelta, now: datetime.datetime) -> bool:
    """isOlderThan: a set time more than `age` before now."""
    stamp = _parse_time(value)
    return stamp is not None and now - stamp > age


def _certificate_expired(csr: Object, now: datetime.datetime) -> bool:
    """isExpired: the issued certificate's NotAfter has passed; an unreadable one is not judged."""
    pem = decode_bytes((csr.get("status") or {}).get("certificate"))
    if not pem:
        return False
    try:
        cert = x509.load_pem_x509_certificate(pem)
    except ValueError:
        return False
    return cert.not_valid_after_utc < now


def why_delete(csr: Object, now: datetime.datetime) -> str | None:
    """Why the cleaner deletes this CSR now (upstream's log line), or None to keep it."""
    name = csr["metadata"].get("name", "")
    issued = bool((csr.get("status") or {}).get("certificate"))
    conds = conditions(csr)
    for c in conds:
        if (
            c.get("type") == APPROVED
            and issued
            and _older_than(c.get("lastUpdateTime"), APPROVED_EXPIRATION, now)
        ):
            return f"Cleaning CSR {name!r} as it is more than 1h0m0s old and approved."
    for c in conds:
        if c.get("type") == DENIED and _older_than(c.get("lastUpdateTime"), DENIED_EXPIRATION, now):
            return f"Cleaning CSR {name!r} as it is more than 1h0m0s old and denied."
    for c in conds:
        if c.get("type") == FAILED and _older_than(c.get("lastUpdateTime"), DENIED_EXPIRATION, now):
            return f"Cleaning CSR {name!r} as it is more than 1h0m0s old and failed."
    if not conds and _older_than(csr["metadata"].get("creationTimestamp"), PENDING_EXPIRATION, now):
        return f"Cleaning CSR {name!r} as it is more than 24h0m0s old and unhandled."
    if issued and any(c.get("type") == APPROVED for c in conds) and _certificate_expired(csr, now):
        return f"Cleaning CSR {name!r} as the associated certificate is expired."
    return None


class CSRCleanerController:
    name = "csrcleaner"

    def __init__(
        self,
        client: Client,
        csrs: SharedIndexInformer,
        interval: float = POLLING_INTERVAL,
        clock: Clock = wall_now,  # the stamps it compares are the server's (--deterministic: its clock)
    ):
        self.client = client
        self.csrs = csrs
        self.interval = interval
        self.clock = clock
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.csrs.start()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        await self.csrs.synced.wait()
        while True:
            await self.clean()
            await asyncio.sleep(self.interval)

    async def clean(self) -> None:
        """One pass over the CSRs the informer holds (the worker)."""
        api = self.client.resource(GROUP, VERSION, RESOURCE)
        now = self.clock()
        for csr in self.csrs.indexer.list():
            reason = why_delete(csr, now)
            if reason is None:
                continue
            log.info("%s", reason)
            try:
                await api.delete(csr["metadata"]["name"])
            except errors.StatusError as err:
                if err.code != 404:
                    log.error(
                        "Error while attempting to clean CSR %r: unable to delete CSR: %s",
                        csr["metadata"]["name"],
                        err.message,
                    )
