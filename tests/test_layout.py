"""The layout: imports point one way between the packages and form no circle inside them.

game (``scopa_env``) <- players (``agents``) <- evaluation <- training and the benchmark <- the
command line (``cli``). Every import counts: at module level, inside a function, or for type
checking only.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: A package may import only packages of a lower rank (and itself).
RANKS = {"scopa_env": 0, "agents": 1, "evaluation": 2, "training": 3, "benchmark": 3, "cli": 4}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The project modules a file imports (``from pkg import mod`` resolves to ``pkg.mod``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name.split(".")[0] in RANKS}


def _graph() -> dict[str, set[str]]:
    files = [p for package in RANKS for p in sorted((ROOT / package).rglob("*.py"))]
    modules = {_module_name(p): p for p in files}
    return {name: {m for m in _imports(path) if m in modules} for name, path in modules.items()}


def test_packages_import_only_packages_below_them() -> None:
    upward = [
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if RANKS[target.split(".")[0]] > RANKS[module.split(".")[0]]
    ]
    assert upward == []


def test_modules_import_each_other_in_no_circle() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if target == module or _is_package_of(target, module):
                continue
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def _is_package_of(package: str, module: str) -> bool:
    """``from pkg import mod`` names the package ``pkg`` too; that is not a dependency on it."""
    return module.startswith(package + ".")


def test_the_game_imports_no_player_even_by_name() -> None:
    """Environments build named opponents through the entry point, never ``agents``."""
    code = (
        "import sys\n"
        "from scopa_env.single_agent import ScopaSingleAgentEnv\n"
        "from scopa_env.vector_env import ScopaVectorEnv\n"
        "import scopa_env\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('agents', 'evaluation', 'training', 'benchmark', 'cli')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_pretrained_agent_loads_and_plays_in_a_fresh_interpreter() -> None:
    """The shipped checkpoint names its policy class by its home in ``agents``."""
    code = (
        "import numpy as np\n"
        "from agents import make_agent\n"
        "from scopa_env import scopa_v0\n"
        "agent = make_agent('pretrained_v5')\n"
        "print(type(agent.model.policy).__module__)\n"
        "env = scopa_v0.raw_env()\n"
        "env.reset(seed=0)\n"
        "plays = 0\n"
        "while not all(env.terminations.values()):\n"
        "    observation = env.observe(env.agent_selection)\n"
        "    action = agent.act(observation)\n"
        "    assert observation['action_mask'][action]\n"
        "    env.step(action)\n"
        "    plays += 1\n"
        "print(plays)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    module, plays = out.stdout.split()
    assert module == "agents.card_policy"
    assert int(plays) >= 36  # at least one whole deal of 36 cards played


def test_agent_names_are_made_in_one_place() -> None:
    """``player_{seat}`` is ``scopa_env.tables.agent_name``; nowhere else builds the name (an
    attribute name such as ``getattr(record, f"player_{side}")`` is not an agent's)."""
    home = ROOT / "scopa_env" / "tables.py"
    found = []
    for package in RANKS:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text())
            attributes = {
                id(arg)
                for node in ast.walk(tree)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "setattr", "hasattr")
                for arg in node.args[1:2]
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.JoinedStr)
                    and id(node) not in attributes
                    and node.values
                    and isinstance(node.values[0], ast.Constant)
                    and str(node.values[0].value).endswith("player_")
                    and path != home
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_test_modules_share_helpers_only_through_conftest() -> None:
    """A helper two test modules use lives in ``tests/conftest.py``, not in one of them."""
    found = [
        f"{path.name} imports {node.module}"
        for path in sorted((ROOT / "tests").glob("test_*.py"))
        for node in ast.parse(path.read_text()).body  # module level: a subprocess may import
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").split(".")[-1].startswith("test_")  # test_x or tests.test_x
    ]
    assert found == []
