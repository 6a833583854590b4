#!/usr/bin/env python3
"""Fails when a language binding's FFI declarations drift from include/mxq/mxq.h.

The header is read by tools/mxq_header.py (the one header parser); each binding's declarations are
then compared item by item with what the header implies for that language:
  rust:   bindings/rust/mxq-sys/src/lib.rs, read as text: every enum constant (name, type, value), every
          typedef (enum aliases, opaque handles, the callback), the mxqExecArg_t fields, and every
          `extern "C"` function (parameter names and types, return type); nothing extra either.
  python: bindings/python/mxq/_ffi.py, imported alone (no library load): enum members and values,
          attribute C types (read off the header's doc comment of each attribute), ExecArg fields,
          the log callback type and every function's ctypes prototype.
  both:   the version the binding claims (constants and package metadata) equals the CMake project
          version (Julia's Project.toml too, with --lang all).
Julia is generated, not hand-kept; bindings/julia/test.sh checks it.

    check_ffi_sync.py [--lang rust|python|all]     exit 0 in sync, 1 with one line per difference
"""

import argparse
import ctypes
import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import mxq_header as mh  # noqa: E402

HEADER = ROOT / "include" / "mxq" / "mxq.h"
RUST_SYS = ROOT / "bindings" / "rust" / "mxq-sys" / "src" / "lib.rs"
PY_FFI = ROOT / "bindings" / "python" / "mxq" / "_ffi.py"


# ---- Rust --------------------------------------------------------------------------------------------

_RUST_SCALARS = {"void": "c_void", "char": "c_char", "int": "c_int", "unsigned int": "c_uint", "float": "f32",
                 "double": "f64", "size_t": "usize", "int8_t": "i8", "uint8_t": "u8", "int16_t": "i16",
                 "uint16_t": "u16", "int32_t": "i32", "uint32_t": "u32", "int64_t": "i64", "uint64_t": "u64"}


def rust_type(t: mh.CType) -> str:
    s = _RUST_SCALARS.get(t.base, t.base)
    consts = (t.const,) + t.pointers  # const-ness of what each pointer level points to
    for level in range(len(t.pointers)):
        s = ("*const " if consts[level] else "*mut ") + s
    return s


def _norm(s: str) -> str:
    s = re.sub(r"\s+", " ", s.strip())
    return re.sub(r"\s*([(),<>:])\s*", r"\1", s).replace("->", " -> ").rstrip(",")


def _split_top(s: str):
    parts, depth, cur = [], 0, ""
    for ch in s:
        depth += ch in "(<"
        depth -= ch in ")>"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def _rust_params(params) -> str:
    return ", ".join(f"{p.name}: {rust_type(p.type)}" for p in params)


def _rust_ret(t: mh.CType) -> str:
    return "" if (t.base == "void" and not t.pointers) else f" -> {rust_type(t)}"


