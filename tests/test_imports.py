"""No import loop anywhere in the project's packages, function-level imports included (the
contracts of ``make lint`` keep the layers; this keeps every module's imports acyclic)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

# Every package the import contracts know, so a new app is checked the day it is added.
PACKAGES = tuple(
    tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["tool"][
        "importlinter"
    ]["root_packages"]
)


def import_loops() -> list[list[str]]:
    """The strongly connected groups of modules (Tarjan): every loop of imports, each once."""
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False)
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []
    counter = 0

    def visit(root: str) -> None:
        nonlocal counter
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        loops.append(sorted(group))
                continue
            if child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(edges[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])

    for module in modules:
        if module not in index:
            visit(module)
    return loops


def test_no_module_imports_itself_through_others():
    assert import_loops() == []


# Run in a fresh interpreter: Django set up once, then each module imported first in a child
# forked from that state, which is the state of a fresh interpreter after ``django.setup()``
# (at a fraction of the cost of starting one per module).
FIRST_IMPORTS = """
import os, sys, traceback
import django
django.setup()
failed = []
for module in sys.argv[1:]:
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            __import__(module)
        except BaseException:
            print(f"--- {module}", file=sys.stderr)
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    if os.waitpid(pid, 0)[1] != 0:
        failed.append(module)
print(" ".join(failed))
"""


def test_the_bottom_layers_import_first_in_a_fresh_interpreter():
    """Import order must not matter: each module of core/ and runtime/ imports cleanly as the
    first one after Django's set-up (DRF's settings import the parser and the handler lazily,
    so a loop through them shows only in a fresh process)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    modules = sorted(
        f"{path.parent.name}.{path.stem}"
        for package in ("core", "runtime")
        for path in (root / package).glob("*.py")
        if path.stem != "__init__"
    )
    result = subprocess.run(
        [sys.executable, "-c", FIRST_IMPORTS, *modules],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    failed = result.stdout.split()
    assert failed == [], (failed, result.stderr[-4000:])
