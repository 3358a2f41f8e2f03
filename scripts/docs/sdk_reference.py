#!/usr/bin/env python3
"""Writes the SDK API reference (docs/reference/sdk.md) from the doc comments of the SDK's public headers: each
header's opening comment, then every declaration that a doc comment (///, or /* */ in the C header abi.h) precedes,
and every member that a trailing ///< or /* */ comment documents. Classes and structs are headings.

Usage: sdk_reference.py SDK_INCLUDE_DIR > docs/reference/sdk.md   (scripts/docs.sh --check compares it)
"""
import pathlib
import re
import sys

DECLARATION_END = re.compile(r"[;{}]\s*$")
TYPE_HEAD = re.compile(r"^(?:template\s*<[^>]*>\s*)?(?:typedef\s+)?(class|struct|enum class|enum)\s+(?:[A-Z][A-Z_]+\s+)?(\w+)")
TRAILING_DOC = re.compile(r"^(?P<code>.*?\S)\s*(?:///<\s*(?P<doc>.*)|/\*\s*(?P<cdoc>.*?)\s*\*/)\s*$")


def markdown_text(text):
    """Doc text as Markdown: what Markdown would read as markup escaped, `code spans` kept as written."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # outside code spans
        parts[i] = re.sub(r"([\\*_\[<])", r"\\\1", parts[i])
    return "`".join(parts) if len(parts) % 2 else text.replace("<", "&lt;")


def opening_comment(lines):
    """The header's leading // or /* */ comment, as one paragraph per blank-comment-separated block."""
    text = []
    for line in lines:
        s = line.strip()
        if s.startswith("//"):
            text.append(s[2:].strip())
        elif s.startswith("/*") or (text and s.startswith("*")):
            text.append(s.lstrip("/*").rstrip("*/").strip())
            if s.endswith("*/"):
                break
        else:
            break
    paragraphs = "\n".join(text).split("\n\n")
    return [" ".join(p.split()) for p in paragraphs if p.strip() and not p.startswith("  ")]


def signature(code):
    """A declaration without its inline body: `f() { return x; }` becomes `f();`."""
    code = " ".join(code.split())
    if "{" in code and not TYPE_HEAD.match(code):
        code = code[: code.index("{")].rstrip()
        code = code if code.endswith(")") or code.endswith("const") or "=" in code else code
        return code + ";"
    return code


def code_and_comment(line):
    """A line's code and its trailing ///< or /* */ comment (None when it has none)."""
    m = TRAILING_DOC.match(line.strip())
    return (m.group("code"), m.group("doc") or m.group("cdoc")) if m else (line.strip(), None)


def entries(lines):
    """[(kind, depth, code, doc)] for kind 'type' (a class or struct heading), 'decl' or 'member'."""
    out, doc, in_block, depth, i = [], [], False, 0, 0
    while i < len(lines) and not lines[i].startswith(("#pragma once", "#ifndef")):
        i += 1  # the opening comment, rendered as the header's description
    while i < len(lines):
        s = lines[i].strip()
        i += 1
        if in_block:
            doc.append(s.rstrip("*/").lstrip("*").strip())
            in_block = not s.endswith("*/")
            continue
        if s.startswith("///") and not s.startswith("///<"):
            doc.append(s[3:].strip())
            continue
        if s.startswith("/*"):
            doc = [s[2:].rstrip("*/").strip()]
            in_block = not s.endswith("*/")
            continue
        if not s or s.startswith(("//", "#if", "#e", "#include", "#pragma")):
            continue
        if s.startswith("#define"):
            while s.endswith("\\") and i < len(lines):
                s = s[:-1].rstrip() + " " + lines[i].strip()
                i += 1
            function_like = re.match(r"#define \w+\([^)]*\)", s)  # its name and parameters; the body is no API
            if doc and not re.match(r"#define \w+_H$", s):
                out.append(("decl", depth, function_like.group(0) if function_like else " ".join(s.split()),
                            " ".join(doc)))
            doc = []
            continue
        code, comment = code_and_comment(s)
        while not DECLARATION_END.search(code) and i < len(lines) and not code.startswith(
                ("public:", "private:", "protected:", "namespace", "extern")):
            more, more_comment = code_and_comment(lines[i])
            code, comment = code + " " + more, comment or more_comment
            i += 1
        if code.startswith(("namespace", "extern", "public:", "private:", "protected:")):
            doc = []
            continue
        head = TYPE_HEAD.match(code)
        if head and "{" in code and not code.endswith("};"):
            out.append(("type", depth, f"{head.group(1)} {head.group(2)}", " ".join(doc)))
        elif comment and not doc:
            out.append(("member", depth, signature(code), comment))
        elif doc:
            out.append(("decl", depth, signature(code), " ".join(doc)))
        doc = []
        depth += code.count("{") - code.count("}")
    return out


def render(header, relative):
    lines = header.read_text(encoding="utf-8").splitlines()
    md = [f"## {relative}", ""]
    for paragraph in opening_comment(lines):
        md += [markdown_text(paragraph), ""]
    previous = None
    for kind, depth, code, doc in entries(lines):
        if kind != "member" and previous == "member":
            md.append("")
        if kind == "type":
            md += [f"{'#' * min(3 + max(depth - 1, 0), 6)} `{code}`", ""]
            if doc:
                md += [markdown_text(doc), ""]
        elif kind == "member":
            md.append(f"- `{code}`: {markdown_text(doc)}")
        else:
            md += ["```cpp", code, "```", "", markdown_text(doc), ""]
        previous = kind
    if previous == "member":
        md.append("")
    return md


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    root = pathlib.Path(sys.argv[1])
    headers = sorted((root / "kforge" / "sdk").glob("*.h"))
    if not headers:
        raise SystemExit(f"sdk_reference: no headers in {root}/kforge/sdk")
    md = [
        "# SDK API reference",
        "",
        "<!-- Written by scripts/docs/sdk_reference.py from the doc comments of sdk/include/kforge/sdk/*.h; "
        "`scripts/docs.sh --check` fails when this page differs from its output. -->",
        "",
        "A plugin includes `<kforge/sdk/sdk.h>`, which includes every header below. "
        "[Writing a plugin](../how-to/writing-a-plugin.md) walks through one.",
        "",
    ]
    for header in headers:
        md += render(header, header.relative_to(root).as_posix())
    sys.stdout.write("\n".join(md).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
