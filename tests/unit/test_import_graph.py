"""No import circles: the modules under packages/ and the web UI's JavaScript modules form layers.

The graph is read from the source with `ast` (Python) and a regular expression over `import`
statements (JavaScript), so it sees every import a reader sees: module level, inside functions and
under `if TYPE_CHECKING:` alike. A circle is reported as the path that closes it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = tuple(sorted((REPOSITORY / "packages").glob("*/src")))
UI_STATIC = REPOSITORY / "packages/server/src/flagstaff_server/ui/static"

Graph = Mapping[str, frozenset[str]]


def python_modules(roots: Iterable[Path]) -> dict[str, Path]:
    """Dotted module name -> file, for every `.py` file under the source roots."""
    modules: dict[str, Path] = {}
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _known_prefix(name: str, modules: Mapping[str, Path]) -> str | None:
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_import_call(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in {"import_module", "__import__"}


def _named_by(argument: ast.expr, modules: Mapping[str, Path]) -> list[str]:
    """The modules an `import_module(...)` argument can name: a literal names one; an f-string
    with a literal package prefix (`f"a.commands.{name}"`) names every module in that package."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return [argument.value]
    if isinstance(argument, ast.JoinedStr) and argument.values:
        head = argument.values[0]
        if (
            isinstance(head, ast.Constant)
            and isinstance(head.value, str)
            and head.value.endswith(".")
        ):
            return [
                m for m in modules if m.startswith(head.value) and "." not in m[len(head.value) :]
            ]
    return []


def python_imports(module: str, path: Path, modules: Mapping[str, Path]) -> frozenset[str]:
    """The project modules `module` names in any import statement.

    `import a.b.c` is an edge to `a.b.c`; `from a.b import c` is an edge to `a.b.c` when that is a
    module and to `a.b` otherwise; `importlib.import_module("a.b")` is an edge to `a.b`. Python
    also runs the `__init__` of each parent package, but that is not counted as an edge: a
    package's `__init__` re-exports its submodules, so counting it would make every facade a
    circle by construction. An explicit `from a import x` inside `a.b` is counted (it asks for
    the `__init__`'s names).
    """
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node, is_package)
            names = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                for alias in node.names
            ]
        elif isinstance(node, ast.Call) and _is_import_call(node.func) and node.args:
            names = _named_by(node.args[0], modules)
        else:
            continue
        targets.update(t for n in names if (t := _known_prefix(n, modules)) is not None)
    targets.discard(module)
    return frozenset(targets)


def python_graph(roots: Iterable[Path]) -> dict[str, frozenset[str]]:
    modules = python_modules(roots)
    return {name: python_imports(name, path, modules) for name, path in modules.items()}


# Static `import ... from './x.js'`, `import './x.js'`, `export ... from './x.js'` at the start of a
# line (so prose in comments does not count), and dynamic `import('./x.js')` anywhere.
_STATIC_JS = re.compile(
    r"^\s*(?:import|export)\b[^;'\"]*?(?:\bfrom\s*)?['\"](\.{1,2}/[^'\"]+)['\"]", re.MULTILINE
)
_DYNAMIC_JS = re.compile(r"\bimport\s*\(\s*['\"](\.{1,2}/[^'\"]+)['\"]\s*\)")


def js_graph(directory: Path) -> dict[str, frozenset[str]]:
    """File name (relative to `directory`) -> the local modules it imports."""
    graph: dict[str, frozenset[str]] = {}
    for path in sorted(directory.rglob("*.js")):
        text = path.read_text()
        specifiers = _STATIC_JS.findall(text) + _DYNAMIC_JS.findall(text)
        graph[path.relative_to(directory).as_posix()] = frozenset(
            (path.parent / s).resolve().relative_to(directory.resolve()).as_posix()
            for s in specifiers
        )
    return graph


def strongly_connected(graph: Graph) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of more than one node (each one a circle)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start] & graph.keys()))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            if successors:
                nxt = successors.pop(0)
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt] & graph.keys())))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components)


def closing_path(component: list[str], graph: Graph) -> list[str]:
    """A shortest path from the component's first module back to itself, inside the component."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if nxt not in came_from:
                    came_from[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"{component} is not strongly connected")


def describe_circles(graph: Graph) -> list[str]:
    return [
        f"{len(c)} modules: " + " -> ".join(closing_path(c, graph)) + f" (all: {', '.join(c)})"
        for c in strongly_connected(graph)
    ]


def test_packages_import_each_other_without_circles() -> None:
    graph = python_graph(SOURCE_ROOTS)
    assert len(graph) > 100, "the source roots moved: the check would pass on nothing"
    circles = describe_circles(graph)
    assert not circles, "import circles in packages/:\n" + "\n".join(circles)


def test_ui_javascript_modules_import_each_other_without_circles() -> None:
    graph = js_graph(UI_STATIC)
    assert "app.js" in graph
    assert graph["app.js"], "app.js imports nothing: the import pattern no longer matches"
    circles = describe_circles(graph)
    assert not circles, "import circles in the UI's JavaScript:\n" + "\n".join(circles)


def _write(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_python_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.top import run\n",
            "pkg/top.py": "import pkg.sub.low\nfrom pkg.sub import mid, CONSTANT\n",
            "pkg/sub/__init__.py": "CONSTANT = 1\n",
            "pkg/sub/mid.py": "def late() -> None:\n    from . import low\n",
            "pkg/cli.py": (
                "import importlib\nimportlib.import_module('pkg.top')\n"
                "def command(name: str) -> None:\n    importlib.import_module(f'pkg.sub.{name}')\n"
            ),
            "pkg/sub/low.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..top import run\n"
            ),
        },
    )
    assert python_graph([tmp_path]) == {
        "pkg": frozenset({"pkg.top"}),
        "pkg.top": frozenset({"pkg.sub.low", "pkg.sub.mid", "pkg.sub"}),
        "pkg.sub": frozenset(),
        "pkg.sub.mid": frozenset({"pkg.sub.low"}),
        "pkg.sub.low": frozenset({"pkg.top"}),
        "pkg.cli": frozenset({"pkg.top", "pkg.sub.mid", "pkg.sub.low"}),
    }


def test_circle_is_named_by_the_path_that_closes_it(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/model.py": "from pkg.program import compile_flag\n",
            "pkg/program.py": "from pkg import clause\n",
            "pkg/clause.py": "def f() -> None:\n    import pkg.model\n",
            "pkg/leaf.py": "import pkg.model\n",
        },
    )
    assert describe_circles(python_graph([tmp_path])) == [
        "3 modules: pkg.clause -> pkg.model -> pkg.program -> pkg.clause "
        "(all: pkg.clause, pkg.model, pkg.program)"
    ]


def test_js_graph_reads_static_and_dynamic_imports(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "app.js": (
                "import {\n  a,\n  b,\n} from './pages.js';\nimport * as d from \"./dom.js\";\n"
                "// import { x } from './comment.js' is prose\nimport './side.js';\n"
            ),
            "pages.js": "export { h } from './dom.js';\nconst m = () => import('./app.js');\n",
            "dom.js": "import { get } from 'https://cdn.example/x.js';\n",
            "side.js": "",
        },
    )
    graph = js_graph(tmp_path)
    assert graph == {
        "app.js": frozenset({"pages.js", "dom.js", "side.js"}),
        "pages.js": frozenset({"dom.js", "app.js"}),
        "dom.js": frozenset(),
        "side.js": frozenset(),
    }
    assert describe_circles(graph) == [
        "2 modules: app.js -> pages.js -> app.js (all: app.js, pages.js)"
    ]
