"""The REST container (k8s uses go-restful): installed group versions and their discovery roots."""

from __future__ import annotations

from ..apimachinery import errors
from ..endpoints import discovery
from ..endpoints.handlers.responses import write_status_error
from ..endpoints.http import Request, Response
from ..endpoints.installer import ResourceRoutes
from ..endpoints.request_info import GROUPLESS_API_PREFIXES, SPECIAL_VERBS, RequestInfo


class APIContainer:
    def __init__(self, discovery_manager: discovery.DiscoveryManager):
        self.discovery = discovery_manager
        self.group_versions: dict[tuple[str, str], dict[str, ResourceRoutes]] = {}
        self.root_paths: set[str] = set()

    def add_group_version(self, group: str, version: str, routes: dict[str, ResourceRoutes]) -> None:
        self.group_versions[(group, version)] = routes
        self.root_paths.add(f"/apis/{group}/{version}" if group else f"/api/{version}")
        if group:
            self.root_paths.add(f"/apis/{group}")

    def remove_group_version(self, group: str, version: str) -> None:
        self.group_versions.pop((group, version), None)
        self.root_paths.discard(f"/apis/{group}/{version}" if group else f"/api/{version}")
        if group and not any(g == group for g, _ in self.group_versions):
            self.root_paths.discard(f"/apis/{group}")

    def claims(self, path: str) -> bool:
        """The director's rule: /apis only exactly, any other root on a path boundary."""
        roots = self.root_paths
        if path in ("/apis", "/apis/"):
            return "/apis" in roots
        # Every root is /api[/<v>], /apis/<g>[/<v>] (or /apis): a set lookup of the path's first three
        # segments on their boundaries, not a scan of every installed group version.
        end = 0
        for _ in range(3):
            end = path.find("/", end + 1)
            prefix = path if end < 0 else path[:end]
            if prefix in roots and prefix != "/apis":
                return True
            if end < 0:
                return False
        return False

    async def dispatch(self, req: Request) -> Response:
        try:
            return await self._dispatch(req)
        except errors.StatusError as err:
            return write_status_error(req, err)

    async def _dispatch(self, req: Request) -> Response:
        info = req.info
        path = req.path.rstrip("/")
        if not info.is_resource_request:
            return self._discovery(req, path)
        routes = self.group_versions.get((info.api_group, info.api_version))
        if routes is None:
            raise errors.route_not_found()
        key = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        resource = routes.get(key)
        if resource is None:
            raise errors.route_not_found()
        methods = _routed_methods(info, resource)
        if not methods:
            raise errors.route_not_found()
        if req.method not in methods and not (req.method == "HEAD" and "GET" in methods):
            raise errors.method_not_allowed()
        return await resource.serve(req)

    def _discovery(self, req: Request, path: str) -> Response:
        if req.method not in ("GET", "HEAD"):
            raise errors.method_not_allowed()
        manager = self.discovery
        if path == "/api":
            if discovery.wants_aggregated(req):
                return discovery.discovery_response(req, manager.aggregated(core=True),
                                                    discovery.AGGREGATED_CONTENT_TYPE)
            return discovery.discovery_response(req, manager.api_versions())
        if path == "/apis":
            if discovery.wants_aggregated(req):
                return discovery.discovery_response(req, manager.aggregated(core=False),
                                                    discovery.AGGREGATED_CONTENT_TYPE)
            return discovery.discovery_response(req, manager.api_group_list())
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2:
            gv = manager.lookup("", parts[1])
        elif parts[0] == "apis" and len(parts) == 3:
            gv = manager.lookup(parts[1], parts[2])
        elif parts[0] == "apis" and len(parts) == 2:
            group = manager.api_group(parts[1])
            if group is None:
                raise errors.route_not_found()
            return discovery.discovery_response(req, group)
        else:
            gv = None
        if gv is None:
            raise errors.route_not_found()
        return discovery.discovery_response(req, manager.api_resource_list(gv))


# The HTTP method each verb's route has, and the verbs routed at a collection and at an object's path
# (the installer's actions: LIST/POST/DELETECOLLECTION at /<resource>, GET/PUT/PATCH/DELETE at .../{name}).
VERB_METHODS = {"list": "GET", "watch": "GET", "get": "GET", "create": "POST", "update": "PUT", "patch": "PATCH",
                "delete": "DELETE", "deletecollection": "DELETE"}
COLLECTION_VERBS = ("list", "create", "deletecollection")
ITEM_VERBS = ("get", "update", "patch", "delete")


def _route_shape(info: RequestInfo) -> tuple[int, str]:
    """How many path segments follow the group version and a /watch/ or /proxy/ prefix (what go-restful
    matches against a resource's routes), and that prefix."""
    segments = info.path.strip("/").split("/")
    start = 2 if info.api_prefix in GROUPLESS_API_PREFIXES else 3
    if info.verb in SPECIAL_VERBS and len(segments) > start and segments[start] == info.verb:
        return len(segments) - start - 1, info.verb
    return len(segments) - start, ""


def _routed_methods(info: RequestInfo, resource: ResourceRoutes) -> frozenset[str]:
    """The methods the installer routes at this request's path for this resource: none is a 404, others a 405.

    A resource is routed under /namespaces/{namespace}/ exactly when it is namespaced: request info reads
    /api/v1/namespaces/a/nodes as nodes in namespace a (authorization sees that), but no route serves it, so a
    cluster-scoped object is never reached through a namespace path (the namespaces resource included: its own
    path /namespaces/{name}[/status|/finalize] names no namespace before the resource). Outside a namespace a
    namespaced resource has its list only. Named paths count the path's segments, not info.name, which a
    list's metadata.name field selector fills."""
    segments, prefix = _route_shape(info)
    parts = len(info.parts)
    under_namespace = segments != parts
    namespaced = resource.scope.info.namespaced
    if prefix == "proxy" or (under_namespace and not namespaced) or (namespaced and not under_namespace and parts > 1):
        return frozenset()
    storage, handlers = resource.scope.storage, resource.handlers
    connect_verbs = getattr(storage, "connect_verbs", None)
    if connect_verbs is not None:
        if parts > 3 and not getattr(storage, "subpath_key", ""):
            return frozenset()  # only a proxy subresource takes a path after it
        return frozenset(getattr(storage, "connect_methods", None) or (VERB_METHODS[v] for v in connect_verbs))
    if parts > 3:
        return frozenset()
    if prefix == "watch":  # WATCH at watch/<item path>, WATCHLIST at watch/<resource> of listers
        return frozenset({"GET"}) if "watch" in handlers and (parts > 1 or "list" in handlers) else frozenset()
    if parts == 3:
        verbs: tuple[str, ...] = tuple(handlers)  # a subresource has only its object's path
    elif parts == 2:
        verbs = ITEM_VERBS
    else:
        verbs = COLLECTION_VERBS if under_namespace or not namespaced else ("list",)
    return frozenset(VERB_METHODS[v] for v in verbs if v in handlers)
