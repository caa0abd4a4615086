"""The layout rules of DEVELOPERS.md that ruff cannot check, run by `make lint` and `make test`.

- Layers: a module of `faithlens/` imports only from its own layer or lower ones (LAYERS).
- Boundaries: `st.query_params` only in the shell and the URL-state module; no transaction, write
  or cache clearing in `pages/` or `components/` (core functions own writes and bump the version).
- Components: a page's group (`components/<page>/`) imports only its own group and the shared
  top-level components; a shared component imports no group.
- Size: no source file over MAX_FILE_LINES lines, no function over MAX_FUNCTION_LINES lines.

Prints one line per breach (file:line: what) and exits 1 when there is any.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("app.py", "pages", "components", "faithlens")
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
LAYERS: dict[str, int] = {
    "errors": 0,
    "config": 0,
    "vocab": 0,
    "querystate": 0,
    "store": 1,
    "analysis": 2,
    "access": 2,
    "filters": 2,
    "filter_options": 2,
    "unit_filter": 2,
    "datasets": 3,
    "build": 4,
    "llm": 5,
    "coding": 6,
    "views": 7,
    "exports": 7,
    "cli": 8,
}
"""Top-level module or sub-package of `faithlens/` -> its layer; lower layers never import higher ones."""
URL_MODULES = {"components/shell.py", "components/urlstate.py"}
UI_WRITES = re.compile(r"\.clear\(\)|\.begin\(\)|\.commit\(\)|\.rollback\(\)|store\.write\(|\btransaction\(")


def _files() -> list[Path]:
    found: list[Path] = []
    for name in SOURCES:
        path = ROOT / name
        found += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return found


def _layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "faithlens" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "faithlens":
            out += [(node.lineno, f"faithlens.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
    return out


def _layer_breaches(rel: str, tree: ast.AST) -> list[str]:
    own = _layer_of(rel.removesuffix(".py").replace("/", "."))
    if own is None:
        return []
    return [
        f"{rel}:{line}: imports {name} from a higher layer ({_layer_of(name)} > {own}); see LAYERS"
        for line, name in _imports(tree)
        if (_layer_of(name) or 0) > own
    ]


def _group_of(module: str) -> str | None:
    """`components.<group>[.<module>]` -> the group; None for a shared component or anything else."""
    parts = module.split(".")
    grouped = parts[0] == "components" and len(parts) > 1 and (ROOT / "components" / parts[1]).is_dir()
    return parts[1] if grouped else None


def _component_breaches(rel: str, tree: ast.AST) -> list[str]:
    if not rel.startswith("components/"):
        return []
    own = _group_of(rel.removesuffix(".py").replace("/", "."))
    named = [(line, name) for line, name in _imports(tree) if name.startswith("components.")]
    return [
        f"{rel}:{line}: imports {name}, another page's component; move what both need to a shared component"
        for line, name in named
        if _group_of(name) not in (None, own)
    ]


def _size_breaches(rel: str, text: str, tree: ast.AST) -> list[str]:
    breaches = []
    lines = text.count("\n")
    if lines > MAX_FILE_LINES:
        breaches.append(f"{rel}:1: {lines} lines; split it below {MAX_FILE_LINES}")
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                breaches.append(
                    f"{rel}:{node.lineno}: function {node.name} has {length} lines (max {MAX_FUNCTION_LINES})"
                )
    return breaches


def _ui_breaches(rel: str, text: str) -> list[str]:
    breaches = []
    ui = rel == "app.py" or rel.startswith(("pages/", "components/"))
    for number, line in enumerate(text.splitlines(), start=1):
        if ui and rel not in URL_MODULES and "st.query_params" in line:
            breaches.append(f"{rel}:{number}: st.query_params outside the shell and components/urlstate.py")
        if ui and UI_WRITES.search(line):
            breaches.append(f"{rel}:{number}: transaction, write or cache clearing in the UI; call a core function")
    return breaches


def main() -> int:
    breaches = []
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=rel)
        breaches += _layer_breaches(rel, tree) + _component_breaches(rel, tree)
        breaches += _size_breaches(rel, text, tree) + _ui_breaches(rel, text)
    for breach in breaches:
        print(breach)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
