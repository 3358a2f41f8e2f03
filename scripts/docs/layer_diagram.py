#!/usr/bin/env python3
"""Writes the host's layer diagram as Graphviz dot, from the kforge_layer(...) table of core/CMakeLists.txt (the
function is cmake/KforgeLayers.cmake's): one box per layer, an arrow from each layer to every layer it USES.

With --table PAGE.md it checks instead that the page's layer table (rows "| `layer` | what it owns |") lists exactly
the layers of the build, so the descriptions beside the diagram cannot drift either.

Usage: layer_diagram.py CORE_CMAKELISTS [--table PAGE.md] > layers.dot   (scripts/docs.sh draws it with dot -Tsvg)
"""
import re
import sys

KEYWORDS = {"PLAIN", "USES", "USES_LIBS"}


def layers(cmake_text):
    """[(name, plain, [used layers])] in the table's order, from the top-level kforge_layer(...) calls."""
    text = re.sub(r"#[^\n]*", "", cmake_text)  # comments (no layer name or keyword holds '#')
    table = []
    for call in re.finditer(r"^\s*kforge_layer\s*\(([^)]*)\)", text, re.MULTILINE):
        words = call.group(1).split()
        name, plain, uses, section = words[0], False, [], None
        for word in words[1:]:
            if word in KEYWORDS:
                plain = plain or word == "PLAIN"
                section = word
            elif section == "USES":
                uses.append(word)
        table.append((name, plain, uses))
    return table


def dot(table):
    names = {name for name, _, _ in table}
    lines = [
        "digraph layers {",
        '  rankdir=BT; node [shape=box, style="rounded,filled", fontname="sans-serif", fontsize=11];',
        '  edge [color="#666666", arrowsize=0.6];',
    ]
    for name, plain, _ in table:
        colour = "#e8f0fe" if plain else "#fde8d0"
        lines.append(f'  "{name}" [fillcolor="{colour}", tooltip="core/{name}"];')
    for name, _, uses in table:
        for used in uses:
            if used not in names:
                raise SystemExit(f"layer_diagram: layer '{name}' USES '{used}', which no kforge_layer() call declares")
            lines.append(f'  "{name}" -> "{used}";')
    lines.append("}")
    return "\n".join(lines) + "\n"


def check_table(table, page):
    """Fails unless `page`'s rows "| `name` | ... |" name exactly the layers of `table`."""
    with open(page, encoding="utf-8") as f:
        text = f.read()
    header = re.search(r"^\| layer \| what it owns \|\n\|[- |]+\|\n((?:\|.*\n)*)", text, re.MULTILINE)
    if not header:
        raise SystemExit(f"layer_diagram: {page} has no table headed '| layer | what it owns |'")
    listed = re.findall(r"^\| `(\w+)` \|", header.group(1), re.MULTILINE)
    built = [name for name, _, _ in table]
    missing, extra = [n for n in built if n not in listed], [n for n in listed if n not in built]
    if missing or extra:
        raise SystemExit(f"layer_diagram: {page}'s layer table differs from the build's layers: "
                         f"add {missing or 'none'}, remove {extra or 'none'}")


def main():
    args = sys.argv[1:]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--table"):
        raise SystemExit(__doc__.strip().splitlines()[-1])
    with open(args[0], encoding="utf-8") as f:
        table = layers(f.read())
    if not table:
        raise SystemExit(f"layer_diagram: {args[0]} has no kforge_layer(...) call")
    if len(args) == 3:
        check_table(table, args[2])
    else:
        sys.stdout.write(dot(table))


if __name__ == "__main__":
    main()
