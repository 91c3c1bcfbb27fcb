"""APIServer: a real kube-apiserver for tests, in this process (its own event loop in a thread) or as a
subprocess, on an ephemeral port, with its data in a temporary directory unless told where.

    with APIServer() as server:
        server.request("GET", "/api/v1/namespaces").json()
        kubernetes.client.CoreV1Api(server.kubernetes_client()).list_namespace()

Authorization: RBAC unless `args` say otherwise (as envtest runs kube-apiserver; the command's own default is
AlwaysAllow, as kube-apiserver's): the admin is in system:masters, users made by `create_user` are refused
until granted.

Controllers: the server's own default (every embedded controller, `--controllers=*`), so a test sees the
cluster move as it would in a real one (namespaces emptied, garbage collected, deployments rolled out). Pass
`--controllers=...` in `args` to pick them (e.g. `--controllers=garbagecollector,namespace`).

Faster starts, shared explicitly (no process-wide cache): a fresh data dir costs its credentials (the service
account key is RSA 2048: 40-300 ms to generate) and the bootstrap writes (~450 RBAC objects, priority levels,
namespaces). `PKI.create()` made once and passed to several servers (`APIServer(pki=pki)`) saves the first;
`Template.create()` saves both: each server starts from a copy of a bootstrapped data dir, as a restarted
kube-apiserver does (~0.1 s to ready instead of ~0.3-0.9 s; bench/testing_server.py measures them).
"""

from __future__ import annotations

import asyncio
import gc
import http.client
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

import yaml

from .connections import STALE, KeptConnections

Mode = Literal["thread", "subprocess"]
ADMIN = "admin"  # request(token=ADMIN): the admin bearer token
KUBECONFIG_NAME = "admin.kubeconfig"
SERVING_LINE = "kube-apiserver is serving on "  # what the command prints once it serves (cmd/server.py)
PKI_DIR = "pki"
CLIENT_CA_DIR = "testing-client-ca"  # in the data dir: the CA create_user signs client certificates with
TESTING_ENDPOINTS_FLAG = "--enable-testing-endpoints"


@dataclass
class Response:
    status: int
    headers: dict[str, str]  # names lowercased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class PKI:
    """A CA, serving certificate and service account signing key generated once, in `directory`, exactly as
    a server generates them in <data-dir>/pki; servers given this object start from a copy instead of
    generating their own (a copy: a server may regenerate its serving certificate, e.g. for other names)."""

    def __init__(self, directory: str, made_in: str = ""):
        self.directory = directory
        self._made_in = made_in  # the temporary directory create() made, which remove() deletes

    @classmethod
    def create(cls, directory: str | None = None) -> PKI:
        from ..cmd.options import ServerRunOptions

        data_dir = directory or tempfile.mkdtemp(prefix="kube-apiserver-pki-")
        ServerRunOptions.parse(["--data-dir", data_dir]).complete()  # generates what a start would
        return cls(os.path.join(data_dir, PKI_DIR), "" if directory else data_dir)

    def remove(self) -> None:
        """Deletes the temporary directory create() made (a directory the caller gave is the caller's)."""
        if self._made_in:
            shutil.rmtree(self._made_in, ignore_errors=True)

    def copy_to(self, data_dir: str) -> None:
        """Seeds `data_dir` with these credentials, unless it already has its own."""
        target = os.path.join(data_dir, PKI_DIR)
        if not os.path.exists(target):
            shutil.copytree(self.directory, target)