def check_rust(h: mh.Header, version) -> list:
    src = RUST_SYS.read_text()
    code = re.sub(r"//[^\n]*", "", src)
    errs = []

    consts = {m.group(1): (m.group(2), m.group(3).strip())
              for m in re.finditer(r"pub const (\w+)\s*:\s*(\w+)\s*=\s*([^;]+);", code)}
    types = {m.group(1): _norm(m.group(2)) for m in re.finditer(r"pub type (\w+)\s*=\s*([^;]+);", code)}
    opaque_block = re.search(r"opaque!\s*\{(.*?)\}", code, re.S)
    opaques = dict(re.findall(r"(\w+)\s*=>\s*(\w+)", opaque_block.group(1))) if opaque_block else {}
    for tag, name in opaques.items():
        types[name] = f"*mut {tag}"
    ext = re.search(r'extern "C" \{(.*?)\n\}', code, re.S)
    fns = {}
    for m in re.finditer(r"pub fn (\w+)\s*\((.*?)\)\s*(->\s*[^;]+)?;", ext.group(1) if ext else "", re.S):
        fns[m.group(1)] = (_norm(", ".join(_split_top(m.group(2)))), _norm(m.group(3) or ""))

    expected_consts = {}
    for e in h.enums:
        if types.get(e.name) != "c_int":
            errs.append(f"rust: pub type {e.name} should be c_int (is {types.get(e.name)!r})")
        for m in e.members:
            expected_consts[m.name] = (e.name, str(m.value))
    for o in h.opaques:
        if opaques.get(o.tag) != o.name:
            errs.append(f"rust: opaque! should declare {o.tag} => {o.name}")
    for f in h.funcptrs:
        want = _norm(f'Option<unsafe extern "C" fn({_rust_params(f.params)}){_rust_ret(f.ret)}>')
        if types.get(f.name) != want:
            errs.append(f"rust: pub type {f.name} = {types.get(f.name)!r}, header implies {want!r}")
    for s in h.structs:
        body = re.search(r"pub struct %s\s*\{(.*?)\}" % s.name, code, re.S)
        got = [_norm(x) for x in re.findall(r"pub (\w+\s*:\s*[^,]+),", body.group(1))] if body else None
        want = [_norm(f"{p.name}: {rust_type(p.type)}") for p in s.fields]
        if got != want:
            errs.append(f"rust: struct {s.name} fields {got}, header implies {want}")
        if body and "#[repr(C)]" not in code[max(0, body.start() - 80):body.start()]:
            errs.append(f"rust: struct {s.name} must be #[repr(C)]")

    for name, (typ, val) in sorted(expected_consts.items()):
        if name not in consts:
            errs.append(f"rust: missing pub const {name}: {typ} = {val};")
        elif consts[name] != (typ, val):
            errs.append(f"rust: {name} is {consts[name][0]} = {consts[name][1]}, header says {typ} = {val}")
    vnames = {"MXQ_VERSION_MAJOR": version[0], "MXQ_VERSION_MINOR": version[1], "MXQ_VERSION_PATCH": version[2]}
    for name, v in vnames.items():
        if consts.get(name, (None, None))[1] != str(v):
            errs.append(f"rust: {name} should be {v} (CMake project version)")
    for name in sorted(set(consts) - set(expected_consts) - set(vnames) - {"MXQ_VERSION"}):
        errs.append(f"rust: pub const {name} is not in the header")

    for f in h.functions:
        want = (_norm(_rust_params(f.params)), _norm(_rust_ret(f.ret)))
        if f.name not in fns:
            errs.append(f"rust: missing extern fn {f.name}({want[0]}){want[1]}")
        elif fns[f.name] != want:
            errs.append(f"rust: fn {f.name}({fns[f.name][0]}){fns[f.name][1]}; header implies ({want[0]}){want[1]}")
    for name in sorted(set(fns) - {f.name for f in h.functions}):
        errs.append(f"rust: extern fn {name} is not in the header")
    return errs


# ---- Python ------------------------------------------------------------------------------------------

def load_py_ffi():
    spec = importlib.util.spec_from_file_location("mxq_ffi_under_check", PY_FFI)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def py_ctype(t: mh.CType, h: mh.Header, ffi, is_return=False):
    kind = h.kind_of(t.base)
    if t.pointers:
        inner = t.pointee()
        if inner.base == "char" and not inner.pointers:
            return ctypes.c_char_p
        if inner.base == "void" and not inner.pointers:
            return ctypes.c_void_p
        if kind == "struct" and not inner.pointers and t.base == "mxqExecArg_t":
            return ctypes.POINTER(ffi.ExecArg)
        return ctypes.POINTER(py_ctype(inner, h, ffi))
    if kind == "enum":
        return ctypes.c_int
    if kind == "opaque":
        return ctypes.c_void_p
    if kind == "funcptr":
        return ffi.LogCallback if t.base == "mxqLogCallback_t" else None
    scalars = {"void": None, "int": ctypes.c_int, "size_t": ctypes.c_size_t, "int32_t": ctypes.c_int32,
               "int64_t": ctypes.c_int64, "uint32_t": ctypes.c_uint32, "float": ctypes.c_float,
               "double": ctypes.c_double}
    if t.base not in scalars:
        raise mh.HeaderError(f"no ctypes mapping for {t}: extend py_ctype")
    return scalars[t.base]


def _cname(c) -> str:
    return getattr(c, "__name__", repr(c))


