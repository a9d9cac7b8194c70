"""What a user gets from `pip install .` or a wheel, not the editable install the suite runs in.

The shipped networks are data files beside the code: a wheel that leaves them out installs
players that fail when built. These tests build the wheel from a copy of the packages and build
every player from the unpacked wheel, away from the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGES = [
    pattern.rstrip("*")
    for pattern in tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]["find"]["include"]
]

BUILD_EVERY_PLAYER = """
import sys
from pathlib import Path

import agents
import scopa_env
from agents import AGENTS, make_agent
from agents.policy import SHIPPED_CHECKPOINTS

site = Path(sys.argv[1]).resolve()
for module in (agents, scopa_env):
    assert site in Path(module.__file__).resolve().parents, module.__file__
for name in [*AGENTS, *SHIPPED_CHECKPOINTS]:
    make_agent(name)
    print(name)
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPOSITORY / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for package in PACKAGES:
        shutil.copytree(REPOSITORY / package, source / package, ignore=ignore)
    dist = root / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--quiet", "--wheel-dir", str(dist), str(source)],
        check=True,
    )
    (built,) = dist.glob("*.whl")
    return built


@pytest.mark.slow
def test_every_player_builds_from_the_wheel_away_from_the_checkout(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    built = subprocess.run(
        [sys.executable, "-c", BUILD_EVERY_PLAYER, str(site)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    from agents import AGENTS
    from agents.policy import SHIPPED_CHECKPOINTS

    assert built.stdout.split() == [*AGENTS, *SHIPPED_CHECKPOINTS]


@pytest.mark.slow
def test_the_wheel_has_the_version_the_package_states(wheel: Path) -> None:
    import scopa_env

    assert wheel.name.startswith(f"scopa_env-{scopa_env.__version__}-")


@pytest.mark.slow
def test_the_wheel_marks_every_package_as_typed(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {f"{package}/py.typed" for package in PACKAGES} <= names
