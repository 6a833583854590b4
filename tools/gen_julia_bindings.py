#!/usr/bin/env python3
"""Generates bindings/julia/src/LibMXQ.jl, the Julia ccall layer, from include/mxq/mxq.h.

The Julia binding is mechanical on purpose: every enum, handle type, struct and function of the
header becomes one Julia declaration with the same name (Clang.jl's convention), so the C docs
apply unchanged and nothing needs a Julia toolchain to stay correct. Enums become `Cint` aliases
with plain integer constants, not `@enum`s, so a status code newer than the bindings is still a
value and never an error. `--check` compares the checked-in file with a fresh generation (CI runs
it: bindings/julia/test.sh).

    python3 tools/gen_julia_bindings.py            # rewrite the file
    python3 tools/gen_julia_bindings.py --check    # exit 1 and print a diff when it is stale
"""

import argparse
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import mxq_header as mh  # noqa: E402

DEFAULT_OUTPUT = ROOT / "bindings" / "julia" / "src" / "LibMXQ.jl"

_SCALARS = {
    "void": "Cvoid", "char": "Cchar", "int": "Cint", "unsigned int": "Cuint", "float": "Cfloat",
    "double": "Cdouble", "size_t": "Csize_t", "int8_t": "Int8", "uint8_t": "UInt8", "int16_t": "Int16",
    "uint16_t": "UInt16", "int32_t": "Int32", "uint32_t": "UInt32", "int64_t": "Int64", "uint64_t": "UInt64",
}

_JULIA_KEYWORDS = {"baremodule", "begin", "break", "catch", "const", "continue", "do", "else", "elseif",
                   "end", "export", "false", "finally", "for", "function", "global", "if", "import",
                   "let", "local", "macro", "module", "quote", "return", "struct", "true", "try", "using",
                   "while", "type", "abstract", "primitive", "mutable"}


def julia_type(t: mh.CType, header: mh.Header) -> str:
    kind = header.kind_of(t.base)
    if kind == "builtin":
        if t.base not in _SCALARS:
            raise mh.HeaderError(f"no Julia type for C type {t.base!r}: extend _SCALARS")
        s = _SCALARS[t.base]
    else:
        s = t.base  # enums, handles, structs and callbacks keep their C typedef names
    for _ in t.pointers:
        s = f"Ptr{{{s}}}"
    return s


def _comment(text: str, indent: str = "") -> str:
    return "".join(f"{indent}#{' ' + l if l else ''}\n" for l in text.splitlines())


def _arg(name: str) -> str:
    return name + "_" if name in _JULIA_KEYWORDS else name


def generate(header_path: Path) -> str:
    h = mh.parse(header_path)
    rel = header_path.resolve().relative_to(ROOT) if header_path.resolve().is_relative_to(ROOT) else header_path
    out = [
        f"# LibMXQ.jl: GENERATED from {rel} by tools/gen_julia_bindings.py. Do not edit;\n",
        "# regenerate with `python3 tools/gen_julia_bindings.py` (CI fails when this file is stale).\n",
        "# One declaration per C declaration, same names; `libmxq` is defined by the including module.\n",
    ]
    tags_done = set()
    for item in h.items:
        out.append("\n")
        if isinstance(item, mh.Opaque):
            out.append(_comment(item.doc))
            if item.tag not in tags_done:
                out.append(f"mutable struct {item.tag} end\n")
                tags_done.add(item.tag)
            out.append(f"const {item.name} = Ptr{{{item.tag}}}\n")
        elif isinstance(item, mh.Enum):
            out.append(_comment(item.doc))
            out.append(f"const {item.name} = Cint\n")
            for m in item.members:
                doc = f"  # {m.doc.splitlines()[0]}" if m.doc else ""
                out.append(f"const {m.name} = {item.name}({m.value}){doc}\n")
        elif isinstance(item, mh.Struct):
            out.append(_comment(item.doc))
            out.append(f"struct {item.name}\n")
            for f in item.fields:
                out.append(f"    {f.name}::{julia_type(f.type, h)}\n")
            out.append("end\n")
        elif isinstance(item, mh.FuncPtr):
            sig = ", ".join(f"{p.name}::{julia_type(p.type, h)}" for p in item.params)
            out.append(_comment(item.doc))
            out.append(f"# C signature: ({sig}) -> {julia_type(item.ret, h)}; make one with @cfunction.\n")
            out.append(f"const {item.name} = Ptr{{Cvoid}}\n")
        elif isinstance(item, mh.Function):
            args = ", ".join(_arg(p.name) for p in item.params)
            typed = ", ".join(f"{_arg(p.name)}::{julia_type(p.type, h)}" for p in item.params)
            out.append(_comment(item.doc))
            out.append(f"function {item.name}({args})\n")
            out.append(f"    @ccall libmxq.{item.name}({typed})::{julia_type(item.ret, h)}\n")
            out.append("end\n")
    exports = [i.name for i in h.items] + [m.name for e in h.enums for m in e.members] + sorted(tags_done)
    out.append("\n# Everything above is public, under its C name.\n")
    line = "export"
    for i, name in enumerate(exports):
        piece = (" " if i == 0 else ", ") + name
        if len(line) + len(piece) > 100:
            out.append(line + ",\n")
            line = "    " + name
        else:
            line += piece
    out.append(line + "\n")
    return "".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--header", type=Path, default=ROOT / "include" / "mxq" / "mxq.h")
    ap.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    ap.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on drift")
    a = ap.parse_args()
    text = generate(a.header)
    if a.check:
        current = a.output.read_text() if a.output.exists() else ""
        if current == text:
            print(f"julia bindings: {a.output.name} is up to date with {a.header.name}")
            return 0
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                                   str(a.output), "generated"))
        print(f"julia bindings: {a.output} is stale; run python3 tools/gen_julia_bindings.py", file=sys.stderr)
        return 1
    a.output.parent.mkdir(parents=True, exist_ok=True)
    a.output.write_text(text)
    print(f"wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