class Template:
    """The data directory of a server that bootstrapped and stopped cleanly (SQLite store and credentials,
    without its admin token or kubeconfig). A server started from a copy starts as kube-apiserver restarts:
    the bootstrap objects (RBAC roles, priority levels, system namespaces) are there, so it reconciles them
    instead of creating ~450 of them, which is most of a fresh start's time. Every server given the template
    gets its own copy (and its own admin token); the copies share the bootstrap objects' uids and times."""

    def __init__(self, directory: str, temporary: bool = False):
        self.directory = directory
        self._temporary = temporary  # made by create() in a temporary directory, which remove() deletes

    @classmethod
    def create(cls, args: list[str] | tuple[str, ...] = (), directory: str | None = None) -> Template:
        """Bootstraps a server with `args` in `directory`, on SQLite whatever `args` say (the template is its
        database; a server given the template may keep it in memory)."""
        data_dir = directory or tempfile.mkdtemp(prefix="kube-apiserver-template-")
        with APIServer(args=[*_without_flag(args, "--storage-backend"), "--storage-backend=sqlite"],
                       data_dir=data_dir) as server:
            _wait_for_quiet_cluster_roles(server)
        for name in (KUBECONFIG_NAME, "admin.token"):
            os.unlink(os.path.join(data_dir, name))
        return cls(data_dir, temporary=directory is None)

    def remove(self) -> None:
        """Deletes the temporary directory create() made (a directory the caller gave is the caller's)."""
        if self._temporary:
            shutil.rmtree(self.directory, ignore_errors=True)

    def copy_to(self, data_dir: str) -> None:
        """Seeds `data_dir` with the template, unless it already holds a server's data."""
        if os.path.exists(data_dir) and os.listdir(data_dir):
            return
        shutil.copytree(self.directory, data_dir, dirs_exist_ok=True)


