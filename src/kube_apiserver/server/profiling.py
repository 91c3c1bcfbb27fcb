"""--profiling (routes.Profiling and routes.DebugFlags): /debug/pprof/ and /debug/flags/v, unlisted, behind
authentication and authorization as any non-resource URL. Go's pprof profiles have Python counterparts here:
`goroutine` is every asyncio task's and thread's stack, `profile` a cProfile of the event loop's thread for
`seconds`, `heap` the live objects by type; `/debug/flags/v` sets the -v verbosity (PUT)."""

from __future__ import annotations

import asyncio
import collections
import cProfile
import gc
import html
import io
import pstats
import sys
import threading
import traceback
from urllib.parse import parse_qs

from .. import logs
from ..endpoints.http import Request, Response, text
from .mux import PathRecorderMux

PROFILES = {
    "goroutine": "Stack traces of all current asyncio tasks and threads",
    "heap": "A count of the live objects by type (the largest first)",
    "profile": "CPU profile of the event loop's thread. You can specify the duration in the seconds GET "
               "parameter. After you get the profile file, read it with pstats.",
}
MAX_PROFILE_SECONDS = 300


class Profiling:
    def __init__(self) -> None:
        self._profiling = False  # one CPU profile at a time, as Go's runtime allows

    def install(self, mux: PathRecorderMux) -> None:
        mux.handle_unlisted("/debug/pprof", self.redirect)
        mux.handle_unlisted_prefix("/debug/pprof/", self.serve)
        mux.handle_unlisted("/debug/flags", self.flags_index)
        mux.handle_unlisted_prefix("/debug/flags/", self.flags_index)
        mux.handle_unlisted("/debug/flags/v", self.put_verbosity)

    async def redirect(self, req: Request) -> Response:
        return Response(301, b"", "", [("location", "/debug/pprof/")])

    async def serve(self, req: Request) -> Response:
        name = req.path[len("/debug/pprof/"):]
        if not name:
            return self.index()
        if name == "goroutine":
            return text(200, stacks())
        if name == "heap":
            return text(200, heap())
        if name == "profile":
            return await self.profile(req)
        return text(404, "Unknown profile\n")

    def index(self) -> Response:
        rows = "".join(f'<tr><td><a href="{name}?debug=1">{name}</a></td><td>{html.escape(about)}</td></tr>\n'
                       for name, about in PROFILES.items())
        body = f"<html>\n<head>\n<title>/debug/pprof/</title>\n</head>\n<body>\n/debug/pprof/<br>\n<br>\n" \
               f"<table>\n{rows}</table>\n</body>\n</html>\n"
        return Response(200, body.encode(), "text/html; charset=utf-8")

    async def profile(self, req: Request) -> Response:
        raw = (parse_qs(req.query_string.decode("latin-1")).get("seconds") or ["30"])[0]
        try:
            seconds = int(raw)
        except ValueError:
            seconds = 30
        if not 0 < seconds <= MAX_PROFILE_SECONDS:
            return text(400, f"seconds must be between 1 and {MAX_PROFILE_SECONDS}\n")
        if self._profiling:
            return text(500, "Could not enable CPU profiling: cpu profiling already in use\n")
        self._profiling = True
        profiler = cProfile.Profile()
        try:
            profiler.enable()  # this thread only: the event loop's, where requests are served
            await asyncio.sleep(seconds)
        finally:
            profiler.disable()
            self._profiling = False
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(200)
        return text(200, out.getvalue())

    async def flags_index(self, req: Request) -> Response:
        body = ("<html>\n<head>\n<title>/debug/flags/</title>\n</head>\n<body>\n/debug/flags/<br>\n<br>\nflags:<br>\n"
                "<table>\n<tr>v<br>\n</table>\n<br>\nfull flags configurable<br>\n</body>\n</html>\n")
        return Response(200, body.encode(), "text/html; charset=utf-8")

    async def put_verbosity(self, req: Request) -> Response:
        if req.method != "PUT":
            return text(406, "unsupported http method")
        value = (await req.body()).decode(errors="replace").strip()
        if not value.isdigit():
            return text(400, f'failed set klog.logging.verbosity {value}: strconv.ParseInt: parsing "{value}": '
                             "invalid syntax")
        logs.set_verbosity(int(value))
        return text(200, f"successfully set klog.logging.verbosity to {value}")


def stacks() -> str:
    out = io.StringIO()
    tasks = asyncio.all_tasks()
    out.write(f"asyncio tasks: {len(tasks)}\n\n")
    for task in sorted(tasks, key=lambda t: t.get_name()):
        out.write(f"task {task.get_name()} [{task.get_coro()!r}]:\n")
        task.print_stack(limit=20, file=out)
        out.write("\n")
    frames = sys._current_frames()  # noqa: SLF001 - the only way to read other threads' stacks
    for thread in threading.enumerate():
        frame = frames.get(thread.ident or -1)
        out.write(f"thread {thread.name} ({thread.ident}):\n")
        if frame is not None:
            out.write("".join(traceback.format_stack(frame)))
        out.write("\n")
    return out.getvalue()


def heap(top: int = 100) -> str:
    counts = collections.Counter(type(obj).__qualname__ for obj in gc.get_objects())
    lines = [f"{count:>10} {name}" for name, count in counts.most_common(top)]
    return f"objects tracked by the collector: {sum(counts.values())}\n" + "\n".join(lines) + "\n"
