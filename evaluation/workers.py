"""Worker processes that stop when asked, for the evaluation harness and the warm start.

``concurrent.futures.ProcessPoolExecutor`` used as a ``with`` block does not stop on Ctrl-C:
leaving the block waits for the whole queue, the workers get the same SIGINT as the parent
(the terminal sends it to the process group) and die in the middle of a task or hang on the
queue's lock, and a second Ctrl-C then waits for good. ``WorkerPool`` changes three things:

- workers ignore SIGINT, so the parent alone decides what a Ctrl-C means, and take SIGTERM's
  default action (they end), so the parent can stop them at once;
- results come back one by one as they finish (``results``), so the caller keeps each
  finished task (a journal line, a saved file) before the next one;
- leaving the block by an exception (``KeyboardInterrupt`` included) cancels what is queued,
  ends the running workers (SIGTERM, then SIGKILL after a grace period) and waits for them,
  so no process is left behind and the exception goes on at once.

``open_pool(workers, ray)`` is the one place the callers choose a backend: this pool, or with a
Ray address the same interface on Ray (``evaluation.ray_backend``, imported only then).
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

Item = TypeVar("Item")

#: Seconds a worker asked to end (SIGTERM) has before it is killed.
GRACE_S = 3.0


def _worker_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler, inherited by fork


class WorkerPool:
    """``workers`` processes running one function over items; see the module docstring."""

    def __init__(self, workers: int) -> None:
        self.executor = ProcessPoolExecutor(max_workers=workers, initializer=_worker_signals)
        self.futures: dict[Future[Any], Any] = {}

    def __enter__(self) -> WorkerPool:
        return self

    def results(self, function: Callable[[Item], Any], items: Iterable[Item]) -> Iterator[Any]:
        """``(item, function(item))`` for every item, in the order they finish."""
        futures = {self.executor.submit(function, item): item for item in items}
        self.futures.update(futures)
        for future in as_completed(futures):
            yield futures[future], future.result()

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None:
            self.executor.shutdown(wait=True)
        else:
            self.stop()

    def stop(self) -> None:
        """Cancel the queued work and end the running workers now."""
        for future in self.futures:
            future.cancel()
        processes = list((getattr(self.executor, "_processes", None) or {}).values())
        self.executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(GRACE_S)
            if process.is_alive():
                process.kill()
                process.join()


def open_pool(workers: int, ray: str | None = None) -> Any:
    """A ``WorkerPool`` of ``workers`` processes, or with ``ray`` (``"local"``, ``"auto"`` or an
    address) a ``evaluation.ray_backend.RayPool`` with the same interface."""
    if ray is None:
        return WorkerPool(workers)
    from evaluation.ray_backend import RayPool

    return RayPool(ray, workers)
