"""The command's stop: SIGTERM or SIGINT ends the server gracefully (genericapiserver's SetupSignalHandler)."""

from __future__ import annotations

import asyncio
import signal


def stop_on_signals() -> asyncio.Event:
    """An event set by the first SIGTERM or SIGINT the running loop receives."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop
