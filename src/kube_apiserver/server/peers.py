"""The workers of --workers telling one another their metrics, so that a scrape, which reaches one worker,
sees the whole server. Each worker listens on a unix socket of its own in a directory only the storage
process and its workers share (mode 0700); a connection is answered with the worker's exposition and an
end mark (an answer cut short by a worker's exit is left out, not merged in part), then closed. The worker
a scrape reaches asks every other one at that moment: nothing is polled meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("kube_apiserver.server")

ASK_TIMEOUT = 5.0  # a worker that does not answer in time is left out of this scrape
SUFFIX = ".sock"
END = "# EOF\n"


class PeerExpositions:
    """This worker's socket (`<directory>/<index>.sock`) and the asking of the others'."""

    def __init__(self, directory: str, index: int, exposition: Callable[[], str]):
        self.directory = Path(directory)
        self.path = self.directory / f"{index}{SUFFIX}"
        self.exposition = exposition
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a previous run's, whose worker had this index
        self._server = await asyncio.start_unix_server(self._answer, path=str(self.path))

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        # The last worker out removes the directory: the storage process does too, unless it was killed
        with contextlib.suppress(OSError):
            self.directory.rmdir()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write((self.exposition() + END).encode())
            await writer.drain()
        except OSError:
            pass  # the asker gave up
        finally:
            writer.close()

    async def others(self) -> list[str]:
        """The other workers' expositions, each worker's whole or not at all."""
        paths = sorted(path for path in self.directory.glob(f"*{SUFFIX}") if path != self.path)
        answers = await asyncio.gather(*(self._ask(path) for path in paths))
        return [answer for answer in answers if answer is not None]

    async def _ask(self, path: Path) -> str | None:
        try:
            async with asyncio.timeout(ASK_TIMEOUT):
                reader, writer = await asyncio.open_unix_connection(str(path))
                try:
                    answer = (await reader.read()).decode()
                finally:
                    writer.close()
        except (OSError, TimeoutError, UnicodeDecodeError) as err:
            log.info("metrics of the worker at %s left out: %s", path, err)
            return None
        if not answer.endswith(END):
            log.info("metrics of the worker at %s left out: its answer was cut short", path)
            return None
        return answer[:-len(END)]
