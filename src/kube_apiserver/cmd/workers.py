"""--workers N: the API served by N processes on one port, so requests use every core (kube-apiserver's Go
runtime does that with threads; this interpreter runs Python on one core per process).

This process, the storage process, opens the embedded store (SQLite or memory: its file admits one opener),
runs its maintenance (compaction, lease expiry) and serves its KV interface to each worker over a socket
pair (storage/kvsocket). Each worker is a whole server, started as this command with the same flags, that
reaches the store through that socket and serves the connections this process accepts on the port and hands
to it, each to the worker holding the fewest (server/handoff.py). The workers are replicas
of one another (docs/replicas.md): one watch cache each, the controllers on the one that leads. On etcd there
is nothing to share here: each worker is a replica connected to etcd itself.

The storage process announces the server and writes the admin kubeconfig once every worker serves; when a
worker exits, it stops the others and exits with the worker's code (a supervisor above restarts the whole)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import uuid

from .. import logs
from ..server import listener
from ..server.handoff import ConnectionDispatcher
from ..server.options.etcd import STORAGE_TYPE_ETCD3
from ..storage.kvsocket import KVServer
from ..storage.objectstore import ObjectStore
from . import admin
from .completion import CompletedOptions
from .signals import stop_on_signals
from .storage_backend import StorageBackend, open_storage

log = logging.getLogger("kube_apiserver")

# How much higher the storage process's scheduling priority is than its workers' (nice steps), where the
# operating system lets it raise its own (root, CAP_SYS_NICE or RLIMIT_NICE): see _favor_storage.
STORAGE_PRIORITY_BOOST = 10
STORAGE_FD_ENV = "KUBE_APISERVER_STORAGE_FD"  # a worker's end of its socket pair to the storage process
CONNECTIONS_FD_ENV = "KUBE_APISERVER_CONNECTIONS_FD"  # and of the one its connections come over
PEERS_DIR_ENV = "KUBE_APISERVER_PEERS_DIR"  # where the workers answer one another's scrapes (server/peers.py)
WORKER_ENV = "KUBE_APISERVER_WORKER"  # a worker's name: "<generation>-<index>" (generation: this run's)
STOP_GRACE = 70.0  # a worker's own graceful shutdown (drain, watch termination) comes first


def storage_socket() -> socket.socket | None:
    """In a worker: its connection to the storage process (taken from the environment, so a server the
    worker starts in turn does not inherit it)."""
    fd = os.environ.pop(STORAGE_FD_ENV, None)
    return socket.socket(fileno=int(fd)) if fd else None


def connection_socket() -> socket.socket | None:
    """In a worker: where the connections it serves come from (server/handoff.py)."""
    fd = os.environ.pop(CONNECTIONS_FD_ENV, None)
    return socket.socket(fileno=int(fd)) if fd else None


def peers_dir() -> str | None:
    """In a worker: the directory of the workers' metrics sockets."""
    return os.environ.pop(PEERS_DIR_ENV, None)


def worker_name() -> str:
    return os.environ.get(WORKER_ENV, "")


def worker_index() -> int:
    name = worker_name()
    return int(name.rsplit("-", 1)[1]) if name else 0


def worker_argv(argv: list[str], port: int, service_ip_ranges: str) -> list[str]:
    """The command's flags for a worker: the same, with --workers=1 (a worker serves), on the port the storage
    process accepts on (it tells the worker its connections' address), with the service IP range this process
    defaulted (it warned of the default once: the workers need not again)."""
    flags: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--workers":
            skip = True
        elif not arg.startswith("--workers="):
            flags.append(arg)
    if not any(arg.startswith("--service-cluster-ip-range") for arg in flags):
        flags.append(f"--service-cluster-ip-range={service_ip_ranges}")
    return [*flags, "--workers=1", f"--secure-port={port}"]


def reserve_port(opts: CompletedOptions) -> socket.socket:
    """The port, bound here so that --secure-port=0 picks one port for all and a port in use fails here, in
    one line."""
    return listener.bind(opts.bind_address, opts.secure_port, opts.secure_serving.permit_port_sharing)


