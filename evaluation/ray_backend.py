"""Ray as the engine of the parallel work: the harness's tasks and the warm start's on a cluster.

``RayPool`` has ``evaluation.workers.WorkerPool``'s interface (a ``with`` block, ``results``
yielding ``(item, result)`` as tasks finish, ``stop``), so the callers keep what they do with
each finished task (a journal line, a saved file) and their progress bars, whatever ran it.
``evaluation.workers.open_pool`` picks the backend.

Where Ray runs:

- ``"local"``: start Ray on this machine (``ray.init(address="local")``) for the block, with
  ``workers`` CPUs when more than one is asked, and shut it down after; a cluster another
  process started here is left alone (use ``"auto"`` to join it);
- an address (``"auto"``, ``"ray://host:10001"``, ``"host:6379"``): join that cluster
  (``ray start --head`` on one machine, ``ray start --address HEAD:6379`` on the others);
- a Ray session this process already holds (``ray.init`` called before) is used as it is.

Results do not depend on where the work ran: every task carries its own seeds. A task whose
worker process dies (killed, out of memory, its node lost) is run again by Ray, up to
``MAX_RETRIES`` times (Ray's task retries); an exception raised by the task itself is not
retried and goes on to the caller, as in the local pool. Leaving the block by an exception
(Ctrl-C included) cancels every task not yet finished, and what finished stays with the caller.
Each task asks Ray for one CPU and is placed by Ray's ``"SPREAD"`` strategy: by default Ray
keeps tasks beside their arguments, and every task shares one argument put on the caller's
node, so a short run could leave the other nodes idle.

Workers import the project's modules by name: on a cluster, install the project on every node
(``make setup``) or run from a shared checkout; a local Ray gets this process's ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from scopa_env.errors import ScopaError

Item = TypeVar("Item")

#: Times Ray runs a task again after its worker died (Ray's ``max_retries``).
MAX_RETRIES = 3
#: What to install for Ray (``pyproject.toml``).
EXTRA = "distributed"


class RayUnavailableError(ScopaError, RuntimeError):
    """Ray was asked for but is not installed; the message names the extra that installs it."""


def import_ray() -> Any:
    """``ray``, or a clear error naming the extra that installs it."""
    try:
        import ray
    except ImportError as error:
        raise RayUnavailableError(
            f"Ray is not installed: install the {EXTRA!r} extra "
            f"(pip install -c constraints.txt -e '.[{EXTRA}]') to run on Ray"
        ) from error
    return ray


def _pythonpath() -> str:
    """This process's import path for local workers, so they import what it imports."""
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    return os.pathsep.join(dict.fromkeys([os.getcwd(), *paths]))


def connect(address: str, workers: int = 1) -> bool:
    """Start or join Ray as ``address`` says (see the module docstring).

    Returns whether this call started the session (and so should end it).
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    if not isinstance(address, str) or not address:
        raise ScopaError(f"a Ray address must be 'local', 'auto' or HOST:PORT, got {address!r}")
    if address == "local":
        cpus = workers if workers > 1 else None
        ray.init(
            address="local",  # its own instance, never the cluster another process started
            num_cpus=cpus,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": _pythonpath()}},
        )
    else:
        ray.init(address=address, log_to_driver=False)
    return True


class RayPool:
    """Tasks on Ray with ``WorkerPool``'s interface; see the module docstring."""

    def __init__(self, address: str, workers: int = 1) -> None:
        self.ray = import_ray()
        self.started = connect(address, workers)
        self.pending: list[Any] = []

    def __enter__(self) -> RayPool:
        return self

    def results(self, function: Callable[[Item], Any], items: Iterable[Item]) -> Iterator[Any]:
        """``(item, function(item))`` for every item, in the order they finish."""
        ray = self.ray
        remote = ray.remote(
            num_cpus=1,
            max_retries=MAX_RETRIES,
            retry_exceptions=False,
            scheduling_strategy="SPREAD",
        )(_call)
        shared = ray.put(function)  # sent once, not with every task (a partial, a config...)
        refs = {remote.remote(shared, item): item for item in items}
        self.pending = list(refs)
        while self.pending:
            done, self.pending = ray.wait(self.pending, num_returns=1)
            for ref in done:
                yield refs[ref], ray.get(ref)

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is not None:
            self.stop()
        if self.started:
            self.ray.shutdown()

    def stop(self) -> None:
        """Cancel every task not yet finished (running ones are ended)."""
        for ref in self.pending:
            self.ray.cancel(ref, force=True)
        self.pending = []


def _call(function: Callable[[Item], Any], item: Item) -> Any:
    """A Ray task: ``function(item)`` (Ray's ``remote`` takes functions, not partials)."""
    return function(item)


def node_id() -> str:
    """The Ray node this code runs on (in a task), for tests and logs."""
    return str(import_ray().get_runtime_context().get_node_id())
