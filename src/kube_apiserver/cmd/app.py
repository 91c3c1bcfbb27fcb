"""The kube-apiserver command: parse -> complete -> validate -> run (cmd/kube-apiserver/app)."""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
from collections.abc import Coroutine
from typing import Any


def main(argv: list[str] | None = None) -> None:
    # A start makes ~100k objects that live as long as the process (modules, schemas, routes, policy) and
    # hardly any garbage: cyclic collections while they are made free nothing and cost ~10% of the time
    # to ready. The collector stays off until the server listens (see _collect_once_listening), and what
    # the command runs is imported here, under that pause.
    gc.disable()
    try:
        import uvloop

        from .. import logs
        from ..apimachinery.field import aggregate_message
        from .options import ServerRunOptions

        opts = ServerRunOptions.parse(sys.argv[1:] if argv is None else argv)
        completed = opts.complete()
        errs = completed.validate()
        if errs:
            sys.stderr.write(f"Error: {aggregate_message(errs)}\n")
            raise SystemExit(1)
        logs.setup(completed.verbosity)
        opts.print_flags()
        from .server import run
    except BaseException:
        gc.enable()
        raise
    started = asyncio.Event()
    try:
        uvloop.run(_collect_once_listening(run(completed, started=started), started))
    except OSError as err:
        # What the machine refuses (the port taken, the data directory locked, read-only or its database
        # corrupt) ends the command with one line, as component-base's cli.Run logs Run's error.
        from ..apimachinery.goos import os_error_message
        from ..apimachinery.gostrconv import quote

        logging.getLogger("kube_apiserver.cmd").error('"command failed" err=%s', quote(os_error_message(err)))
        raise SystemExit(1) from None


async def _collect_once_listening(serving: Coroutine[Any, Any, None], started: asyncio.Event) -> None:
    """Runs `serving`; once it listens (or fails), the objects made so far are frozen, so no later
    collection walks them again, and the collector is turned back on."""
    server = asyncio.ensure_future(serving)
    listening = asyncio.ensure_future(started.wait())
    try:
        await asyncio.wait({server, listening}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        listening.cancel()
        gc.freeze()
        gc.enable()
    await server


if __name__ == "__main__":
    main()