def _without_flag(args: list[str] | tuple[str, ...], flag: str) -> list[str]:
    """`args` without `flag`, given as --flag=value or --flag value."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == flag:
            skip = True
        elif not arg.startswith(flag + "="):
            kept.append(arg)
    return kept


CLUSTER_ROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles?limit=1"
# ClusterRoles unchanged this long: the aggregation controller is done. It starts once the controllers hold
# their leader lease, a few hundred milliseconds after readiness: a shorter wait saw no change yet.
QUIET_SECONDS = 1.0
SETTLE_LIMIT_SECONDS = 10.0


def _wait_for_quiet_cluster_roles(server: APIServer) -> None:
    """Until the aggregated ClusterRoles (admin, edit, view...) have their rules: the aggregation controller
    fills them in after readiness. A template stopped earlier would make each copy redo those writes."""
    deadline = time.monotonic() + SETTLE_LIMIT_SECONDS
    last, quiet_since = None, time.monotonic()
    while time.monotonic() < deadline:
        version = server.request("GET", CLUSTER_ROLES).json()["metadata"]["resourceVersion"]
        if version != last:
            last, quiet_since = version, time.monotonic()
        elif time.monotonic() - quiet_since >= QUIET_SECONDS:
            return
        time.sleep(0.05)


class APIServer:
    """A kube-apiserver for a test. `args` are the command's flags (the data dir and port are set here);
    `mode` "thread" runs it in this process, "subprocess" as `python -m kube_apiserver`."""

    def __init__(
        self,
        args: list[str] | tuple[str, ...] = (),
        data_dir: str | None = None,
        mode: Mode = "thread",
        pki: PKI | None = None,
        template: Template | None = None,
        timeout: float = 60.0,
        testing_tools: bool = True,
        deterministic: bool = False,
        seed: int = 0,
    ):
        if mode not in ("thread", "subprocess"):
            raise ValueError(f"mode must be 'thread' or 'subprocess', not {mode!r}")
        self.args = list(args)
        self.mode: Mode = mode
        self.pki = pki
        self.template = template
        self.timeout = timeout
        self.testing_tools = testing_tools
        self.deterministic, self.seed = deterministic, seed  # --deterministic, --deterministic-seed
        self.client_ca_dir = ""  # set at start when testing_tools: create_user finds the CA here
        self.data_dir = data_dir or ""
        self._owns_data_dir = data_dir is None
        self.url = ""
        self.port = 0
        self.kubeconfig = ""
        self.kubeconfig_dict: dict[str, Any] = {}
        self.ca_file = ""
        self.token = ""
        self._runner: _ThreadRunner | _ProcessRunner | None = None
        self._connections = KeptConnections(lambda timeout: self.connection(timeout))
        self._ssl_context: tuple[str, ssl.SSLContext] | None = None

    # ---- lifecycle ----

    def start(self) -> APIServer:
        if self._runner is not None:
            raise RuntimeError("the server is already started")
        _server_options([*self.args])  # a bad command line fails here, in the caller's thread
        if self._owns_data_dir:
            self.data_dir = tempfile.mkdtemp(prefix="kube-apiserver-")
        if self.template is not None:
            self.template.copy_to(self.data_dir)
        os.makedirs(self.data_dir, exist_ok=True)
        if self.pki is not None:
            self.pki.copy_to(self.data_dir)
        runner = _ThreadRunner(self) if self.mode == "thread" else _ProcessRunner(self)
        self._runner = runner
        try:
            runner.start()
            self._read_kubeconfig()
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stops the server (waits for its clean shutdown) and removes the temporary data directory."""
        runner, self._runner = self._runner, None
        self._connections.close_all()
        try:
            if runner is not None:
                runner.stop()
        finally:
            if self._owns_data_dir and self.data_dir:
                shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> APIServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> APIServer:
        # in a worker thread: the caller's loop keeps running while the server starts on its own
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    def _command_args(self) -> list[str]:
        return [
            "--data-dir",
            self.data_dir,
            "--secure-port",
            "0",
            *self._default_args(),
            *self._tool_args(),
            *self._deterministic_args(),
            *self.args,
        ]

    def _default_args(self) -> list[str]:
        """RBAC, and on a temporary data dir the store in memory: it is deleted at stop anyway, and writes
        cost no disk (a reset of a thousand objects a few milliseconds instead of tens)."""
        given = " ".join(self.args)
        defaults = []
        if "--authorization-mode" not in given and "--authorization-config" not in given:
            defaults.append("--authorization-mode=RBAC")
        if self._owns_data_dir and "--storage-backend" not in given:
            defaults.append("--storage-backend=memory")
        return defaults

    def _deterministic_args(self) -> list[str]:
        given = any(arg == "--deterministic" or arg.startswith("--deterministic=") for arg in self.args)
        if not self.deterministic or given:
            return []
        return ["--deterministic", f"--deterministic-seed={self.seed}"]

    def _tool_args(self) -> list[str]:
        """--enable-testing-endpoints and a client CA (an EC key: ~1 ms), unless the caller set them."""
        if not self.testing_tools:
            return []
        given = " ".join(self.args)
        args = [] if TESTING_ENDPOINTS_FLAG in given else [TESTING_ENDPOINTS_FLAG]
        if "--client-ca-file" not in given and self.data_dir:
            from .users import client_ca_args

            self.client_ca_dir = os.path.join(self.data_dir, CLIENT_CA_DIR)
            args += client_ca_args(self.client_ca_dir)
        return args

    def _read_kubeconfig(self) -> None:
        self.kubeconfig = os.path.join(self.data_dir, KUBECONFIG_NAME)
        with open(self.kubeconfig) as f:
            self.kubeconfig_dict = yaml.safe_load(f)
        self.url = self.kubeconfig_dict["clusters"][0]["cluster"]["server"]
        self.port = int(self.url.rsplit(":", 1)[1])
        self.token = self.kubeconfig_dict["users"][0]["user"]["token"]
        self.ca_file = os.path.join(self.data_dir, PKI_DIR, "ca.crt")
        if not os.path.exists(self.ca_file):  # --tls-cert-file given: clients trust that certificate
            self.ca_file = _ca_from_flags(self.args) or self.ca_file

    def wait_ready(self, timeout: float | None = None) -> None:
        """Until /readyz passes: every post-start hook (system namespaces, priority classes...) has run.
        One kept-alive connection asks: a TLS handshake per poll would take CPU from the starting server."""
        deadline = time.monotonic() + (timeout or self.timeout)
        conn: http.client.HTTPSConnection | None = None
        try:
            while True:
                try:
                    conn = conn or self.connection(timeout=5)
                    if self._exchange(conn, "GET", "/readyz", None, None, ADMIN)[0].status == 200:
                        return
                except (OSError, http.client.HTTPException):
                    if conn is not None:
                        conn.close()
                    conn = None
                if self._runner is not None:
                    self._runner.check_alive()
                if time.monotonic() > deadline:
                    raise TimeoutError("the server did not become ready")
                time.sleep(0.01)
        finally:
            if conn is not None:
                conn.close()

    # ---- clients ----

    def ssl_context(self) -> ssl.SSLContext:
        """A client context trusting the server's CA (made once: loading the CA file costs a few ms)."""
        if self._ssl_context is None or self._ssl_context[0] != self.ca_file:
            self._ssl_context = (self.ca_file, ssl.create_default_context(cafile=self.ca_file))
        return self._ssl_context[1]

    def connection(self, timeout: float = 30.0) -> http.client.HTTPSConnection:
        """A new HTTPS connection to the server, verifying its certificate."""
        host = self.url.split("//", 1)[1].rsplit(":", 1)[0].strip("[]")
        return http.client.HTTPSConnection(host, self.port, context=self.ssl_context(), timeout=timeout)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        token: str | None = ADMIN,
        timeout: float = 30.0,
    ) -> Response:
        """One HTTPS request; `body` as bytes/str, or anything else as JSON. `token`: ADMIN (the admin's),
        another bearer token, or None for an anonymous request. Sent on this thread's kept-alive connection."""
        conn, kept = self._connections.take(timeout)
        try:
            resp, will_close = self._exchange(conn, method, path, body, headers, token)
        except STALE:
            self._connections.discard(conn)
            if not kept:
                raise
            return self.request(method, path, body, headers, token, timeout)  # on a new connection
        except BaseException:
            self._connections.discard(conn)
            raise
        if will_close:
            self._connections.discard(conn)
        else:
            self._connections.give_back(conn)
        return resp

    def _exchange(
        self,
        conn: http.client.HTTPSConnection,
        method: str,
        path: str,
        body: Any,
        headers: dict[str, str] | None,
        token: str | None,
    ) -> tuple[Response, bool]:
        """The answer, and whether the connection closes after it."""
        hdrs = dict(headers or {})
        if token:
            hdrs["Authorization"] = f"Bearer {self.token if token == ADMIN else token}"
        if body is not None and not isinstance(body, bytes | str):
            body = json.dumps(body)
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data), resp.will_close

    def kubernetes_client(self) -> Any:
        """An official `kubernetes.client.ApiClient` for the admin (the CA verified, the bearer token)."""
        import kubernetes.client

        configuration = kubernetes.client.Configuration()
        configuration.host = self.url
        configuration.ssl_ca_cert = self.ca_file
        configuration.verify_ssl = True
        configuration.api_key = {"authorization": f"Bearer {self.token}"}
        return kubernetes.client.ApiClient(configuration)

    # ---- test tools (testing_tools=True) ----

    @property
    def clock(self) -> Any:
        """The server's clock (testing/clock.py ServerClock): now(), advance(seconds), set(time); it moves
        only under deterministic=True (--deterministic)."""
        from .clock import ServerClock

        return ServerClock(self)

    def snapshot(self, name: str = "") -> str:
        """Keeps the whole store as it is now, under `name` (or a generated one); returns the name."""
        from . import state

        return state.snapshot(self._state_channel(), name)

    def restore(self, name: str) -> dict[str, Any]:
        """Writes the store back to snapshot `name` (watchers see the changes; resourceVersions move on)."""
        from . import state

        return state.restore(self._state_channel(), name)

    def reset(self) -> dict[str, Any]:
        """Writes the store back to what it held when the server became ready."""
        from . import state

        return state.reset(self._state_channel())

    def _state_channel(self) -> Any:
        """What snapshots, restores and resets are sent through: in this process, the server's own loop (see
        _ThreadRunner.call); else the endpoint over HTTPS."""
        runner = self._runner
        return _InProcessChannel(self, runner) if isinstance(runner, _ThreadRunner) else self

    def inject(self, **rule: Any) -> str:
        """A fault rule (testing/faults.py rule_body: verb, resource, namespace, name, user, status, latency,
        watch, count, probability, seed...); returns its id."""
        from . import faults

        return faults.inject(self, **rule)

    def injected(self, **rule: Any) -> Any:
        """inject() as a context manager: the rule is removed on exit."""
        from . import faults

        return faults.injected(self, **rule)

    def clear_faults(self) -> None:
        from . import faults

        faults.clear(self)

    def requests(self, since: int = 0, **filters: Any) -> Any:
        """The requests the server answered (a RequestList, oldest first), filtered by user, verb, group,
        resource, subresource, namespace, name."""
        from . import history

        return history.requests(self, since=since, **filters)

    def create_user(self, name: str, groups: list[str] | tuple[str, ...] = (), **options: Any) -> Any:
        """A User with a client certificate and a token: kubeconfig, raw-HTTP headers, kubernetes client."""
        from . import users

        return users.create_user(self, name, groups, **options)

    def grant(self, subject: Any, rules: list[dict[str, Any]] | None = None, **options: Any) -> str:
        """Binds rules (or cluster_role=) to a user or group and waits until the authorizer applies them."""
        from . import users

        return users.grant(self, subject, rules, **options)

    def admission_webhook(self, function: Any, **options: Any) -> Any:
        """A context manager serving `function` as a validating (or mutating=True) admission webhook."""
        from . import webhooks

        return webhooks.admission_webhook(self, function, **options)

    def conversion_webhook(self, convert: Any, **options: Any) -> Any:
        """A context manager serving `convert(object, api_version)` as a CRD conversion webhook."""
        from . import webhooks

        return webhooks.conversion_webhook(self, convert, **options)


