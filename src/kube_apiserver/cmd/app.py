"""The kube-apiserver command: parse -> complete -> validate -> run (cmd/kube-apiserver/app)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import sys
from collections.abc import Coroutine, Iterator
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

        argv = sys.argv[1:] if argv is None else argv
        opts = ServerRunOptions.parse(argv)
        logs.setup(opts.logs.verbosity)  # completing warns (a defaulted service IP range) as klog lines, as upstream
        completed = opts.complete()
        errs = completed.validate()
        if errs:
            sys.stderr.write(f"Error: {aggregate_message(errs)}\n")
            raise SystemExit(1)
        opts.print_flags()
        if completed.workers > 1:
            gc.enable()
            _run_workers(completed, argv)
            return
        from .server import run
    except BaseException:
        gc.enable()
        raise
    started = asyncio.Event()
    with _one_line_on_os_error():
        uvloop.run(_collect_once_listening(run(completed, started=started), started))


def _run_workers(completed: Any, argv: list[str]) -> None:
    import uvloop

    from . import workers

    with _one_line_on_os_error():
        code = uvloop.run(workers.run(completed, argv))
    if code:
        raise SystemExit(code)


@contextlib.contextmanager
def _one_line_on_os_error() -> Iterator[None]:
    """What the machine refuses (the port taken, the data directory locked, read-only or its database
    corrupt) ends the command with one line, as component-base's cli.Run logs Run's error."""
    try:
        yield
    except OSError as err:
        from ..apimachinery.goos import os_error_message
        from ..apimachinery.gostrconv import quote

        logging.getLogger("kube_apiserver.cmd").error('"command failed" err=%s', quote(os_error_message(err)))
        raise SystemExit(1) from None


# The collector's thresholds once serving (CPython's are 700, 10, 10). A request allocates hundreds of
# tracked objects (coroutines of the filter chain, dicts, tuples) that refcounting frees when it ends;
# collecting every 700 walks the in-flight requests' live ones again and again: ~15% of the CPU of a write
# under load (bench: GC time per k8sbench create/update run, 1.6 s -> 0.5 s). The older generations are
# collected less often in proportion; only cyclic garbage waits longer (bounded: 2000 x 50 young objects).
GC_THRESHOLDS = (2000, 50, 20)


async def _collect_once_listening(serving: Coroutine[Any, Any, None], started: asyncio.Event) -> None:
    """Runs `serving`; once it listens (or fails), the objects made so far are frozen, so no later
    collection walks them again, and the collector is turned back on with the serving thresholds."""
    server = asyncio.ensure_future(serving)
    listening = asyncio.ensure_future(started.wait())
    try:
        await asyncio.wait({server, listening}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        listening.cancel()
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)
        gc.enable()
    await server


if __name__ == "__main__":
    main()