async def run(opts: CompletedOptions, argv: list[str], stop: asyncio.Event | None = None) -> int:
    """Serves until a signal or a worker's exit; returns the exit code."""
    stop = stop or stop_on_signals()
    dispatcher = ConnectionDispatcher(reserve_port(opts))
    port = dispatcher.listener.getsockname()[1]
    backend: StorageBackend | None = None
    kv_server: KVServer | None = None
    serving = asyncio.Event()
    pending = opts.workers

    def worker_serves() -> None:
        nonlocal pending
        pending -= 1
        if pending == 0:
            serving.set()

    children: list[asyncio.subprocess.Process] = []
    generation = uuid.uuid4().hex[:8]
    peers = tempfile.mkdtemp(prefix="kube-apiserver-workers-")  # mode 0700: this user's processes only
    try:
        if opts.etcd.storage_backend != STORAGE_TYPE_ETCD3:  # (a store that fails to open closes the port too)
            backend = await open_storage(opts.etcd, opts.data_dir, ObjectStore, serves_only_storage=True)
            backend.start(opts.etcd)
            kv_server = KVServer(backend.kv, worker_serves)
        for index in range(opts.workers):
            name = f"{generation}-{index}"
            flags = worker_argv(argv, port, ",".join(map(str, opts.service_cluster_ip_ranges)))
            children.append(await _start_worker(name, flags, kv_server, dispatcher, peers))
        if kv_server is not None:
            _favor_storage()  # once the workers are forked: they keep the priority they were started with
        exits = [asyncio.ensure_future(child.wait()) for child in children]
        stopping = asyncio.ensure_future(stop.wait())
        announced = asyncio.ensure_future(serving.wait())
        # etcd workers are replicas that announce themselves (the first one)
        waited = [*exits, stopping] if kv_server is None else [*exits, stopping, announced]
        done, _ = await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        if announced in done and not stopping.done():
            _announce(opts, admin.client_url(opts.bind_address, port))
            done, _ = await asyncio.wait([*exits, stopping], return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        announced.cancel()
        code = next((task.result() for task in exits if task in done), 0)
        if code:
            log.error("a worker exited with code %d: stopping the others", code)
        return code
    finally:
        await _stop(children)
        if kv_server is not None:
            kv_server.close()
        if backend is not None:
            await backend.stop()
        dispatcher.close()
        shutil.rmtree(peers, ignore_errors=True)


def _favor_storage() -> None:
    """Raises this process's scheduling priority above its workers', if the operating system lets it.

    Every write of every worker waits for this process's event loop, which does little each time it wakes.
    At the workers' priority it waited for a worker's time slice whenever both cores ran workers: 0.2 ms a
    wake-up on average, and a write spent 1.4 ms here under 16 creates in flight; at 10 nice steps higher,
    0.02 ms and 0.7 ms, and the p50 of k8sbench's creates, PUTs, patches and pod creates fell by 8-10% with
    the same CPU per request (docs/write-path.md, item 20). Being small, its work takes little from the workers.

    Linux's nice value belongs to a thread: this one, the event loop's, is the one that serves."""
    try:
        os.nice(-STORAGE_PRIORITY_BOOST)
    except OSError as err:  # an unprivileged user may only lower its priority
        logs.info_v(2, "The storage process keeps its workers' scheduling priority: %s", err)


async def _start_worker(name: str, argv: list[str], kv_server: KVServer | None,
                        dispatcher: ConnectionDispatcher, peers: str) -> asyncio.subprocess.Process:
    connections = dispatcher.add_worker()
    env = {**os.environ, WORKER_ENV: name, CONNECTIONS_FD_ENV: str(connections.fileno()), PEERS_DIR_ENV: peers}
    passed = [connections]
    try:
        if kv_server is not None:
            ours, theirs = socket.socketpair()
            passed.append(theirs)
            await kv_server.serve(ours)
            env[STORAGE_FD_ENV] = str(theirs.fileno())
        return await asyncio.create_subprocess_exec(sys.executable, "-m", "kube_apiserver", *argv, env=env,
                                                    pass_fds=tuple(sock.fileno() for sock in passed))
    finally:
        for sock in passed:
            sock.close()


def _announce(opts: CompletedOptions, url: str) -> None:
    kubeconfig = os.path.join(opts.data_dir, "admin.kubeconfig")
    admin.write_admin_kubeconfig(kubeconfig, url, opts.ca_file, admin.ensure_admin_credential(opts.data_dir))
    log.info("Admin kubeconfig: %s", kubeconfig)
    print(f"kube-apiserver is serving on {url} ({opts.workers} workers)\n"
          f"admin kubeconfig: {kubeconfig}\n"
          f"  kubectl --kubeconfig {kubeconfig} get namespaces", flush=True)


async def _stop(children: list[asyncio.subprocess.Process]) -> None:
    """SIGTERM to every worker still running (each shuts down gracefully), SIGKILL after STOP_GRACE."""
    running = [child for child in children if child.returncode is None]
    for child in running:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signal.SIGTERM)
    for child in running:
        try:
            await asyncio.wait_for(child.wait(), STOP_GRACE)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()
