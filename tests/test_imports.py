"""No import loop anywhere in the project's packages, function-level imports included (the
contracts of ``make lint`` keep the layers; this keeps every module's imports acyclic)."""

from __future__ import annotations

import grimp

PACKAGES = ("accounts", "chips", "core", "games", "ops", "runtime", "tongits_site", "web")


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
