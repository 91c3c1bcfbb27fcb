"""A simulated pod's status, one step at a time (what kubelet's generateAPIPodStatus would report for
containers that never exist): the pod's next status follows from its current status and the time alone,
so a restarted simulator carries on where the last one stopped. Each step also says when the next one is
due (a container's exit, a readiness delay, a restart back-off), so nothing polls."""

from __future__ import annotations

import copy
import hashlib
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..apimachinery.meta import parse_time
from .config import EXIT_CODE_ANNOTATION, RUN_SECONDS_ANNOTATION

Object = dict[str, Any]
CREATING = "ContainerCreating"
INITIALIZING = "PodInitializing"
CRASH_LOOP = "CrashLoopBackOff"
BACKOFF_INITIAL, BACKOFF_MAX = 10.0, 300.0  # kubelet's container restart back-off
MAX_SECONDS = 10 * 365 * 86400.0  # an annotated duration beyond this is as good as for ever
CONDITION_ORDER = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")


def rfc3339(moment: float) -> str:
    return datetime.fromtimestamp(math.floor(moment), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _digest(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Host:
    """Where the pod runs: its node's name and address, and the address given to the pod."""

    node: str
    host_ip: str
    pod_ip: str


@dataclass
class Step:
    """The status to write and when (epoch seconds) the pod should be looked at again (None: only on change)."""

    status: Object
    wake_at: float | None = None
    # kubelet's events of this step: (type, reason, message, fieldPath of the container)
    events: list[tuple[str, str, str, str]] = field(default_factory=list)

    def wake(self, moment: float) -> None:
        self.wake_at = moment if self.wake_at is None else min(self.wake_at, moment)


def _annotation_number(pod: Object, key: str) -> float | None:
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(key)
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    if number is None or not math.isfinite(number) or number < 0:
        return None
    return min(number, MAX_SECONDS)


def run_seconds(pod: Object, default: float) -> float | None:
    """How long each container runs before exiting: the annotation's, else `default` for pods that do not
    restart their containers (or that ask to fail), else forever (None)."""
    annotated = _annotation_number(pod, RUN_SECONDS_ANNOTATION)
    if annotated is not None:
        return annotated
    policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    if policy != "Always" or exit_code(pod):
        return default
    return None


def exit_code(pod: Object) -> int:
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(EXIT_CODE_ANNOTATION) or "0"
    try:
        code = int(value)
    except ValueError:
        return 0
    return code if 0 <= code <= 255 else 1


def _restarts(policy: str, code: int) -> bool:
    return policy == "Always" or (policy == "OnFailure" and code != 0)


def backoff(restart_count: int) -> float:
    return min(BACKOFF_INITIAL * 2 ** min(restart_count, 10), BACKOFF_MAX)


def _probe_delay(container: Object, probe: str) -> float:
    delay = ((container.get(probe) or {}).get("initialDelaySeconds")) or 0
    return float(delay) if isinstance(delay, int | float) and delay > 0 else 0.0


class _Pod:
    """One step's context: the pod, where it runs, and now."""

    def __init__(self, pod: Object, host: Host, now: float, default_run_seconds: float):
        self.pod, self.host, self.now = pod, host, now
        meta = pod.get("metadata") or {}
        self.ref = f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"
        self.uid = meta.get("uid", "")
        self.policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        self.run_for = run_seconds(pod, default_run_seconds)
        self.code = exit_code(pod)

    def waiting(self, container: Object, reason: str, old: Object | None = None) -> Object:
        status = self._base(container, old)
        status.update(state={"waiting": {"reason": reason}}, ready=False, started=False)
        return status

    def _base(self, container: Object, old: Object | None) -> Object:
        old = old or {}
        return {
            "name": container.get("name", ""),
            "image": container.get("image", ""),
            "imageID": old.get("imageID", ""),
            "lastState": old.get("lastState") or {},
            "restartCount": old.get("restartCount", 0),
        }

    def running(self, container: Object, old: Object | None, restart_count: int) -> Object:
        status = self._base(container, old)
        image = container.get("image", "")
        status.update(
            imageID=f"{image}@sha256:{_digest(image)}",
            containerID=f"simulated://{_digest(self.uid, status['name'], str(restart_count))}",
            restartCount=restart_count,
            state={"running": {"startedAt": rfc3339(self.now)}},
            ready=False,
            started=False,
        )
        return status

    def advance_running(self, container: Object, status: Object, step: Step, init: bool) -> Object:
        """A running container: it exits when its run time is up, and is started and ready after its probes'
        initial delays (their checks succeed: nothing real can fail them)."""
        started_at = parse_time(status["state"]["running"].get("startedAt")) or self.now
        run_for = 0.0 if init else self.run_for
        if run_for is not None and (init or not _is_sidecar(container)):
            finish = started_at + run_for
            if self.now >= finish:
                return self.exit(container, status, finish, 0 if init else self.code, init)
            step.wake(finish)
        started_after = started_at + _probe_delay(container, "startupProbe")
        ready_after = started_after + _probe_delay(container, "readinessProbe")
        status = dict(status, started=self.now >= started_after, ready=self.now >= ready_after)
        for moment in (started_after, ready_after):
            if moment > self.now:
                step.wake(moment)
        return status

    def exit(self, container: Object, status: Object, finished: float, code: int, init: bool) -> Object:
        started_at = status["state"]["running"].get("startedAt")
        terminated = {
            "exitCode": code,
            "reason": "Completed" if code == 0 else "Error",
            "startedAt": started_at,
            "finishedAt": rfc3339(finished),
            "containerID": status.get("containerID", ""),
        }
        restarts = _restarts(self.policy, code) and not (init and code == 0)
        if not restarts:
            return dict(status, state={"terminated": terminated}, ready=False, started=False)
        delay = backoff(status.get("restartCount", 0))
        message = (
            f"back-off {int(delay)}s restarting failed container={container.get('name', '')} pod={self.ref}"
        )
        return dict(
            status,
            state={"waiting": {"reason": CRASH_LOOP, "message": message}},
            lastState={"terminated": terminated},
            ready=False,
            started=False,
        )

    def start(self, container: Object, old: Object, restart_count: int, step: Step, init: bool) -> Object:
        """The container starts (again), with kubelet's Pulled, Created and Started events."""
        name = container.get("name", "")
        path = f"spec.{'initContainers' if init else 'containers'}{{{name}}}"
        image = container.get("image", "")
        step.events += [
            (
                "Normal",
                "Pulled",
                f'Container image "{image}" already present on machine and can be accessed by the pod',
                path,
            ),
            ("Normal", "Created", f"Created container: {name}", path),
            ("Normal", "Started", f"Started container {name}", path),
        ]
        return self.advance_running(container, self.running(container, old, restart_count), step, init)

    def advance(self, container: Object, status: Object, step: Step, init: bool) -> Object:
        state = status.get("state") or {}
        if "running" in state:
            current = self.advance_running(container, status, step, init)
            if ((current.get("state") or {}).get("waiting") or {}).get("reason") == CRASH_LOOP:
                name = container.get("name", "")
                path = f"spec.{'initContainers' if init else 'containers'}{{{name}}}"
                step.events.append(
                    (
                        "Warning",
                        "BackOff",
                        f"Back-off restarting failed container {name} in pod {self.ref}",
                        path,
                    )
                )
            return current
        waiting = state.get("waiting") or {}
        if waiting.get("reason") == CRASH_LOOP:
            finished = parse_time(((status.get("lastState") or {}).get("terminated") or {}).get("finishedAt"))
            restart_at = (finished or self.now) + backoff(status.get("restartCount", 0))
            if self.now < restart_at:
                step.wake(restart_at)
                return status
            return self.start(container, status, status["restartCount"] + 1, step, init)
        if "waiting" in state:
            return self.start(container, status, 0, step, init)
        return status  # terminated for good


def _is_sidecar(container: Object) -> bool:
    return container.get("restartPolicy") == "Always"


def _by_name(statuses: list[Object] | None) -> dict[str, Object]:
    return {s.get("name", ""): s for s in statuses or []}


def _init_done(status: Object) -> bool:
    state = status.get("state") or {}
    if "running" in state:
        return False
    return (state.get("terminated") or {}).get("exitCode") == 0


def next_status(pod: Object, host: Host, now: float, default_run_seconds: float) -> Step:
    """The pod's status after this step, and when the next step is due."""
    ctx = _Pod(pod, host, now, default_run_seconds)
    spec = pod.get("spec") or {}
    status = copy.deepcopy(pod.get("status") or {})
    step = Step(status)
    inits, mains = spec.get("initContainers") or [], spec.get("containers") or []
    old_inits = _by_name(status.get("initContainerStatuses"))
    old_mains = _by_name(status.get("containerStatuses"))
    first = not old_mains  # the sandbox is being made: every container waits
    init_statuses, inits_done = [], True
    for container in inits:
        old = old_inits.get(container.get("name", ""))
        if first or old is None or not inits_done:
            init_statuses.append(old or ctx.waiting(container, INITIALIZING))
            inits_done = False
            continue
        current = ctx.advance(container, old, step, init=True)
        init_statuses.append(current)
        ready_sidecar = _is_sidecar(container) and current.get("started")
        inits_done = inits_done and (ready_sidecar or _init_done(current))
        if not inits_done and "running" in (current.get("state") or {}) and not _is_sidecar(container):
            step.wake(now)  # an init container runs to completion at once
    waiting_reason = INITIALIZING if inits else CREATING
    main_statuses = []
    for container in mains:
        old = old_mains.get(container.get("name", ""))
        if first or old is None or not inits_done:
            main_statuses.append(old or ctx.waiting(container, waiting_reason))
            continue
        main_statuses.append(ctx.advance(container, old, step, init=False))
    if first:
        step.wake(now)
        status.setdefault("startTime", rfc3339(now))
    else:
        status.update(podIP=host.pod_ip, podIPs=[{"ip": host.pod_ip}])
    status.update(hostIP=host.host_ip, hostIPs=[{"ip": host.host_ip}])
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    status["containerStatuses"] = main_statuses
    status["phase"] = _phase(ctx, main_statuses, inits_done, first)
    status["conditions"] = _conditions(status, init_statuses, main_statuses, inits_done, first, now)
    return step


def _never_started(status: Object) -> bool:
    reason = ((status.get("state") or {}).get("waiting") or {}).get("reason")
    return reason in (CREATING, INITIALIZING)


def _phase(ctx: _Pod, mains: list[Object], inits_done: bool, first: bool) -> str:
    if first or not inits_done or all(_never_started(s) for s in mains):
        return "Pending"
    terminated = [(s.get("state") or {}).get("terminated") for s in mains]
    if all(terminated):
        return "Succeeded" if all(t.get("exitCode") == 0 for t in terminated if t) else "Failed"
    return "Running"


def _condition(
    old: dict[str, Object], kind: str, ok: bool, now: float, reason: str = "", message: str = ""
) -> Object:
    previous = old.get(kind) or {}
    status = "True" if ok else "False"
    same = previous.get("status") == status
    condition: Object = {
        "type": kind,
        "status": status,
        "lastTransitionTime": previous.get("lastTransitionTime") if same else rfc3339(now),
    }
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    return condition


def _conditions(
    status: Object, inits: list[Object], mains: list[Object], inits_done: bool, first: bool, now: float
) -> list[Object]:
    old = {c.get("type", ""): c for c in status.get("conditions") or []}
    phase = status["phase"]
    done = phase in ("Succeeded", "Failed")
    ours: dict[str, Object] = {
        "PodReadyToStartContainers": _condition(old, "PodReadyToStartContainers", not first and not done, now)
    }
    pending_inits = [s["name"] for s in inits if not _init_done(s) and not s.get("started")]
    if inits_done or done:
        ours["Initialized"] = _condition(
            old, "Initialized", True, now, "PodCompleted" if done and inits else ""
        )
    else:
        ours["Initialized"] = _condition(
            old,
            "Initialized",
            False,
            now,
            "ContainersNotInitialized",
            f"containers with incomplete status: [{' '.join(pending_inits)}]",
        )
    unready = [
        s["name"]
        for s in [*[i for i in inits if i.get("state", {}).get("running")], *mains]
        if not s.get("ready")
    ]
    for kind in ("Ready", "ContainersReady"):
        if phase == "Succeeded":
            ours[kind] = _condition(old, kind, False, now, "PodCompleted")
        elif unready:
            ours[kind] = _condition(
                old,
                kind,
                False,
                now,
                "ContainersNotReady",
                f"containers with unready status: [{' '.join(unready)}]",
            )
        else:
            ours[kind] = _condition(old, kind, True, now)
    ours["PodScheduled"] = old.get("PodScheduled") or _condition(old, "PodScheduled", True, now)
    others = [c for kind, c in old.items() if kind not in ours]  # DisruptionTarget, readiness gates...
    return [ours[kind] for kind in CONDITION_ORDER] + others
