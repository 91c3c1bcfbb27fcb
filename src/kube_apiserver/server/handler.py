"""APIServerHandler: the full handler chain around the director, which sends a request to the REST
container, the non-REST mux, or (through the mux's not-found handler) the delegate server."""

from __future__ import annotations

from collections.abc import Callable

from ..endpoints.http import Handler, Request, Response
from .mux import PathRecorderMux
from .restful import APIContainer


class Director:
    def __init__(self, name: str, restful: APIContainer, non_restful: PathRecorderMux):
        self.name = name
        self.restful = restful
        self.non_restful = non_restful

    async def __call__(self, req: Request) -> Response:
        if self.restful.claims(req.path):
            return await self.restful.dispatch(req)
        return await self.non_restful(req)


class APIServerHandler:
    def __init__(self, name: str, restful: APIContainer, not_found: Handler,
                 build_handler_chain: Callable[[Handler], Handler]):
        self.non_restful_mux = PathRecorderMux(name, not_found)
        self.restful = restful
        self.director = Director(name, restful, self.non_restful_mux)
        self.build_handler_chain = build_handler_chain
        self.full_handler_chain = build_handler_chain(self.director)

    def rebuild_handler_chain(self) -> None:
        """The chain built again from the configuration (filters added to it after the server was made)."""
        self.full_handler_chain = self.build_handler_chain(self.director)

    async def __call__(self, req: Request) -> Response:
        return await self.full_handler_chain(req)
