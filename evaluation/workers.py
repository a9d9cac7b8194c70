"""Worker processes that stop when asked, for the evaluation harness and the warm start.

``concurrent.futures.ProcessPoolExecutor`` does not stop cleanly on Ctrl-C: leaving its
``with`` block waits for the whole queue; the workers get the same SIGINT as the parent (the
terminal sends it to the process group) and die in the middle of a task or hang on the queue's
lock; and a worker ended while it writes a result leaves half a message in the one result pipe
that all workers share, so the executor's thread waits for the rest for good and the
interpreter never exits. ``WorkerPool`` is a small pool without those faults:

- each worker has its own pipe and takes one item at a time, so a worker that dies shows as
  the end of its own pipe (an error naming the item), never as a stuck reader;
- workers ignore SIGINT, so the parent alone decides what a Ctrl-C means, and take SIGTERM's
  default action (they end), so the parent can stop them at once;
- results come back one by one as they finish (``results``), so the caller keeps each
  finished task (a journal line, a saved file) before the next one;
- leaving the block, by an exception (``KeyboardInterrupt`` included) or not, ends the workers
  (SIGTERM, then SIGKILL after a grace period) and waits for them; the pool has no threads,
  so no process is left behind and nothing waits at exit.

``open_pool(workers, ray)`` is the one place the callers choose a backend: this pool, or with a
Ray address the same interface on Ray (``evaluation.ray_backend``, imported only then).
"""

from __future__ import annotations

import multiprocessing
import pickle
import signal
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar, cast

Item = TypeVar("Item")

#: Seconds a worker asked to end (SIGTERM) has before it is killed.
GRACE_S = 3.0


class WorkerError(RuntimeError):
    """A worker process died (killed, out of memory) before it returned an item's result."""


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker, chained to it in the parent."""

    def __str__(self) -> str:
        return str(self.args[0])


def _serve(connection: Connection, function: Callable[[Any], Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler, inherited by fork
    while (message := connection.recv()) is not None:  # an item comes wrapped: None stops
        (item,) = message
        try:
            reply: tuple[Any, ...] = (True, function(item))
        except BaseException as error:  # noqa: BLE001 - every failure goes back to the parent
            reply = (False, error, traceback.format_exc())
        try:
            connection.send(reply)
        except (pickle.PicklingError, TypeError, AttributeError) as error:
            text = reply[2] if not reply[0] else traceback.format_exc()
            connection.send((False, RuntimeError(f"unpicklable result: {error}"), text))


@contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
    """A Ctrl-C in the block is acted on when it ends (in the main thread, where Python
    handles signals), as the handler that was there would have."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, _: caught.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught and callable(previous):
            previous(signal.SIGINT, None)


class WorkerPool:
    """Up to ``workers`` processes running one function over items; see the module docstring."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"a pool needs at least one worker, got {workers}")
        self.workers = workers
        self.processes: dict[Connection, multiprocessing.process.BaseProcess] = {}

    def __enter__(self) -> WorkerPool:
        return self

    def results(self, function: Callable[[Item], Any], items: Iterable[Item]) -> Iterator[Any]:
        """``(item, function(item))`` for every item, in the order they finish.

        An exception raised by ``function`` is raised here with the worker's traceback chained;
        a worker that dies raises ``WorkerError``.
        """
        queue = deque(items)
        running: dict[Connection, Item] = {}
        for _ in range(min(self.workers, len(queue))):
            here, there = multiprocessing.Pipe()
            process: multiprocessing.process.BaseProcess = multiprocessing.Process(
                target=_serve, args=(there, function), daemon=True
            )
            process.start()
            there.close()  # the worker holds the only other end: its death ends the pipe
            self.processes[here] = process
            running[here] = queue.popleft()
            here.send((running[here],))
        while running:
            for connection in cast("list[Connection]", wait(list(running))):
                item = running.pop(connection)
                try:
                    ok, *reply = connection.recv()
                except (EOFError, OSError):
                    process = self.processes[connection]
                    process.join(GRACE_S)
                    raise WorkerError(
                        f"a worker process died (exit code {process.exitcode}) on {item!r}"
                    ) from None
                if queue:
                    running[connection] = queue.popleft()
                    connection.send((running[connection],))
                else:
                    connection.send(None)
                if not ok:
                    error, text = reply
                    raise error from RemoteTraceback(text)
                yield item, reply[0]

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """End the workers now (those that were told to finish end by themselves). A Ctrl-C
        meanwhile (a second one, as the first brought us here) is held until they are gone,
        so none outlives the parent."""
        with _ctrl_c_deferred():
            for process in self.processes.values():
                if process.is_alive():
                    process.terminate()
            for connection, process in self.processes.items():
                process.join(GRACE_S)
                if process.is_alive():
                    process.kill()
                    process.join()
                connection.close()
            self.processes = {}


def open_pool(workers: int, ray: str | None = None) -> Any:
    """A ``WorkerPool`` of ``workers`` processes, or with ``ray`` (``"local"``, ``"auto"`` or an
    address) a ``evaluation.ray_backend.RayPool`` with the same interface."""
    if ray is None:
        return WorkerPool(workers)
    from evaluation.ray_backend import RayPool

    return RayPool(ray, workers)
