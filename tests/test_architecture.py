"""The package's layers hold: every import points down, front ends stay apart, no circle.

docs/architecture.md is the rulebook. Every ``import`` and ``from ... import`` of the package
counts, the ones inside functions included (a circle dodged by a local import is still a
circle); only imports under ``if TYPE_CHECKING:`` are left out, since they never run. A local
import must say why it is local (a comment on its line or the line above naming the cold start).

An import made through ``importlib.import_module`` counts as well: with a literal name
(``import_module("ari_jupyter.cli.status")``, ``import_module(".context", __name__)``), or with
a name built from a table of literal names in the same module (the CLI's ``COMMANDS``, the
probes' ``_LAZY``): each name of the table that is a module of the package is an import.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ari_jupyter"

# Bottom up. A module may import its own layer and the layers below it; i18n is open to all.
LAYERS = ("i18n", "base", "slurm", "ari", "hosts", "doctor", "probes", "wizard", "checkpoint", "runs")
FRONT_ENDS = ("cli", "widgets", "server", "hubservice", "teaching", "__main__")
FRONT = len(LAYERS)


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("ari_jupyter",) + path.relative_to(PACKAGE).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _resolve(importer: str, is_package: bool, node: ast.AST) -> list[str]:
    """The package modules ``node`` imports (a name that is a module counts as that module)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = importer.split(".") if is_package else importer.split(".")[:-1]
        if node.level:
            base = base[:len(base) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module
                   for alias in node.names]
    found = []
    for target in targets:
        while target and target not in MODULES:
            target = target.rpartition(".")[0]
        if target and target != importer:
            found.append(target)
    return found


def _package_of(importer: str, is_package: bool) -> str:
    return importer if is_package else importer.rpartition(".")[0]


def _absolute(name: str, package: str) -> str:
    """``name`` as ``importlib.import_module(name, package)`` resolves it."""
    if not name.startswith("."):
        return name
    level = len(name) - len(name.lstrip("."))
    base = package.split(".")
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name[level:]] if name[level:] else []))


def _table_names(tree: ast.Module) -> list[str]:
    """Every string literal assigned at the top of a module (its tables of names)."""
    found = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            found += [n.value for n in ast.walk(node.value)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return found


def _is_import_module(func: ast.AST) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "import_module"
            and isinstance(func.value, ast.Name) and func.value.id == "importlib") \
        or (isinstance(func, ast.Name) and func.id == "import_module")


def _dynamic_targets(importer: str, is_package: bool, call: ast.Call, table: list[str]) -> list[str]:
    """The package modules an ``importlib.import_module(...)`` call may load: its literal name,
    or each name of the module's tables it can be built from (an f-string's ``{__name__}.``
    prefix, or a relative name with a package argument)."""
    if not call.args:
        return []
    package = _package_of(importer, is_package)
    name = call.args[0]
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        candidates = [_absolute(name.value, package)]
    elif isinstance(name, ast.JoinedStr):
        prefix = ""
        for part in name.values:
            if isinstance(part, ast.Constant):
                prefix += part.value
            elif isinstance(part.value, ast.Name) and part.value.id in ("__name__", "__package__"):
                prefix += importer if part.value.id == "__name__" else package
            else:
                break
        candidates = [_absolute(prefix + entry, package) for entry in table]
    else:  # a name from a table: relative with a package argument, else absolute
        candidates = [_absolute(entry, package) if len(call.args) > 1 else entry for entry in table]
    return [c for c in dict.fromkeys(candidates) if c in MODULES and c != importer]


