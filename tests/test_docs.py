"""The documentation's pages hold together: every ``docs/`` page or picture the project names
exists, every picture or page a page links to resolves from that page, and the README names every
page."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMED = re.compile(r"docs/[\w./-]*\w\.(?:md|png)")
LINK = re.compile(r"\[[^\]]*\]\((?!https?:)([^)\s#]+)[^)]*\)")


def _tracked(*patterns: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed]


def test_every_docs_path_the_project_names_exists() -> None:
    missing = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in _tracked("*.py", "*.md", "*.yaml", "Makefile")
        for name in NAMED.findall(path.read_text())
        if not (ROOT / name).is_file()
    }
    assert not missing, sorted(missing)


def test_every_link_of_a_page_resolves_from_that_page() -> None:
    broken = {
        f"{page.relative_to(ROOT)}: {target}"
        for page in _tracked("*.md")
        for target in LINK.findall(page.read_text())
        if not (page.parent / target).is_file()
    }
    assert not broken, sorted(broken)


def test_the_readme_names_every_page_of_docs() -> None:
    readme = (ROOT / "README.md").read_text()
    pages = sorted((ROOT / "docs").glob("*.md"))
    assert pages
    assert [p.name for p in pages if f"docs/{p.name}" not in readme] == []
