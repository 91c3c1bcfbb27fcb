"""One priority level's queues (k8s.io/apiserver pkg/util/flowcontrol/fairqueuing/queueset): a request
waits in the least loaded queue of the hand its flow is dealt; seats go to the queue whose head would
finish first in virtual time (fair queuing: virtual time R advances, per active queue, by the seats the
level can use); a full queue, or a wait longer than the limit, rejects the request.

Each request costs `seats` x ESTIMATED_SERVICE_SECONDS of virtual work when dispatched; when it finishes its
queue is given back what it did not use (or charged what it overran), as upstream does."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from .shufflesharding import Dealer

ESTIMATED_SERVICE_SECONDS = 3.0
HANDS_KEPT = 4096  # queueset's estimatedServiceDuration
EXEMPT_QUEUES, REJECT_QUEUES = -1, 0
QUEUE_FULL, CONCURRENCY_LIMIT, TIME_OUT, CANCELLED = (
    "queue-full",
    "concurrency-limit",
    "time-out",
    "cancelled",
)
WAITING, EXECUTING, GONE = 0, 1, 2


@dataclass(frozen=True)
class QueuingConfig:
    """desired_queues: -1 for the exempt level (never limited), 0 when the level rejects rather than queues."""

    desired_queues: int = REJECT_QUEUES
    queue_length_limit: int = 0
    hand_size: int = 0


class Seat:
    """A request of the level: waiting in a queue, then executing (its seats taken) until released."""

    __slots__ = ("seats", "work", "arrival_r", "queue", "future", "state", "started")

    def __init__(self, seats: int, arrival_r: float, queue: _Queue | None):
        self.seats = seats
        self.work = seats * ESTIMATED_SERVICE_SECONDS
        self.arrival_r = arrival_r
        self.queue = queue
        self.future: asyncio.Future[None] | None = None
        self.state = WAITING
        self.started = 0.0


class _Queue:
    __slots__ = ("index", "waiting", "executing", "seats_in_use", "next_dispatch_r", "work_waiting")

    def __init__(self, index: int):
        self.index = index
        self.waiting: deque[Seat] = deque()
        self.executing = 0
        self.seats_in_use = 0
        self.next_dispatch_r = 0.0
        self.work_waiting = 0.0  # the virtual work of the requests waiting (QueueSum's TotalWorkSum)

    def idle(self) -> bool:
        return not self.waiting and self.executing == 0


class QueueSet:
    def __init__(
        self, concurrency_limit: int, config: QueuingConfig, clock: Callable[[], float] = time.monotonic
    ):
        self.clock = clock
        self.queues: list[_Queue] = []
        self.concurrency_limit = 0
        self.config = QueuingConfig()
        self.dealer: Dealer | None = None
        self.current_r = 0.0
        self.last_real_time = clock()
        self.robin_index = -1
        self.enqueues = 0
        self.waiting = self.executing = self.seats_in_use = 0
        # what virtual time advances by, kept as requests come and go: the queues not idle, and the seats
        # their requests hold or wait for
        self.active_queues = self.queued_seats = 0
        self.backlogged: set[_Queue] = set()  # the queues with requests waiting: dispatch looks at these only
        self.dispatched = self.rejected = self.timed_out = self.cancelled = 0
        self.reconfigure(concurrency_limit, config)

    def reconfigure(self, concurrency_limit: int, config: QueuingConfig) -> None:
        """BeginConfigChange + Complete: queues are added now; surplus ones go once they are empty."""
        self._sync_time()
        self.concurrency_limit, self.config = concurrency_limit, config
        while len(self.queues) < config.desired_queues:
            self.queues.append(_Queue(len(self.queues)))
        self.dealer = Dealer(config.desired_queues, config.hand_size) if config.desired_queues > 0 else None
        self._hands: dict[int, list[int]] = {}  # each flow's hand, dealt once per configuration
        self._dispatch_as_much_as_possible()

    def is_idle(self) -> bool:
        return self.waiting == 0 and self.executing == 0

    # ---- a request's life: acquire (maybe wait), execute, release ----

    async def acquire(self, hash_value: int, seats: int, wait_limit: float) -> Seat | str:
        """The seat to execute in, or why the request is rejected. A cancelled wait leaves its queue."""
        result = self.start(hash_value, seats)
        if isinstance(result, Seat) and result.state == WAITING:
            return await self.wait(result, wait_limit)
        return result

    def start(self, hash_value: int, seats: int) -> Seat | str:
        """StartRequest: a seat executing at once, one waiting in its queue (then `wait` for it), or why the
        request is rejected."""
        self._sync_time()
        if self.config.desired_queues == EXEMPT_QUEUES or self.config.desired_queues == REJECT_QUEUES:
            if self.config.desired_queues == REJECT_QUEUES and not self._can_accommodate(seats):
                self.rejected += 1
                return CONCURRENCY_LIMIT
            return self._execute(Seat(seats, self.current_r, None))
        seat = self._enqueue(hash_value, seats)
        if seat is None:
            self.rejected += 1
            return QUEUE_FULL
        self._dispatch_as_much_as_possible()
        return seat

    async def wait(self, seat: Seat, wait_limit: float) -> Seat | str:
        seat.future = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(wait_limit):
                await seat.future
        except TimeoutError:
            if seat.state == EXECUTING:  # dispatched as the deadline passed: it runs
                return seat
            self._leave_queue(seat)
            self.timed_out += 1
            return TIME_OUT
        except asyncio.CancelledError:
            if seat.state == EXECUTING:
                self.release(seat)
            else:
                self._leave_queue(seat)
                self.cancelled += 1
            raise
        return seat

    def release(self, seat: Seat) -> None:
        """finishRequestAndDispatchAsMuchAsPossible: the seats are free; the queue gets back the virtual
        work it was charged beyond what the request used (or pays what it overran)."""
        if seat.state != EXECUTING:
            return
        seat.state = GONE
        self._sync_time()
        self.executing -= 1
        self.seats_in_use -= seat.seats
        queue = seat.queue
        if queue is not None:
            queue.executing -= 1
            queue.seats_in_use -= seat.seats
            used = self.clock() - seat.started
            queue.next_dispatch_r -= seat.seats * (ESTIMATED_SERVICE_SECONDS - used)
            self._forget_queued(queue, seat.seats)
            self._bound_next_dispatch(queue)
            self._remove_if_surplus(queue)
        self._dispatch_as_much_as_possible()

    # ---- queuing ----

    def _enqueue(self, hash_value: int, seats: int) -> Seat | None:
        queue = self.queues[self._shuffle_shard(hash_value)]
        if (
            self.seats_in_use >= self.concurrency_limit
            and len(queue.waiting) >= self.config.queue_length_limit
        ):
            return None
        if queue.idle():
            queue.next_dispatch_r = self.current_r
            self.active_queues += 1
        seat = Seat(seats, self.current_r, queue)
        queue.waiting.append(seat)
        queue.work_waiting += seat.work
        self.backlogged.add(queue)
        self.waiting += 1
        self.queued_seats += seats
        self._bound_next_dispatch(queue)
        return seat

    def _shuffle_shard(self, hash_value: int) -> int:
        """The queue of the hand with the least work waiting; ties go round the hand from a rotating start."""
        hand = self._hands.get(hash_value)
        if hand is None:
            assert self.dealer is not None
            if len(self._hands) >= HANDS_KEPT:
                self._hands.clear()
            hand = self._hands[hash_value] = self.dealer.deal(hash_value)
        offset = self.enqueues % len(hand)
        self.enqueues += 1
        best, least = hand[offset], float("inf")
        for i in range(len(hand)):
            index = hand[(offset + i) % len(hand)]
            work = self.queues[index].work_waiting
            if work < least:
                best, least = index, work
        return best

    def _leave_queue(self, seat: Seat) -> None:
        if seat.state != WAITING:
            return
        self._sync_time()
        seat.state = GONE
        queue = seat.queue
        assert queue is not None
        queue.waiting.remove(seat)
        queue.work_waiting = sum(waiting.work for waiting in queue.waiting)
        if not queue.waiting:
            self.backlogged.discard(queue)
        self.waiting -= 1
        self.rejected += 1
        self._forget_queued(queue, seat.seats)
        self._bound_next_dispatch(queue)
        self._remove_if_surplus(queue)

    def _forget_queued(self, queue: _Queue, seats: int) -> None:
        self.queued_seats -= seats
        if queue.idle():
            self.active_queues -= 1

    # ---- dispatching ----

    def _can_accommodate(self, seats: int) -> bool:
        if seats > self.concurrency_limit:
            return self.executing == 0  # a request wider than the level runs alone
        return self.seats_in_use + seats <= self.concurrency_limit

    def _execute(self, seat: Seat) -> Seat:
        seat.state = EXECUTING
        seat.started = self.clock()
        self.executing += 1
        self.seats_in_use += seat.seats
        self.dispatched += 1
        if seat.queue is not None:
            seat.queue.executing += 1
            seat.queue.seats_in_use += seat.seats
        return seat

    def _dispatch_as_much_as_possible(self) -> None:
        while self.waiting and self.seats_in_use < self.concurrency_limit and self._dispatch_one():
            pass

    def _dispatch_one(self) -> bool:
        """From the queue whose oldest request would finish first in virtual time."""
        if not self.backlogged:
            return False
        count, start = len(self.queues), self.robin_index + 1
        # ties go to the first in round-robin order after the last queue served, as upstream's scan does
        chosen = min(
            self.backlogged, key=lambda q: (q.next_dispatch_r + q.waiting[0].work, (q.index - start) % count)
        )
        seat = chosen.waiting[0]
        if not self._can_accommodate(seat.seats):
            return False
        chosen.waiting.popleft()
        chosen.work_waiting = chosen.work_waiting - seat.work if chosen.waiting else 0.0
        if not chosen.waiting:
            self.backlogged.discard(chosen)
        self.waiting -= 1
        self.robin_index = chosen.index
        self._execute(seat)
        if seat.future is not None and not seat.future.done():
            seat.future.set_result(None)
        chosen.next_dispatch_r += seat.work
        self._bound_next_dispatch(chosen)
        return True

    def _bound_next_dispatch(self, queue: _Queue) -> None:
        """A queue's next dispatch is never earlier in virtual time than its oldest request arrived."""
        if queue.waiting and queue.next_dispatch_r < queue.waiting[0].arrival_r:
            queue.next_dispatch_r = queue.waiting[0].arrival_r

    def _remove_if_surplus(self, queue: _Queue) -> None:
        if len(self.queues) > max(self.config.desired_queues, 0) and queue.idle() and queue in self.queues:
            index = self.queues.index(queue)
            del self.queues[index]
            for later in self.queues[index:]:
                later.index -= 1
            if self.robin_index >= index:
                self.robin_index -= 1

    def _sync_time(self) -> None:
        """Virtual time advances by the seats the level can give each active queue."""
        now = self.clock()
        elapsed, self.last_real_time = now - self.last_real_time, now
        if self.active_queues:
            self.current_r += elapsed * min(self.queued_seats, self.concurrency_limit) / self.active_queues
