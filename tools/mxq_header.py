"""Reads include/mxq/mxq.h into a small declaration model: enums, structs, opaque handles, the
callback typedef and the exported functions, in header order, with their doc comments.

Every language binding is checked against (or generated from) this model, so it is the one place
that understands the header. It is deliberately a strict little parser and not a C front end: it
follows the header's own conventions (typedef'd enums with literal values, `MXQ_API` before every
function, no macros in declarations) and raises HeaderError on anything else, so a header change
that the bindings cannot follow mechanically fails loudly instead of being skipped. Standard
library only (it runs in CI and in generators with no extra packages).
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path
from typing import Dict, List, Optional, Tuple

# Macros the FFI convention treats as defined and empty (docs/quickstart-*.md: consumers parse the
# header with MXQ_API defined empty).
EMPTY_MACROS = ("MXQ_API",)

_BASE_WORDS = {"void", "char", "short", "int", "long", "signed", "unsigned", "float", "double", "_Bool"}


class HeaderError(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class CType:
    base: str                     # "void", "char", "int64_t", "mxqHandle_t", "unsigned int", ...
    const: bool = False           # the base type is const-qualified
    pointers: Tuple[bool, ...] = ()  # one entry per '*', outermost last; True = that pointer is const

    @property
    def is_pointer(self) -> bool:
        return bool(self.pointers)

    def pointee(self) -> "CType":
        if not self.pointers:
            raise HeaderError(f"{self} is not a pointer")
        return CType(self.base, self.const, self.pointers[:-1])

    def __str__(self) -> str:
        s = ("const " if self.const else "") + self.base
        for c in self.pointers:
            s += " *" + (" const" if c else "")
        return s


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    type: CType


@dataclasses.dataclass
class EnumMember:
    name: str
    value: int
    doc: str = ""


@dataclasses.dataclass
class Enum:
    name: str
    members: List[EnumMember]
    doc: str = ""

    def prefix(self) -> str:
        """Common prefix of the member names, cut after an underscore (MXQ_STATUS_ for mxqStatus_t)."""
        names = [m.name for m in self.members]
        p = names[0]
        for n in names[1:]:
            while not n.startswith(p):
                p = p[:-1]
        if len(names) == 1:
            p = p[: p.rfind("_")]
        return p[: p.rfind("_") + 1]


@dataclasses.dataclass
class Struct:
    name: str
    fields: List[Param]
    doc: str = ""


@dataclasses.dataclass
class Opaque:
    """typedef struct tag *name; (tag is never defined: an opaque handle)."""
    name: str
    tag: str
    doc: str = ""


@dataclasses.dataclass
class FuncPtr:
    name: str
    ret: CType
    params: List[Param]
    doc: str = ""


@dataclasses.dataclass
class Function:
    name: str
    ret: CType
    params: List[Param]
    doc: str = ""


@dataclasses.dataclass
class Header:
    items: list  # every declaration above, in header order
    macros: Dict[str, str]  # object-like macros #defined in active regions (name -> replacement)

    def _of(self, cls):
        return [i for i in self.items if isinstance(i, cls)]

    @property
    def enums(self) -> List[Enum]:
        return self._of(Enum)

    @property
    def structs(self) -> List[Struct]:
        return self._of(Struct)

    @property
    def opaques(self) -> List[Opaque]:
        return self._of(Opaque)

    @property
    def funcptrs(self) -> List[FuncPtr]:
        return self._of(FuncPtr)

    @property
    def functions(self) -> List[Function]:
        return self._of(Function)

    def kind_of(self, typename: str) -> str:
        """'enum', 'struct', 'opaque', 'funcptr' or 'builtin' for a type name used in a CType."""
        for item in self.items:
            if item.name == typename:
                return {Enum: "enum", Struct: "struct", Opaque: "opaque", FuncPtr: "funcptr"}[type(item)]
        return "builtin"


# ---- lexical pass: comments and the preprocessor ---------------------------------------------------

def _strip_comments(text: str):
    """Blank out comments (keeping offsets and newlines); return (text, [(start, end, doc, trailing)])."""
    out = list(text)
    docs = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise HeaderError("unterminated comment")
            body = text[i + 2:j]
            if body.startswith("*") and not body.startswith("**"):
                trailing = body.startswith("*<")
                docs.append((i, j + 2, _clean_doc(body[2:] if trailing else body[1:]), trailing))
            for k in range(i, j + 2):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return "".join(out), docs


def _clean_doc(body: str) -> str:
    lines = [re.sub(r"^\s*\*?", "", l).rstrip() for l in body.strip().splitlines()]
    return (lines[0].strip() + "\n" + textwrap.dedent("\n".join(lines[1:]))).strip()


def _eval_condition(expr: str, defined: Dict[str, str]) -> bool:
    expr = re.sub(r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
                  lambda m: "1" if (m.group(1) or m.group(2)) in defined else "0", expr)
    expr = re.sub(r"[A-Za-z_]\w*", lambda m: defined.get(m.group(0), "0") or "0", expr)
    py = expr.replace("&&", " and ").replace("||", " or ")
    py = re.sub(r"!(?!=)", " not ", py)
    if not re.fullmatch(r"[\d\s()<>=!andortn]*", py):
        raise HeaderError(f"unsupported #if expression: {expr!r}")
    return bool(eval(py, {"__builtins__": {}}, {}))  # digits and operators only, checked above


def _preprocess(text: str):
    """Blank directives and inactive regions; return (text, macros, function-like macro names)."""
    defined: Dict[str, str] = {m: "" for m in EMPTY_MACROS}
    macros: Dict[str, str] = {}
    funclike: List[str] = []
    stack: List[Tuple[bool, bool]] = []  # (region active, a branch of this #if was already taken)
    lines = text.split("\n")
    for idx, line in enumerate(lines):
        active = all(a for a, _ in stack)
        s = line.strip()
        if s.startswith("#"):
            m = re.match(r"#\s*(\w+)\s*(.*)", s)
            d, rest = (m.group(1), m.group(2).strip()) if m else ("", "")
            parent = all(a for a, _ in stack)
            if d in ("ifdef", "ifndef", "if"):
                if not parent:
                    stack.append((False, True))
                else:
                    if d == "if":
                        cond = _eval_condition(rest, defined)
                    else:
                        cond = (rest in defined) == (d == "ifdef")
                    stack.append((cond, cond))
            elif d in ("elif", "else"):
                if not stack:
                    raise HeaderError(f"#{d} without #if")
                _, taken = stack.pop()
                parent = all(a for a, _ in stack)
                cond = parent and not taken and (d == "else" or _eval_condition(rest, defined))
                stack.append((cond, taken or cond))
            elif d == "endif":
                if not stack:
                    raise HeaderError("#endif without #if")
                stack.pop()
            elif active and d == "define":
                dm = re.match(r"(\w+)(\()?\s*(.*)", rest)
                if dm.group(2):
                    funclike.append(dm.group(1))
                else:
                    defined[dm.group(1)] = dm.group(3)
                    macros[dm.group(1)] = dm.group(3)
            elif active and d == "undef":
                defined.pop(rest, None)
            elif active and d not in ("include", "pragma", ""):
                raise HeaderError(f"unsupported directive #{d}")
            lines[idx] = " " * len(line)
        elif not active:
            lines[idx] = " " * len(line)
    if stack:
        raise HeaderError("unterminated #if")
    return "\n".join(lines), macros, funclike


# ---- declarations ----------------------------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z_]\w*|0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[{}()\[\];,*=]|<<|>>|[-+|&~<>]|\S")


def _tokens(text: str):
    return [(m.group(0), m.start()) for m in _TOKEN.finditer(text)]


def _parse_type(toks: List[str], where: str) -> CType:
    base_words, const, pointers = [], False, []
    for t in toks:
        if t == "const":
            if pointers:
                pointers[-1] = True
            else:
                const = True
        elif t == "*":
            pointers.append(False)
        elif t in ("struct", "enum"):
            raise HeaderError(f"{where}: use the typedef name, not '{t} tag'")
        elif re.fullmatch(r"[A-Za-z_]\w*", t) and not pointers:
            base_words.append(t)
        else:
            raise HeaderError(f"{where}: unexpected token {t!r} in type {' '.join(toks)!r}")
    if not base_words or (len(base_words) > 1 and not set(base_words) <= _BASE_WORDS):
        raise HeaderError(f"{where}: cannot read type {' '.join(toks)!r}")
    return CType(" ".join(base_words), const, tuple(pointers))


def _split(toks: List[str], sep: str) -> List[List[str]]:
    parts, cur, depth = [], [], 0
    for t in toks:
        if t in "({[":
            depth += 1
        elif t in ")}]":
            depth -= 1
        if t == sep and depth == 0:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    parts.append(cur)
    return parts


def _parse_params(toks: List[str], where: str) -> List[Param]:
    if toks == ["void"]:
        return []
    if not toks:
        raise HeaderError(f"{where}: write (void) for an empty parameter list")
    params = []
    for p in _split(toks, ","):
        if len(p) < 2 or not re.fullmatch(r"[A-Za-z_]\w*", p[-1]) or p[-1] in _BASE_WORDS | {"const"}:
            raise HeaderError(f"{where}: every parameter needs a type and a name: {' '.join(p)!r}")
        params.append(Param(p[-1], _parse_type(p[:-1], where)))
    return params


def _int_literal(t: str) -> int:
    return int(t.rstrip("uUlL"), 0)


def _parse_enum(name: str, body: List[Tuple[str, int]], body_end: int, docs, doc: str) -> Enum:
    # Group the body's tokens into enumerators, remembering where each one starts: a trailing
    # /**< */ comment documents the enumerator whose span [start, next start) contains it.
    entries: List[List[Tuple[str, int]]] = [[]]
    for tok in body:
        if tok[0] == ",":
            entries.append([])
        else:
            entries[-1].append(tok)
    if not entries[-1]:
        entries.pop()  # trailing comma
    members: List[EnumMember] = []
    values: Dict[str, int] = {}
    nxt = 0
    for k, entry in enumerate(entries):
        e = [t for t, _ in entry]
        if not e:
            raise HeaderError(f"{name}: empty enumerator")
        if len(e) == 1:
            value = nxt
        elif e[1] == "=" and len(e) == 3:
            value = _int_literal(e[2]) if e[2][0].isdigit() else values.get(e[2])
        elif e[1] == "=" and len(e) == 4 and e[2] == "-" and e[3][0].isdigit():
            value = -_int_literal(e[3])
        else:
            value = None
        if value is None:
            raise HeaderError(f"{name}.{e[0]}: enumerator values must be integer literals")
        values[e[0]] = value
        nxt = value + 1
        span_end = entries[k + 1][0][1] if k + 1 < len(entries) else body_end
        mdoc = next((d for ds, _, d, trailing in docs if trailing and entry[0][1] < ds < span_end), "")
        members.append(EnumMember(e[0], value, mdoc))
    return Enum(name, members, doc)


def parse(path) -> Header:
    raw = Path(path).read_text()
    raw = re.sub(r"\\\n", "  ", raw)  # line continuations, offsets kept
    text, docs = _strip_comments(raw)
    text, macros, funclike = _preprocess(text)
    if funclike:
        raise HeaderError(f"function-like macros are not FFI-parseable: {', '.join(funclike)}")
    toks = _tokens(text)
    items: list = []
    decl: List[Tuple[str, int]] = []
    depth = 0
    last_end = 0
    for t, pos in toks:
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
        if t == ";" and depth == 0:
            item = _parse_decl(decl, docs, last_end) if decl else None
            if item is not None:  # a forward declaration leaves its doc to the typedef after it
                items.append(item)
                last_end = pos + 1
            decl = []
        else:
            decl.append((t, pos))
    if decl:
        raise HeaderError(f"declaration without ';' at offset {decl[0][1]}")
    return Header(items, macros)


def _leading_doc(docs, start: int, prev_end: int) -> str:
    best = ""
    for ds, de, dtext, trailing in docs:
        if not trailing and prev_end <= ds and de <= start:
            best = dtext
    return best


def _parse_decl(decl: List[Tuple[str, int]], docs, prev_end: int):
    words = [t for t, _ in decl]
    doc = _leading_doc(docs, decl[0][1], prev_end)
    where = " ".join(words[:6])
    if words[0] == "struct" and len(words) == 2:
        return None  # forward declaration of a tag used by an opaque typedef
    if words[0] == "typedef":
        if words[1] == "enum":
            if "{" not in words:
                raise HeaderError(f"{where}: enums must be defined in their typedef")
            ob = words.index("{")
            cb = len(words) - 1 - words[::-1].index("}")
            if cb != len(words) - 2:
                raise HeaderError(f"{where}: expected 'typedef enum {{...}} name'")
            return _parse_enum(words[-1], decl[ob + 1:cb], decl[cb][1], docs, doc)
        if words[1] == "struct" and "{" in words:
            ob = words.index("{")
            cb = len(words) - 1 - words[::-1].index("}")
            if cb != len(words) - 2:
                raise HeaderError(f"{where}: expected 'typedef struct {{...}} name'")
            fields = []
            for f in _split(words[ob + 1:cb], ";"):
                if f:
                    fields += _parse_params(f, words[-1])
            return Struct(words[-1], fields, doc)
        if words[1] == "struct" and len(words) == 5 and words[3] == "*":
            return Opaque(words[4], words[2], doc)
        if "(" in words and words[words.index("(") + 1] == "*":
            lp = words.index("(")
            name = words[lp + 2]
            if words[lp + 3] != ")" or words[lp + 4] != "(" or words[-1] != ")":
                raise HeaderError(f"{where}: cannot read function pointer typedef")
            return FuncPtr(name, _parse_type(words[1:lp], name), _parse_params(words[lp + 5:-1], name), doc)
        raise HeaderError(f"{where}: unsupported typedef")
    if words[0] not in EMPTY_MACROS:
        raise HeaderError(f"{where}: functions must be declared with MXQ_API")
    words = words[1:]
    if "(" not in words or words[-1] != ")":
        raise HeaderError(f"{where}: unsupported declaration")
    lp = words.index("(")
    name = words[lp - 1]
    return Function(name, _parse_type(words[:lp - 1], name), _parse_params(words[lp + 1:-1], name), doc)


def project_version(cmakelists) -> Tuple[int, int, int]:
    """The version in the top-level CMakeLists.txt `project(mxq VERSION x.y.z ...)` call."""
    m = re.search(r"project\s*\(\s*mxq\s+VERSION\s+(\d+)\.(\d+)\.(\d+)", Path(cmakelists).read_text())
    if not m:
        raise HeaderError("no 'project(mxq VERSION x.y.z' in CMakeLists.txt")
    return tuple(int(g) for g in m.groups())


if __name__ == "__main__":  # a readable dump, for eyeballing what the bindings see
    import sys
    h = parse(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "include/mxq/mxq.h")
    for item in h.items:
        if isinstance(item, Enum):
            print(f"enum {item.name} [{item.prefix()}]: " + ", ".join(f"{m.name}={m.value}" for m in item.members))
        elif isinstance(item, (Function, FuncPtr)):
            print(f"{type(item).__name__.lower()} {item.ret} {item.name}(" +
                  ", ".join(f"{p.type} {p.name}" for p in item.params) + ")")
        elif isinstance(item, Struct):
            print(f"struct {item.name} {{" + "; ".join(f"{p.type} {p.name}" for p in item.fields) + "}")
        else:
            print(f"opaque {item.name} -> struct {item.tag}")