class _Imports(ast.NodeVisitor):
    def __init__(self, importer: str, is_package: bool, table: list[str] | None = None):
        self.importer, self.is_package = importer, is_package
        self.table = table or []  # the module's literal names (``_table_names``)
        self.edges: list[tuple[str, int, bool]] = []  # (target, line, inside a function)
        self.on_demand: set[str] = set()  # own submodules a package loads when asked (importlib)
        self.depth = 0

    def visit_If(self, node: ast.If) -> None:
        if "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_FunctionDef(self, node) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node) -> None:
        for target in _resolve(self.importer, self.is_package, node):
            self.edges.append((target, node.lineno, self.depth > 0))

    visit_ImportFrom = visit_Import

    def visit_Call(self, node: ast.Call) -> None:
        if _is_import_module(node.func):
            for target in _dynamic_targets(self.importer, self.is_package, node, self.table):
                self.edges.append((target, node.lineno, self.depth > 0))
                if self.is_package and self.depth and target.startswith(self.importer + "."):
                    self.on_demand.add(target)
        self.generic_visit(node)


def _edges() -> tuple[dict[str, list[tuple[str, int, bool]]], set[tuple[str, str]]]:
    edges, on_demand = {}, set()
    for name, (path, is_package) in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        visitor = _Imports(name, is_package, _table_names(tree))
        visitor.visit(tree)
        edges[name] = visitor.edges
        on_demand |= {(name, target) for target in visitor.on_demand}
    return edges, on_demand


EDGES, ON_DEMAND = _edges()
"""ON_DEMAND: (package, own submodule) pairs loaded by ``importlib`` inside a function of the
package (the CLI's command table, the probes' names): no circle with the submodule's import of
its package, which is always complete by then (a package is imported before its submodules)."""


def layer_of(module: str) -> tuple[int, str]:
    """(height, room): the package's own ``__init__`` is the public front door."""
    parts = module.split(".")
    if len(parts) == 1:
        return FRONT, "ari_jupyter"
    room = parts[1]
    if room in LAYERS:
        return LAYERS.index(room), room
    if room == "__main__":  # ``python -m ari_jupyter`` is the command line's own door
        return FRONT, "cli"
    if room in FRONT_ENDS:
        return FRONT, room
    raise AssertionError(f"{module} is in no layer: put it in one of {LAYERS + FRONT_ENDS}")


def forbidden(importer: str, target: str) -> str:
    """Why ``importer`` may not import ``target`` ('' when it may)."""
    (height, room), (target_height, target_room) = layer_of(importer), layer_of(target)
    if target_room == "i18n" or room == target_room:
        return ""
    if room == "ari_jupyter":  # the front door hands out the wizard, nothing else
        allowed = ("ari_jupyter.widgets.wizard", "ari_jupyter.base.version")
        return "" if target in allowed else "the package root imports only the wizard and the version"
    if height == FRONT and target_height == FRONT:
        return f"front end {room} imports front end {target_room}"
    if target_height > height:
        return f"{room} (layer {height}) imports {target_room} (layer {target_height}), above it"
    return ""


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_no_import_points_up_or_across_front_ends():
    wrong = [f"{importer}:{line} -> {target}: {why}"
             for importer, edges in EDGES.items() for target, line, _ in edges
             if (why := forbidden(importer, target))]
    assert wrong == []


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's)."""
    graph = defaultdict(set)
    for importer, edges in EDGES.items():
        graph[importer].update(target for target, _, _ in edges
                               if (importer, target) not in ON_DEMAND)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(MODULES):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle():
    assert _cycles() == []


def test_a_local_import_says_it_is_for_the_cold_start():
    """An import inside a function exists only to keep the cold start cheap, and says so."""
    unexplained = []
    for importer, edges in EDGES.items():
        lines = MODULES[importer][0].read_text(encoding="utf-8").splitlines()
        for target, line, local in edges:
            said = " ".join(lines[max(0, line - 3):line]).lower()
            if local and "cold start" not in said:
                unexplained.append(f"{importer}:{line} -> {target}")
    assert unexplained == []


