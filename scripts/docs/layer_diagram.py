#!/usr/bin/env python3
"""Writes the host's layer diagram as Graphviz dot, from the kforge_layer(...) table of core/CMakeLists.txt (the
function is cmake/KforgeLayers.cmake's): one box per layer, an arrow from each layer to every layer it USES.

Usage: layer_diagram.py CORE_CMAKELISTS > layers.dot   (scripts/docs.sh draws it with dot -Tsvg)
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


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        table = layers(f.read())
    if not table:
        raise SystemExit(f"layer_diagram: {path} has no kforge_layer(...) call")
    sys.stdout.write(dot(table))


if __name__ == "__main__":
    main()
