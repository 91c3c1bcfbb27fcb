"""HA under faults, as issue 10 asks: a 3-member etcd cluster and 3 server replicas as real processes,
under write load and watched from every replica.

1. an etcd member that is not the leader is killed: writes go on (it then comes back);
2. the etcd leader is killed: writes resume once the others elect a new one (it then comes back);
3. the replica running the controllers is killed -9: the others keep serving, its address leaves the
   `kubernetes` Endpoints within the masterlease TTL (15 s, renewed every 10 s) and the controllers move
   to another replica (its kube-controller-manager Lease, and a controller seen working).

Then no acknowledged create is lost (each is in a consistent list of every surviving replica, with its
data), a consistent read through another replica right after a create always holds it, and every watcher
(a list then a watch, or a watch-list as the controllers' informers) saw the creates once each, in
resourceVersion order, with no silent gap: a watch that ends is resumed from its last resourceVersion,
one answered 410 relists, and between two relists each watcher's events are complete and ordered. Figures (creates/s per phase, the pause at the leader
kill, how long the endpoint and the controllers took) are printed: run with -s to see them."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from etcd import EtcdCluster, free_port, require_etcd

NAMESPACE = "ha-faults"
CONFIGMAPS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
ENDPOINTS = "/api/v1/namespaces/default/endpoints/kubernetes"
WATCH_QUERY = "allowWatchBookmarks=true&timeoutSeconds=20"
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
CONTROLLER_LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"
ACQUIRED = "successfully acquired lease kube-system/kube-controller-manager"
# Endpoints validation refuses loopback addresses: these (TEST-NET-1) are only written, never dialled.
ADDRESSES = ("192.0.2.10", "192.0.2.11", "192.0.2.12")
LEADER_ELECTION_FLAGS = (
    "--leader-elect-lease-duration=2s",
    "--leader-elect-renew-deadline=1s",
    "--leader-elect-retry-period=200ms",
)
MASTER_LEASE_TTL = 15.0  # kube-apiserver's, as the replicas run with it
RECONCILE_INTERVAL = 10.0
WRITERS = 3
WRITES_PER_SECOND_PER_WRITER = 12.0  # ~36/s in all: load, leaving the two cores to the processes
WATCHERS_PER_REPLICA = 2
PHASE_SECONDS = 3.0  # how long the load runs in each state before the next fault
REQUEST_TIMEOUT = 15.0
START_TIMEOUT = 60.0


# ---- the replicas, as processes ----


class ReplicaProcess:
    """`python -m kube_apiserver` on etcd, with its own data dir (its CA and admin token) and port."""

    def __init__(self, index: int, root: str, etcd_servers: str):
        self.index = index
        self.address = ADDRESSES[index]
        self.data_dir = os.path.join(root, f"replica-{index}")
        self.log_path = f"{self.data_dir}.log"
        self.port = free_port()
        self.token = ""
        self.context: ssl.SSLContext | None = None
        self._killed = threading.Event()
        command = [
            sys.executable,
            "-m",
            "kube_apiserver",
            "--data-dir",
            self.data_dir,
            "--secure-port",
            str(self.port),
            "--bind-address",
            "127.0.0.1",
            f"--advertise-address={self.address}",
            "--storage-backend=etcd3",
            f"--etcd-servers={etcd_servers}",
            *LEADER_ELECTION_FLAGS,
        ]
        with open(self.log_path, "wb") as sink:
            self.proc = subprocess.Popen(
                command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
            )

    @property
    def running(self) -> bool:
        # Popen.poll() answers None while another thread is in it: the kill is known first-hand.
        return not self._killed.is_set() and self.proc.poll() is None

    def log(self) -> str:
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait_serving(self, deadline: float) -> None:
        """Until it prints its admin kubeconfig; then its token and CA are read from its data dir."""
        while "admin kubeconfig:" not in self.log():
            assert self.running, self.log()[-3000:]
            assert time.monotonic() < deadline, f"replica {self.index} did not start: {self.log()[-3000:]}"
            time.sleep(0.05)
        with open(os.path.join(self.data_dir, "admin.kubeconfig")) as f:
            self.token = yaml.safe_load(f)["users"][0]["user"]["token"]
        self.context = ssl.create_default_context(cafile=os.path.join(self.data_dir, "pki", "ca.crt"))

    def connection(self, timeout: float = REQUEST_TIMEOUT) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=timeout)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """(status, decoded body); (0, error text) when the replica cannot be reached."""
        conn = self.connection()
        try:
            conn.request(
                method, path, body=json.dumps(body) if body is not None else None, headers=self.headers()
            )
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as err:
            return 0, repr(err)
        finally:
            conn.close()
        try:
            return resp.status, json.loads(data)
        except ValueError:
            return resp.status, data.decode(errors="replace")

    def kill(self) -> None:
        """SIGKILL: the replica dies as on a crash, without removing its endpoint or releasing leases."""
        self._killed.set()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


# ---- write load ----


@dataclass(frozen=True)
class Ack:
    name: str
    data: dict[str, str]
    revision: int
    replica: int
    sent: float  # when the request was sent
    at: float  # when its 201 came back


class WriteLoad:
    """Writers creating ConfigMaps round-robin across the live replicas over kept-alive connections.
    Only a 201 counts: any other answer, or none, may or may not have been applied, and is never counted."""

    def __init__(self, replicas: list[ReplicaProcess]):
        self.replicas = replicas
        self.acks: list[Ack] = []
        self.failures: list[tuple[float, int, str]] = []
        self.started = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(w,), daemon=True) for w in range(WRITERS)]

    def start(self) -> None:
        self.started = time.monotonic()
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(REQUEST_TIMEOUT + 5)

    def _run(self, worker: int) -> None:
        connections: dict[int, http.client.HTTPSConnection] = {}
        period = 1 / WRITES_PER_SECOND_PER_WRITER
        next_at = time.monotonic()
        seq = 0
        while not self._stop.is_set():
            live = [r for r in self.replicas if r.running]
            if not live:
                return
            replica = live[(seq + worker) % len(live)]
            seq += 1
            self._create(replica, connections, f"w{worker}-{seq}", {"writer": str(worker), "seq": str(seq)})
            next_at += period
            self._stop.wait(max(0.0, next_at - time.monotonic()))
            next_at = max(next_at, time.monotonic() - period)  # after a long stall, no burst to catch up
        for conn in connections.values():
            conn.close()

    def _create(
        self,
        replica: ReplicaProcess,
        connections: dict[int, http.client.HTTPSConnection],
        name: str,
        data: dict[str, str],
    ) -> None:
        conn = connections.get(replica.index) or replica.connection()
        connections[replica.index] = conn
        body = json.dumps({"metadata": {"name": name}, "data": data})
        sent = time.monotonic()
        try:
            conn.request("POST", CONFIGMAPS, body=body, headers=replica.headers())
            resp = conn.getresponse()
            answer = resp.read()
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            del connections[replica.index]
            self._failed(replica, repr(err))
            return
        if resp.status != 201:
            self._failed(replica, f"{resp.status} {answer[:300]!r}")
            return
        created = json.loads(answer)
        assert created["data"] == data, created
        ack = Ack(
            name, data, int(created["metadata"]["resourceVersion"]), replica.index, sent, time.monotonic()
        )
        with self._lock:
            self.acks.append(ack)

    def _failed(self, replica: ReplicaProcess, why: str) -> None:
        with self._lock:
            self.failures.append((time.monotonic(), replica.index, why))

    def snapshot(self) -> list[Ack]:
        with self._lock:
            return list(self.acks)

    def sent_since(self, since: float) -> list[Ack]:
        """The acknowledged creates that were sent after `since`."""
        return [a for a in self.snapshot() if a.sent >= since]

    def rate(self, start: float, end: float) -> float:
        return sum(1 for a in self.snapshot() if start <= a.at < end) / max(end - start, 1e-9)

    def slowest(self, start: float, end: float) -> float:
        """The longest a create sent in [start, end] waited for its 201."""
        return max((a.at - a.sent for a in self.snapshot() if start <= a.sent <= end), default=0.0)

    def longest_gap(self, start: float, end: float) -> float:
        """The longest time without an acknowledgement in [start, end]."""
        times = [start, *sorted(a.at for a in self.snapshot() if start <= a.at <= end), end]
        return max(b - a for a, b in zip(times, times[1:], strict=False))


class ConsistentReads:
    """Reads of the newest acknowledged create through another replica: a list without a resourceVersion
    (a consistent read, served from that replica's watch cache once it has caught up) must hold it."""

    def __init__(self, load: WriteLoad):
        self.load = load
        self.reads = 0
        self.unanswered: list[str] = []
        self.stale: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(REQUEST_TIMEOUT + 5)

    def _run(self) -> None:
        turn = 0
        while not self._stop.wait(0.1):
            acks = self.load.snapshot()
            others = [r for r in self.load.replicas if r.running and acks and r.index != acks[-1].replica]
            if not others:
                continue
            turn += 1
            self._check(others[turn % len(others)], acks[-1])

    def _check(self, replica: ReplicaProcess, ack: Ack) -> None:
        status, body = replica.request("GET", f"{CONFIGMAPS}?fieldSelector=metadata.name%3D{ack.name}")
        self.reads += 1
        if status != 200:
            self.unanswered.append(f"replica {replica.index}: {status} {str(body)[:200]}")
            return
        revision = int(body["metadata"]["resourceVersion"])
        if revision < ack.revision or [i.get("data") for i in body["items"]] != [ack.data]:
            self.stale.append(f"replica {replica.index} at {revision} for {ack}: {body['items']}")


# ---- watchers ----


@dataclass(frozen=True)
class Seen:
    type: str
    name: str
    revision: int
    data: dict[str, str]


@dataclass
class Segment:
    """What one watcher saw from one list on: the list, then the events of every watch resumed after it."""

    listed_revision: int
    listed: dict[str, tuple[int, dict[str, str]]]  # name -> (resourceVersion, data)
    events: list[Seen] = field(default_factory=list)
    last_revision: int = 0  # of the last event or bookmark: everything up to it has been delivered

    def names(self) -> set[str]:
        return {*self.listed, *(e.name for e in self.events)}


class Watcher:
    """An informer's loop over raw HTTP: list (or a watch-list), then watch from the list's resourceVersion
    with bookmarks; a watch that ends (or stalls) is resumed from the last resourceVersion; a 410 means
    relist."""

    def __init__(self, replica: ReplicaProcess, number: int, watch_list: bool):
        self.replica = replica
        self.number = number
        self.watch_list = watch_list
        self.segments: list[Segment] = []
        self.relists = 0  # after a 410 (the first list is not counted)
        self.resumes = 0
        self.log: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __repr__(self) -> str:
        kind = "watch-list" if self.watch_list else "list-then-watch"
        return f"{kind} watcher {self.number} on replica {self.replica.index}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set() and self.replica.running:
            segment, outcome = self._watch_list() if self.watch_list else (self._list(), "ended")
            if segment is None:
                self._stop.wait(0.2)
                continue
            while outcome == "ended" and not self._stop.is_set() and self.replica.running:
                outcome = self._watch(segment)
                self.resumes += outcome == "ended"
            self.relists += outcome == "gone"

    def _begin(self, listed_revision: int, listed: dict[str, tuple[int, dict[str, str]]]) -> Segment:
        segment = Segment(listed_revision, listed, last_revision=listed_revision)
        with self._lock:
            self.segments.append(segment)
        return segment

    def _list(self) -> Segment | None:
        status, body = self.replica.request("GET", CONFIGMAPS)
        if status != 200:
            self.log.append(f"list: {status} {str(body)[:300]}")
            return None
        listed = {
            item["metadata"]["name"]: (int(item["metadata"]["resourceVersion"]), item.get("data") or {})
            for item in body["items"]
        }
        return self._begin(int(body["metadata"]["resourceVersion"]), listed)

    def _watch_list(self) -> tuple[Segment | None, str]:
        """A watch-list (the initial state as ADDED events up to the bookmark marking their end), then its
        live events on the same stream, as the controllers' informers watch."""
        query = f"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&{WATCH_QUERY}"
        conn = self.replica.connection(timeout=3)
        segment = None
        try:
            conn.request("GET", CONFIGMAPS + query, headers=self.replica.headers())
            resp = conn.getresponse()
            if resp.status != 200:
                self.log.append(f"watch-list: {resp.status} {resp.read()[:300]!r}")
                return None, "ended"
            listed: dict[str, tuple[int, dict[str, str]]] = {}
            while segment is None:
                line = resp.readline()
                if not line:
                    return None, "ended"  # ended before its initial state: start over
                event = json.loads(line)
                obj, meta = event["object"], event["object"]["metadata"]
                if event["type"] == "ADDED":
                    listed[meta["name"]] = (int(meta["resourceVersion"]), obj.get("data") or {})
                elif event["type"] == "BOOKMARK" and (meta.get("annotations") or {}).get(INITIAL_EVENTS_END):
                    segment = self._begin(int(meta["resourceVersion"]), listed)
                else:
                    self.log.append(f"watch-list: {event['type']} before the initial events end: {obj}")
                    return None, "ended"
            return segment, self._stream(segment, resp)
        except (OSError, http.client.HTTPException) as err:
            self.log.append(f"watch-list: {err!r}")
        finally:
            conn.close()
        return segment, "ended"

    def _watch(self, segment: Segment) -> str:
        """One watch from the segment's last resourceVersion: 'gone' (410) or 'ended' (resume it)."""
        query = f"?watch=1&resourceVersion={segment.last_revision}&{WATCH_QUERY}"
        conn = self.replica.connection(timeout=3)  # a stalled stream is resumed, as a client's would be
        try:
            conn.request("GET", CONFIGMAPS + query, headers=self.replica.headers())
            resp = conn.getresponse()
            if resp.status == 410:
                return "gone"
            if resp.status != 200:
                self.log.append(f"watch: {resp.status} {resp.read()[:300]!r}")
                self._stop.wait(0.2)
                return "ended"
            return self._stream(segment, resp)
        except (OSError, http.client.HTTPException) as err:
            self.log.append(f"watch: {err!r}")
        finally:
            conn.close()
        return "ended"

    def _stream(self, segment: Segment, resp: http.client.HTTPResponse) -> str:
        while not self._stop.is_set():
            line = resp.readline()
            if not line:
                return "ended"
            if self._event(segment, json.loads(line)) == "gone":
                return "gone"
        return "ended"

    def _event(self, segment: Segment, event: dict[str, Any]) -> str:
        obj = event["object"]
        if event["type"] == "ERROR":
            self.log.append(f"watch error event: {obj}")
            return "gone" if obj.get("code") == 410 else "ended"
        revision = int(obj["metadata"]["resourceVersion"])
        if event["type"] != "BOOKMARK":
            seen = Seen(event["type"], obj["metadata"]["name"], revision, obj.get("data") or {})
            with self._lock:
                segment.events.append(seen)
        with self._lock:
            segment.last_revision = max(segment.last_revision, revision)
        return "ok"

    def names(self) -> set[str]:
        with self._lock:
            return {name for segment in self.segments for name in segment.names()}


# ---- the checks ----


def check_watcher(watcher: Watcher, acks: list[Ack], must_cover: bool) -> None:
    """Per segment: events in strictly increasing resourceVersion after the list, each create once, and
    every acknowledged create up to the segment's last resourceVersion in its list or its events, with its
    data. A watcher that must cover (a surviving replica's) has seen every acknowledged create."""
    ours = {a.name: a for a in acks}
    for number, segment in enumerate(watcher.segments):
        where = f"{watcher}, segment {number} (listed at {segment.listed_revision})"
        previous = segment.listed_revision
        delivered: dict[str, Seen] = {}
        for seen in segment.events:
            assert seen.revision > previous, f"{where}: {seen} after resourceVersion {previous}"
            previous = seen.revision
            if not seen.name.startswith("w"):
                continue  # kube-root-ca.crt, which the controllers write
            assert seen.type == "ADDED", f"{where}: {seen}"
            assert seen.name not in delivered and seen.name not in segment.listed, f"{where}: twice: {seen}"
            delivered[seen.name] = seen
        for ack in acks:
            if ack.revision <= segment.listed_revision:
                assert ack.name in segment.listed, f"{where}: the list lacks {ack}"
                assert segment.listed[ack.name] == (ack.revision, ack.data), f"{where}: {ack}"
            elif ack.revision <= segment.last_revision:
                seen = delivered.get(ack.name)
                assert seen is not None, (
                    f"{where}: silent gap: {ack} never delivered (up to {segment.last_revision})"
                )
                assert (seen.revision, seen.data) == (ack.revision, ack.data), f"{where}: {seen} for {ack}"
        for name, seen in delivered.items():
            if name in ours:
                assert seen.revision == ours[name].revision, f"{where}: {seen} for {ours[name]}"
    if must_cover:
        missing = sorted(set(ours) - watcher.names())
        assert not missing, f"{watcher}: never saw {missing[:10]} ({len(missing)} acknowledged creates)"


def check_final_list(replica: ReplicaProcess, acks: list[Ack]) -> None:
    status, body = replica.request("GET", CONFIGMAPS)
    assert status == 200, body
    stored = {item["metadata"]["name"]: item for item in body["items"]}
    lost = [a for a in acks if a.name not in stored]
    assert not lost, f"replica {replica.index}: {len(lost)} acknowledged creates lost: {lost[:5]}"
    for ack in acks:
        item = stored[ack.name]
        assert item.get("data") == ack.data and item["metadata"]["resourceVersion"] == str(ack.revision), item


# ---- helpers ----


def wait_until(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        time.sleep(0.1)


def endpoint_addresses(replica: ReplicaProcess) -> list[str] | None:
    status, body = replica.request("GET", ENDPOINTS)
    if status != 200:
        return None
    subsets = body.get("subsets") or []
    return sorted(a["ip"] for a in subsets[0].get("addresses") or []) if subsets else []


def controller_holder(replica: ReplicaProcess) -> str:
    status, body = replica.request("GET", CONTROLLER_LEASE)
    return (body.get("spec") or {}).get("holderIdentity", "") if status == 200 else ""


def acquisitions(replica: ReplicaProcess) -> list[str]:
    return [line for line in replica.log().splitlines() if ACQUIRED in line]


def controller_leader(replicas: list[ReplicaProcess]) -> tuple[ReplicaProcess, str] | None:
    """The replica holding the controllers' Lease, and its holder identity. The identities share the
    machine's hostname, so the logs tell: the holder is the replica that last logged acquiring it, once the
    Lease has stayed with one holder for a while (its acquisition is logged by then)."""
    running = [r for r in replicas if r.running]
    holder = controller_holder(running[0])
    time.sleep(0.3)
    if not holder or controller_holder(running[0]) != holder:
        return None
    last = {
        r.index: lines[-1][1:21] for r in running if (lines := acquisitions(r))
    }  # klog's MMDD hh:mm:ss.us
    if not last:
        return None
    leader = max(last, key=last.__getitem__)
    return next(r for r in running if r.index == leader), holder


def etcd_follower(cluster: EtcdCluster) -> int:
    """A member that is not the leader: member 0 when it can be, the one every replica dials first."""
    leader = cluster.leader_index()
    return next(i for i in range(len(cluster.members)) if i != leader)


@contextlib.contextmanager
def running_replicas(root: str, etcd_servers: str) -> Iterator[list[ReplicaProcess]]:
    replicas: list[ReplicaProcess] = []
    try:
        for index in range(len(ADDRESSES)):
            replicas.append(ReplicaProcess(index, root, etcd_servers))
        deadline = time.monotonic() + START_TIMEOUT
        for replica in replicas:
            replica.wait_serving(deadline)
        for replica in replicas:
            wait_until(lambda r=replica: r.request("GET", "/readyz")[0] == 200, START_TIMEOUT, "readyz")
        yield replicas
    finally:
        for replica in replicas:
            replica.kill()


class Figures:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, text: str) -> None:
        self.lines.append(text)
        print(f"[ha-faults] {text}", flush=True)


def phase(load: WriteLoad, figures: Figures, label: str, seconds: float = PHASE_SECONDS) -> None:
    start = time.monotonic()
    time.sleep(seconds)
    figures.add(f"{label}: {load.rate(start, time.monotonic()):.1f} creates/s")


def writes_resume(load: WriteLoad, since: float, what: str) -> float:
    """Seconds from `since` to the first acknowledgement of a create sent after it."""
    first = wait_until(lambda: load.sent_since(since), 30, f"writes after {what}")
    return min(a.at for a in first) - since


# ---- the test ----


def test_writes_and_watches_survive_etcd_and_replica_faults(tmp_path):
    require_etcd()
    figures = Figures()
    cluster = EtcdCluster(str(tmp_path / "etcd"), members_count=3)
    watchers: list[Watcher] = []
    load: WriteLoad | None = None
    reads: ConsistentReads | None = None
    try:
        cluster.start()
        with running_replicas(str(tmp_path), cluster.endpoints) as replicas:
            wait_until(lambda: endpoint_addresses(replicas[0]) == sorted(ADDRESSES), 30, "three endpoints")
            status, body = replicas[0].request(
                "POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}}
            )
            assert status == 201, body
            watchers = [  # one of each kind per replica
                Watcher(replica, n, watch_list=n % 2 == 1)
                for replica in replicas
                for n in range(WATCHERS_PER_REPLICA)
            ]
            for watcher in watchers:
                watcher.start()
            load = WriteLoad(replicas)
            reads = ConsistentReads(load)
            load.start()
            reads.start()
            phase(load, figures, "3 etcd members, 3 replicas")

            _kill_etcd_follower(cluster, load, figures)
            _kill_etcd_leader(cluster, load, figures)
            killed, killed_at = _kill_controller_replica(replicas, load, figures)

            reads.stop()
            load.stop()
            acks = load.snapshot()
            assert not reads.stale, f"consistent reads that missed an acknowledged create: {reads.stale[:5]}"
            survivors = [r for r in replicas if r.running]
            assert len(survivors) == 2 and killed not in survivors
            for replica in survivors:
                assert any(a.replica == replica.index and a.at > killed_at for a in acks), (
                    f"replica {replica.index} acknowledged no create after replica {killed.index} died"
                )
                check_final_list(replica, acks)
            _check_watchers(watchers, acks, killed, figures)
            figures.add(
                f"{len(acks)} creates acknowledged, {len(load.failures)} not; "
                f"{sum(w.relists for w in watchers)} relists after 410, {sum(w.resumes for w in watchers)} resumes"
            )
            figures.add(
                f"{reads.reads} consistent reads on another replica, {len(reads.unanswered)} not answered"
            )
            for why in reads.unanswered[:5]:
                figures.add(f"consistent read not answered: {why}")
            for at, replica, why in load.failures[:10]:
                figures.add(f"not acknowledged by replica {replica} at {at - load.started:.1f}s: {why[:200]}")
    finally:
        if reads is not None:
            reads.stop()
        if load is not None:
            load.stop()
        for watcher in watchers:
            watcher.stop()
        cluster.stop()


def _kill_etcd_follower(cluster: EtcdCluster, load: WriteLoad, figures: Figures) -> None:
    follower = etcd_follower(cluster)
    cluster.kill(follower)
    killed = time.monotonic()
    resumed = writes_resume(load, killed, "a follower died")
    phase(load, figures, "2 etcd members")
    figures.add(
        f"etcd member {follower} (a follower) killed: a create sent after it acknowledged in {resumed:.2f}s, "
        f"longest pause without an acknowledgement {load.longest_gap(killed, time.monotonic()):.2f}s"
    )
    cluster.start_member(follower)


def _kill_etcd_leader(cluster: EtcdCluster, load: WriteLoad, figures: Figures) -> None:
    phase(load, figures, "3 etcd members again")
    leader = cluster.leader_index()
    cluster.kill(leader)
    killed = time.monotonic()
    resumed = writes_resume(load, killed, "the etcd leader died")
    phase(load, figures, "2 etcd members after the election")
    figures.add(
        f"etcd leader (member {leader}) killed: a create sent after it acknowledged in {resumed:.2f}s, "
        f"longest pause without an acknowledgement {load.longest_gap(killed, time.monotonic()):.2f}s, "
        f"slowest create sent around it {load.slowest(killed - 1, killed + 1):.2f}s"
    )
    cluster.start_member(leader)


def _kill_controller_replica(
    replicas: list[ReplicaProcess], load: WriteLoad, figures: Figures
) -> tuple[ReplicaProcess, float]:
    """Kills -9 the replica that runs the controllers; waits for them to move and for its endpoint to go.
    Returns it and when it died."""
    phase(load, figures, "3 etcd members, 3 replicas, before the replica kill")
    leader, holder = wait_until(
        lambda: controller_leader(replicas), 30, "one replica leading the controllers"
    )
    leader.kill()
    killed = time.monotonic()
    others = [r for r in replicas if r.running]
    survivor = others[0]
    acquired_before = {r.index: len(acquisitions(r)) for r in others}
    wait_until(lambda: controller_holder(survivor) not in ("", holder), 30, "the controllers to move")
    moved_after = time.monotonic() - killed
    wait_until(
        lambda: any(len(acquisitions(r)) > acquired_before[r.index] for r in others),
        5,
        "a surviving replica to log acquiring the controllers' Lease",
    )
    _controllers_work(survivor)
    wait_until(
        lambda: endpoint_addresses(survivor) == sorted(r.address for r in others),
        MASTER_LEASE_TTL + RECONCILE_INTERVAL + 5,  # the last renewal's TTL, then a survivor's reconcile
        f"{leader.address} to leave the kubernetes endpoints",
    )
    gone_after = time.monotonic() - killed
    figures.add(
        f"replica {leader.index} (leading the controllers) killed -9: its Lease taken over in "
        f"{moved_after:.2f}s, its address gone from the endpoints in {gone_after:.1f}s, "
        f"meanwhile {load.rate(killed, killed + gone_after):.1f} creates/s"
    )
    for replica in others:
        assert endpoint_addresses(replica) == sorted(r.address for r in others)
    phase(load, figures, "2 replicas")
    return leader, killed


def _controllers_work(replica: ReplicaProcess) -> None:
    """The root CA publisher (one of the moved controllers) fills a namespace created now."""
    status, body = replica.request("POST", "/api/v1/namespaces", {"metadata": {"name": f"{NAMESPACE}-after"}})
    assert status == 201, body
    wait_until(
        lambda: (
            replica.request("GET", f"/api/v1/namespaces/{NAMESPACE}-after/configmaps/kube-root-ca.crt")[0]
            == 200
        ),
        30,
        "kube-root-ca.crt in a namespace created after the controllers moved",
    )


def _check_watchers(
    watchers: list[Watcher], acks: list[Ack], killed: ReplicaProcess, figures: Figures
) -> None:
    names = {a.name for a in acks}
    surviving = [w for w in watchers if w.replica is not killed]
    wait_until(lambda: all(names <= w.names() for w in surviving), 30, "every watcher to catch up")
    for watcher in watchers:
        watcher.stop()
    for watcher in watchers:
        check_watcher(watcher, acks, must_cover=watcher.replica is not killed)
    for watcher in watchers:
        if watcher.log:
            figures.add(f"{watcher}: {len(watcher.log)} watch/list errors, first: {watcher.log[0][:200]}")