@pytest.mark.parametrize("importer, target, expected", [
    ("ari_jupyter.ari.sbatch", "ari_jupyter.slurm.hostlist", ""),
    ("ari_jupyter.ari.sbatch", "ari_jupyter.probes.slurm", "above it"),
    ("ari_jupyter.checkpoint.emit", "ari_jupyter.cli.lint", "above it"),
    ("ari_jupyter.cli.lab", "ari_jupyter.widgets.wizard", "front end cli imports front end widgets"),
    ("ari_jupyter.base.redact", "ari_jupyter.i18n", ""),
    ("ari_jupyter", "ari_jupyter.checkpoint.emit", "only the wizard"),
])
def test_the_rule_itself(importer, target, expected):
    """The checker refuses what it should (a checker that passes everything proves nothing)."""
    why = forbidden(importer, target)
    assert (expected in why and why) if expected else why == ""


def test_the_walker_sees_local_imports_and_skips_type_checking():
    source = ("from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from ..cli import lab\n"
              "def f():\n    from ..checkpoint import emit\n")
    visitor = _Imports("ari_jupyter.base.redact", False)
    visitor.visit(ast.parse(source))
    assert visitor.edges == [("ari_jupyter.checkpoint.emit", 5, True)]


@pytest.mark.parametrize("importer, is_package, source, expected", [
    # a literal name, absolute and relative (to the package of a module, or of a package)
    ("ari_jupyter.base.redact", False,
     "import importlib\ndef f():\n    importlib.import_module('ari_jupyter.cli.status')\n",
     [("ari_jupyter.cli.status", 3, True)]),
    ("ari_jupyter.probes.runner", False,
     "from importlib import import_module\nimport_module('..cli.status', __package__)\n",
     [("ari_jupyter.cli.status", 2, False)]),
    ("ari_jupyter.probes", True,
     "import importlib\nimportlib.import_module('.context', __name__)\n",
     [("ari_jupyter.probes.context", 2, False)]),
    # a table of names: relative with a package argument (the probes' _LAZY) ...
    ("ari_jupyter.probes", True,
     "import importlib\n_LAZY = {'a': '..base.verdict', 'b': '.context', 'c': 'no_module'}\n"
     "def get(name):\n    return importlib.import_module(_LAZY[name], __name__)\n",
     [("ari_jupyter.base.verdict", 4, True), ("ari_jupyter.probes.context", 4, True)]),
    # ... or an f-string on the package's own name (the CLI's COMMANDS)
    ("ari_jupyter.cli", True,
     "import importlib\nCOMMANDS = {'lint': ('lint', 'check it'), 'x': ('no_such', 'y')}\n"
     "def load(name):\n    return importlib.import_module(f'{__name__}.{COMMANDS[name][0]}')\n",
     [("ari_jupyter.cli.lint", 4, True)]),
    # a relative f-string (a step's panel in the widgets)
    ("ari_jupyter.widgets.wizard", False,
     "import importlib\nPANELS = (None, ('checks_panel', 'ChecksPanel'))\n"
     "def panel(module):\n    return importlib.import_module(f'.{module}', __package__)\n",
     [("ari_jupyter.widgets.checks_panel", 4, True)]),
])
def test_the_walker_sees_importlib_imports(importer, is_package, source, expected):
    tree = ast.parse(source)
    visitor = _Imports(importer, is_package, _table_names(tree))
    visitor.visit(tree)
    assert visitor.edges == expected


def test_the_cli_table_and_the_probes_table_are_seen():
    """The real tables: every command module is an import of ``cli``, the probes' runner one
    of ``probes``, each step's panel one of the wizard (a walker blind to importlib sees none)."""
    from ari_jupyter.cli import COMMANDS
    from ari_jupyter.widgets.wizard import PANELS

    def seen(importer):
        return {target for target, _, _ in EDGES[importer]}

    assert {f"ari_jupyter.cli.{command.module}" for command in COMMANDS.values()} <= seen("ari_jupyter.cli")
    assert "ari_jupyter.probes.runner" in seen("ari_jupyter.probes")
    assert {f"ari_jupyter.widgets.{p[0]}" for p in PANELS if p} <= seen("ari_jupyter.widgets.wizard")