def _server_options(argv: list[str]) -> Any:
    """The command's options from `argv`, as ServerRunOptions.parse reads them, but a bad command line is a
    ValueError with pflag's message (not the usage on stderr and SystemExit), and --help/--version too."""
    from ..cli.parse import FlagError, parse_args
    from ..cmd.options import ServerRunOptions

    opts = ServerRunOptions()
    opts.flag_sets = opts.flags()
    try:
        positional = parse_args(opts.flag_sets, argv)
    except FlagError as err:
        raise ValueError(str(err)) from None
    if any(positional):
        raise ValueError(f"the server takes flags only, got {positional}")
    if opts.show_help or opts.version != "false":
        raise ValueError("--help and --version print and exit: they start no server")
    return opts


def _ca_from_flags(args: list[str]) -> str:
    for i, arg in enumerate(args):
        if arg.startswith("--tls-cert-file="):
            return arg.split("=", 1)[1]
        if arg == "--tls-cert-file" and i + 1 < len(args):
            return args[i + 1]
    return ""


class _ThreadRunner:
    """The server on its own uvloop in a daemon thread, as the command runs it (cmd/server.py `run`)."""

    def __init__(self, server: APIServer):
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping: asyncio.Event | None = None
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.started = threading.Event()
        self.loopback: Any = None  # the server's loopback client (rest.Client), once it serves

    def start(self) -> None:
        self.thread = threading.Thread(target=self._main, name="kube-apiserver", daemon=True)
        self.thread.start()
        if not self.started.wait(self.server.timeout):
            raise TimeoutError("the server did not start")
        if self.error is not None:
            raise self.error

    def _main(self) -> None:
        import uvloop

        try:
            uvloop.run(self._serve())
        except BaseException as err:  # noqa: BLE001 - reported to start() or check_alive()
            self.error = err
        finally:
            self.started.set()

    async def _serve(self) -> None:
        from ..apimachinery.field import aggregate_message
        from ..cmd.server import run

        completed = _server_options(self.server._command_args()).complete()
        errors = completed.validate()
        if errors:
            raise ValueError(aggregate_message(errors))
        self.loop = asyncio.get_running_loop()
        self.stopping = asyncio.Event()
        up = asyncio.Event()
        task = asyncio.ensure_future(run(completed, self.stopping, up, announce=False, serving=self._serving))
        await asyncio.wait({task, asyncio.ensure_future(up.wait())}, return_when=asyncio.FIRST_COMPLETED)
        self.started.set()
        await task

    def _serving(self, config: Any) -> None:
        self.loopback = config.loopback

    def call(self, method: str, path: str, body: bytes | None, timeout: float) -> Response | None:
        """The request handed to the server's handler chain on its own loop, as its loopback client sends one
        (system:masters), without HTTP: the caller's thread waits once for the answer instead of taking turns
        with the server's thread at each step of reading it (the interpreter's lock). None: not serving."""
        loop, loopback = self.loop, self.loopback
        if loop is None or loopback is None or loop.is_closed():
            return None
        future = asyncio.run_coroutine_threadsafe(loopback.transport.round_trip(method, path, body=body), loop)
        answer = future.result(timeout)
        return Response(answer.status, {name.lower(): value for name, value in answer.headers}, answer.body)

    def check_alive(self) -> None:
        if self.error is not None:
            raise self.error
        if self.thread is not None and not self.thread.is_alive():
            raise RuntimeError("the server stopped")

    def stop(self) -> None:
        if self.loop is not None and self.stopping is not None and not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(self.stopping.set)
            except RuntimeError:  # the loop closed meanwhile: nothing left to stop
                pass
        if self.thread is not None:
            self.thread.join(self.server.timeout)
            if not self.thread.is_alive():
                self.loopback = None  # the stopped server's graph, collected now
                _collect_stopped_server()