def check_python(h: mh.Header, version) -> list:
    ffi = load_py_ffi()
    errs = []
    if tuple(ffi.HEADER_VERSION) != tuple(version):
        errs.append(f"python: HEADER_VERSION {ffi.HEADER_VERSION} != CMake project version {version}")
    if set(ffi.ENUMS) != {e.name for e in h.enums}:
        errs.append(f"python: ENUMS keys differ from the header's enums: "
                    f"extra {sorted(set(ffi.ENUMS) - {e.name for e in h.enums})}, "
                    f"missing {sorted({e.name for e in h.enums} - set(ffi.ENUMS))}")
    for e in h.enums:
        cls = ffi.ENUMS.get(e.name)
        if cls is None:
            continue
        got = {e.prefix() + n: int(v) for n, v in cls.__members__.items()}
        want = {m.name: m.value for m in e.members}
        for n in sorted(set(got) | set(want)):
            if got.get(n) != want.get(n):
                errs.append(f"python: {cls.__name__}: {n} is {got.get(n)}, header says {want.get(n)}")
        if cls in ffi.ATTR_CTYPES:
            for m in e.members:
                doc_type = re.match(r"(int32_t|int64_t|float)\b", m.doc)
                want_t = {"int32_t": ctypes.c_int32, "int64_t": ctypes.c_int64, "float": ctypes.c_float}.get(
                    doc_type.group(1) if doc_type else "")
                got_t = ffi.ATTR_CTYPES[cls].get(cls.__members__.get(m.name[len(e.prefix()):]))
                if want_t is None:
                    errs.append(f"header: {m.name}'s doc comment does not start with its C type")
                elif got_t is not want_t:
                    errs.append(f"python: ATTR_CTYPES {m.name} is {_cname(got_t)}, header documents "
                                f"{_cname(want_t)}")
    for s in h.structs:
        got = [(n, t) for n, t in ffi.ExecArg._fields_] if s.name == "mxqExecArg_t" else None
        want = [(p.name, py_ctype(p.type, h, ffi)) for p in s.fields]
        if got != want:
            errs.append(f"python: struct {s.name} fields {got} != {want}")
    for f in h.funcptrs:
        want = (py_ctype(f.ret, h, ffi), [py_ctype(p.type, h, ffi) for p in f.params])
        cb = ffi.LogCallback if f.name == "mxqLogCallback_t" else None
        if cb is None or (cb._restype_, list(cb._argtypes_)) != want:
            errs.append(f"python: callback type for {f.name} does not match the header")
    for f in h.functions:
        want = (py_ctype(f.ret, h, ffi, True), [py_ctype(p.type, h, ffi) for p in f.params])
        got = ffi.PROTOTYPES.get(f.name)
        if got is None:
            errs.append(f"python: PROTOTYPES lacks {f.name}")
        elif (got[0], list(got[1])) != want:
            errs.append(f"python: {f.name} prototype ({_cname(got[0])}, {[_cname(c) for c in got[1]]}) != "
                        f"header ({_cname(want[0])}, {[_cname(c) for c in want[1]]})")
    for name in sorted(set(ffi.PROTOTYPES) - {f.name for f in h.functions}):
        errs.append(f"python: PROTOTYPES has {name}, which is not in the header")
    return errs


def check_package_versions(version, langs) -> list:
    """Each binding's package metadata carries the library version it was written for."""
    want = "%d.%d.%d" % tuple(version)
    sources = {
        "rust": [(ROOT / "bindings/rust/Cargo.toml", r'\[workspace\.package\][^\[]*?\bversion\s*=\s*"([^"]+)"')],
        "python": [(ROOT / "bindings/python/pyproject.toml", r'^version\s*=\s*"([^"]+)"'),
                   (ROOT / "bindings/python/mxq/__init__.py", r'^__version__\s*=\s*"([^"]+)"')],
        "julia": [(ROOT / "bindings/julia/Project.toml", r'^version\s*=\s*"([^"]+)"')],
    }
    errs = []
    for lang in langs:
        for path, pattern in sources[lang]:
            m = re.search(pattern, path.read_text(), re.M | re.S)
            if not m or m.group(1) != want:
                errs.append(f"{lang}: {path.relative_to(ROOT)} says version {m.group(1) if m else None}, "
                            f"the CMake project is {want}")
    return errs


def main() -> int:
    ap = argparse.ArgumentParser(description="FFI drift check against include/mxq/mxq.h")
    ap.add_argument("--lang", choices=("rust", "python", "all"), default="all")
    a = ap.parse_args()
    h = mh.parse(HEADER)
    version = mh.project_version(ROOT / "CMakeLists.txt")
    errs = []
    if a.lang in ("rust", "all"):
        errs += check_rust(h, version)
    if a.lang in ("python", "all"):
        errs += check_python(h, version)
    errs += check_package_versions(version, ("rust", "python", "julia") if a.lang == "all" else (a.lang,))
    for e in errs:
        print(e)
    n_items = len(h.functions), sum(len(e.members) for e in h.enums)
    print(f"ffi sync ({a.lang}): {n_items[0]} functions, {n_items[1]} enum constants checked, "
          f"{len(errs)} difference(s)")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
