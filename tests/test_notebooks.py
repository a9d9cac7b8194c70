"""The notebooks in ``notebooks/`` run top to bottom, each in a fresh kernel, as a reader runs them.

The kernel is this interpreter (the project's virtual environment): the ``python3`` kernel spec
when it launches this Python, otherwise a private spec written for ``sys.executable``, so the
test needs nothing beyond ``make setup`` and ignores whatever kernels the machine has installed.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")
nbclient = pytest.importorskip("nbclient", reason="the notebooks extra is not installed")
pytest.importorskip("ipykernel", reason="the notebooks extra is not installed")

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
#: Seconds any one cell may run (the slowest, a short training run, takes under a minute).
CELL_TIMEOUT = 600
#: The names jupyter_client replaces with the interpreter that launches the kernel.
_THIS_PYTHON = {"python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info)}


def _launches_this_python(argv: list[str]) -> bool:
    if not argv:
        return False
    return argv[0] in _THIS_PYTHON or os.path.abspath(argv[0]) == os.path.abspath(sys.executable)


@pytest.fixture(scope="session")
def make_client(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Any], Any]:
    """``make_client(notebook)``: an nbclient client whose kernel runs this interpreter."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    options: dict[str, Any] = {
        "timeout": CELL_TIMEOUT,
        "resources": {"metadata": {"path": str(NOTEBOOKS_DIR)}},  # run in notebooks/
    }
    try:
        spec = KernelSpecManager().get_kernel_spec("python3")
        usable = _launches_this_python(spec.argv)
    except NoSuchKernel:
        usable = False
    if usable:
        return lambda nb: nbclient.NotebookClient(nb, kernel_name="python3", **options)

    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client import KernelManager

    kernels = tmp_path_factory.mktemp("kernels")
    write_kernel_spec(kernels / "python3")  # argv: [sys.executable, "-m", "ipykernel_launcher"]
    specs = KernelSpecManager(kernel_dirs=[str(kernels)])

    def private(nb: Any) -> Any:
        km = KernelManager(kernel_name="python3", kernel_spec_manager=specs)
        return nbclient.NotebookClient(nb, km=km, **options)

    return private


def test_there_are_notebooks() -> None:
    names = [path.name for path in NOTEBOOKS]
    assert names == [
        "01_environment_tour.ipynb",
        "02_train_and_evaluate.ipynb",
        "03_agent_analysis.ipynb",
    ], names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert not cell.outputs, f"{path.name} cell {i} has outputs: clear them"
            assert cell.execution_count is None, f"{path.name} cell {i} has an execution count"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs_top_to_bottom(
    path: Path, make_client: Callable[[Any], Any], tmp_path: Path
) -> None:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    # Raises CellExecutionError with the failing cell's traceback. The kernel's temporary
    # files (the training notebook's run folder) go to this test's own temporary folder.
    make_client(nb).execute(env={**os.environ, "TMPDIR": str(tmp_path)})
    seconds = time.perf_counter() - start
    errors = [
        output
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert not errors, errors
    print(f"{path.name}: {seconds:.0f} s")
