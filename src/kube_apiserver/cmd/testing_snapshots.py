"""/debug/testing/snapshots and /debug/testing/reset: snapshots of the whole store held by the server, restored
on request (storage/snapshot.py says how a restore keeps watches and caches coherent).

  POST   /debug/testing/snapshots                 -> {"name": ..., "resourceVersion": ...}; a body
                                                     {"name": "x"} names it (replacing one of that name)
  GET    /debug/testing/snapshots                 -> {"snapshots": [{"name", "resourceVersion"}...]}
  POST   /debug/testing/snapshots/<name>/restore  -> what the restore wrote
  DELETE /debug/testing/snapshots/<name>
  POST   /debug/testing/reset                     -> restores the snapshot taken when the server became ready

The server keeps at most MAX_SNAPSHOTS named snapshots; taking one more evicts the oldest. The initial one
is kept apart and never evicted."""

from __future__ import annotations

import asyncio
import json
import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from ..apimachinery import errors
from ..endpoints.handlers.responses import write_status_error
from ..endpoints.http import Request, Response
from ..storage import snapshot
from ..storage.codec import decode_value
from ..storage.kv import KV

if TYPE_CHECKING:
    from ..server.generic_api_server import GenericAPIServer
    from .server import ServerConfig

SNAPSHOTS_PATH = "/debug/testing/snapshots"
RESET_PATH = "/debug/testing/reset"
MAX_SNAPSHOTS = 16
EVENTS_PREFIX = "/registry/events/"
INITIAL_SNAPSHOT_HOOK = "testing/initial-snapshot"
INITIAL_SNAPSHOT_WAIT = 30.0  # seconds a reset waits for a server that is not ready yet
CLUSTER_ROLES_PREFIX = "/registry/clusterroles/"
NAMESPACES_PREFIX = "/registry/namespaces/"
NAMESPACE_DEFAULTS = (
    ("/registry/serviceaccounts/", "default"),
    ("/registry/configmaps/", "kube-root-ca.crt"),
)
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_NAME_LENGTH = 63
MAX_BODY_BYTES = 4096


class SnapshotKeeper:
    """One server's snapshots. Restores are serialized: two at once would undo each other's writes."""

    def __init__(self, kv: KV, event_ttl: float):
        self.kv = kv
        self.event_ttl = event_ttl
        self.snapshots: OrderedDict[str, snapshot.Snapshot] = OrderedDict()
        self.initial: snapshot.Snapshot | None = None
        self.initial_taken = asyncio.Event()
        self._restoring = asyncio.Lock()
        self._generated = 0

    def ttl(self, key: str) -> float:
        """An Event written back lives --event-ttl again, as after any write of it."""
        return self.event_ttl if key.startswith(EVENTS_PREFIX) else 0.0

    async def take_initial(self) -> None:
        self.initial = await snapshot.take(self.kv)
        self.initial_taken.set()

    async def take(self, name: str) -> tuple[str, snapshot.Snapshot]:
        if not name:
            self._generated += 1
            name = f"snapshot-{self._generated}"
        taken = await snapshot.take(self.kv)
        self.snapshots.pop(name, None)
        self.snapshots[name] = taken
        while len(self.snapshots) > MAX_SNAPSHOTS:
            self.snapshots.popitem(last=False)
        return name, taken

    async def restore(self, taken: snapshot.Snapshot) -> snapshot.RestoreResult:
        async with self._restoring:
            return await snapshot.restore(self.kv, taken, self.ttl, derived_by_controllers)


def derived_by_controllers(key: str, current: bytes, taken: snapshot.Snapshot) -> bool:
    """What the server's controllers write after it is ready, from other objects: left as they are, not
    written back only for a controller to write them again (and a test to see them missing meanwhile).

    - An aggregated ClusterRole (admin, edit, view...) whose rules alone differ: they are the
      clusterrole-aggregation controller's, computed from the other roles, which the restore puts back. Its
      first aggregation lands after readiness: the initial snapshot holds only the roles' own rules.
    - A namespace's `default` ServiceAccount and `kube-root-ca.crt` ConfigMap that the snapshot lacks while
      it holds the namespace: the serviceaccount and root-ca-cert-publisher controllers create them in every
      namespace (kube-node-lease's come after readiness)."""
    snapshotted = taken.values.get(key)
    if snapshotted is None:
        return _namespace_default(key, taken)
    if not key.startswith(CLUSTER_ROLES_PREFIX):
        return False
    try:
        now, then = decode_value(current), decode_value(snapshotted)
    except Exception:  # noqa: BLE001 - a value it cannot read (encrypted...) is restored as any other
        return False
    return now.get("aggregationRule") is not None and _without_rules(now) == _without_rules(then)


def _namespace_default(key: str, taken: snapshot.Snapshot) -> bool:
    for prefix, name in NAMESPACE_DEFAULTS:
        if key.startswith(prefix) and key.endswith("/" + name):
            namespace = key[len(prefix) : -len(name) - 1]
            return "/" not in namespace and NAMESPACES_PREFIX + namespace in taken.values
    return False