class _InProcessChannel:
    """A server's `request` for the testing endpoints, handed to its loop directly (HTTPS if it is not
    serving yet)."""

    def __init__(self, server: APIServer, runner: _ThreadRunner):
        self.server, self.runner = server, runner

    def request(self, method: str, path: str, body: Any = None) -> Response:
        data = None if body is None else json.dumps(body).encode()
        answer = self.runner.call(method, path, data, self.server.timeout)
        return answer if answer is not None else self.server.request(method, path, body)


def _collect_stopped_server() -> None:
    """A stopped server leaves its whole object graph (~20k objects: routes, stores, informers, tasks) as
    cyclic garbage. Collected here, at stop (~50-90 ms), rather than by the full collection that the next
    server's start would otherwise trigger every other time (~100-160 ms then, the live server's objects walked
    too, and that start's time to ready with it)."""
    gc.collect()


class _ProcessRunner:
    """`python -m kube_apiserver` with --secure-port 0; its output goes to <data-dir>/apiserver.log."""

    def __init__(self, server: APIServer):
        self.server = server
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = os.path.join(server.data_dir, "apiserver.log")
        self.stdout_path = os.path.join(server.data_dir, "apiserver.out")

    def start(self) -> None:
        # A kubeconfig left by an earlier run names its port: only this run's announcement counts.
        stale = os.path.join(self.server.data_dir, KUBECONFIG_NAME)
        if os.path.exists(stale):
            os.unlink(stale)
        command = [sys.executable, "-m", "kube_apiserver", *self.server._command_args()]
        with open(self.stdout_path, "wb") as out, open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdout=out, stderr=log, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.server.timeout
        while not self._announced():
            self.check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"the server did not start; its log: {self.log_path}")
            time.sleep(0.01)

    def _announced(self) -> bool:
        with open(self.stdout_path, "rb") as f:
            return SERVING_LINE.encode() in f.read()

    def check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            with open(self.log_path, "rb") as f:
                tail = f.read()[-2000:].decode(errors="replace")
            raise RuntimeError(f"the server exited with {self.process.returncode}: {tail}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(self.server.timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
