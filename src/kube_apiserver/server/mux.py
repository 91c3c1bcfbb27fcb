"""PathRecorderMux: the non-REST routes (health, version, metrics...), exact or by prefix; anything
else goes to the not-found handler, which in a chain is the delegate's (k8s mux.PathRecorderMux)."""

from __future__ import annotations

from ..endpoints.http import Handler, Request, Response


class PathRecorderMux:
    def __init__(self, name: str, not_found: Handler):
        self.name = name
        self.exact: dict[str, Handler] = {}
        self.prefixes: list[tuple[str, Handler]] = []
        self.not_found = not_found
        self.unlisted: set[str] = set()  # served, but not in the index of paths (UnlistedHandle)

    def handle(self, path: str, handler: Handler) -> None:
        self.exact[path] = handler

    def handle_unlisted(self, path: str, handler: Handler) -> None:
        self.exact[path] = handler
        self.unlisted.add(path)

    def handle_prefix(self, prefix: str, handler: Handler) -> None:
        """`prefix` ends with '/': it claims every path below it."""
        self.prefixes.append((prefix, handler))
        self.prefixes.sort(key=lambda p: -len(p[0]))

    def handle_unlisted_prefix(self, prefix: str, handler: Handler) -> None:
        """A prefix served but not in the index of paths (the debug endpoints' /name/action paths)."""
        self.handle_prefix(prefix, handler)
        self.unlisted.add(prefix)

    def listed_paths(self) -> list[str]:
        return sorted({*self.exact, *(p for p, _ in self.prefixes)} - self.unlisted)

    async def __call__(self, req: Request) -> Response:
        handler = self.exact.get(req.path)
        if handler is None:
            handler = next((h for p, h in self.prefixes if req.path.startswith(p)), self.not_found)
        return await handler(req)