def _without_rules(role: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (role.get("metadata") or {}).items() if k != "managedFields"}
    return {**{k: v for k, v in role.items() if k != "rules"}, "metadata": meta}


def install_snapshot_endpoints(config: ServerConfig, server: GenericAPIServer) -> SnapshotKeeper:
    """The paths, and a post-start hook taking the initial snapshot once every other hook has run (the
    bootstrap objects are written): a ready server has it, since each hook is a readiness check. Controllers
    still write after that (aggregated ClusterRoles fill in): see derived_by_controllers."""
    factory = config.extra.storage
    keeper = SnapshotKeeper(factory.store.kv, factory.event_ttl)

    async def initial_snapshot() -> None:
        others = [hook for name, hook in server.hooks.post_start.items() if name != INITIAL_SNAPSHOT_HOOK]
        await asyncio.gather(*(hook.done.wait() for hook in others))
        await keeper.take_initial()

    server.add_post_start_hook(INITIAL_SNAPSHOT_HOOK, initial_snapshot)
    mux = server.handler.non_restful_mux
    mux.handle_unlisted(SNAPSHOTS_PATH, _handler(keeper, _serve_collection))
    mux.handle_unlisted_prefix(SNAPSHOTS_PATH + "/", _handler(keeper, _serve_member))
    mux.handle_unlisted(RESET_PATH, _handler(keeper, _serve_reset))
    return keeper


def _handler(keeper: SnapshotKeeper, serve: Any) -> Any:
    async def handle(req: Request) -> Response:
        try:
            return await serve(keeper, req)
        except errors.StatusError as err:
            return write_status_error(req, err)
        except snapshot.RestoreConflictError as err:
            return write_status_error(req, errors.StatusError(409, "Conflict", str(err)))

    return handle


def _json(status: int, body: dict[str, Any]) -> Response:
    return Response(status, json.dumps(body).encode())


def _described(name: str, taken: snapshot.Snapshot) -> dict[str, Any]:
    return {"name": name, "resourceVersion": str(taken.revision), "keys": len(taken.values)}


def _restored(name: str, result: snapshot.RestoreResult) -> dict[str, Any]:
    return {
        "name": name,
        "resourceVersion": str(result.revision),
        "deleted": result.deleted,
        "created": result.created,
        "updated": result.updated,
    }


async def _serve_collection(keeper: SnapshotKeeper, req: Request) -> Response:
    if req.method == "GET":
        return _json(200, {"snapshots": [_described(n, s) for n, s in keeper.snapshots.items()]})
    if req.method != "POST":
        raise errors.method_not_allowed()
    name, taken = await keeper.take(await _requested_name(req))
    return _json(201, _described(name, taken))


async def _requested_name(req: Request) -> str:
    raw = await req.body(MAX_BODY_BYTES)
    if not raw.strip():
        return ""
    try:
        body = json.loads(raw)
    except ValueError as err:
        raise errors.bad_request(f"the body is not JSON: {err}") from None
    name = body.get("name", "") if isinstance(body, dict) else None
    if not isinstance(name, str):
        raise errors.bad_request('the body must be an object whose "name" is a string')
    if name and (len(name) > MAX_NAME_LENGTH or not _NAME.match(name)):
        raise errors.bad_request(
            f"invalid snapshot name {name!r}: at most {MAX_NAME_LENGTH} lowercase letters, "
            "digits and '-', starting and ending with a letter or digit"
        )
    return name


async def _serve_member(keeper: SnapshotKeeper, req: Request) -> Response:
    rest = req.path[len(SNAPSHOTS_PATH) + 1 :]
    name, _, action = rest.partition("/")
    if action not in ("", "restore") or not name:
        raise errors.route_not_found()
    taken = keeper.snapshots.get(name)
    if taken is None:
        raise errors.not_found("snapshots", "", name)
    if action == "restore":
        if req.method != "POST":
            raise errors.method_not_allowed()
        return _json(200, _restored(name, await keeper.restore(taken)))
    if req.method == "GET":
        return _json(200, _described(name, taken))
    if req.method != "DELETE":
        raise errors.method_not_allowed()
    del keeper.snapshots[name]
    return _json(200, {"name": name})


async def _serve_reset(keeper: SnapshotKeeper, req: Request) -> Response:
    if req.method != "POST":
        raise errors.method_not_allowed()
    try:
        await asyncio.wait_for(keeper.initial_taken.wait(), INITIAL_SNAPSHOT_WAIT)
    except TimeoutError:
        raise errors.StatusError(
            503, "ServiceUnavailable", "the initial snapshot is not taken yet: the server is not ready"
        ) from None
    assert keeper.initial is not None
    return _json(200, _restored("initial", await keeper.restore(keeper.initial)))
