"""Symbol and call lookup in source text with py-tree-sitter and per-language grammar packages.

Languages are chosen by file extension: ``.java`` (tree_sitter_java), ``.py``/``.pyi``
(tree_sitter_python), ``.ts``/``.mts``/``.cts`` and ``.tsx`` (tree_sitter_typescript),
``.js``/``.mjs``/``.cjs``/``.jsx`` (tree_sitter_javascript), ``.go`` (tree_sitter_go), ``.rs``
(tree_sitter_rust), ``.rb``/``.rake`` (tree_sitter_ruby); ``.tcl`` without a grammar (its ``proc NAME``
definitions, a line each, to the line that closes the body); ``.kt``/``.kts`` without a grammar, by their lines
(:func:`_kotlin_parsed`: the package, classes, objects, functions, properties); ``.cs`` likewise
(:func:`_csharp_parsed`: the namespace, types, methods). Other files have no symbols (lookups return
``None`` / empty).

Symbols are definitions only, named by their dotted qualified name inside the file:
``RuleRegistry``, ``RuleRegistry.resolve``, ``Outer.Inner.method``; Python ``Class.method``,
``function``, ``outer.inner``; TS/JS classes, interfaces, type aliases, enums, namespaces,
functions, class methods and fields holding functions (``Router.route``), the fields interfaces and
object type aliases declare (``TestEnvironment.mockIpcRenderer``), top-level
``const``s and function-valued ``let``/``var``s; Go functions, methods qualified by receiver
type (``func (r *Router) Route()`` is ``Router.Route``), each ``type`` spec, interface methods
(``Reader.Read``), top-level ``const``/``var`` names; Rust fns, structs, enums, unions,
traits, type aliases, mods, consts, statics, ``macro_rules!``, methods of ``impl [Trait for]
Type`` as ``Type.method`` (generics and paths stripped) and trait items as ``Trait.method``; Ruby
classes and modules (``class Account::Entry`` is ``Account.Entry``, as is ``Entry`` inside ``module
Account``), ``def`` and ``def self.`` methods, and constants assigned in a class, module or at top level.
Mentions in comments, strings or docs are never symbols. Calls (:meth:`SymbolIndex.call_sites`)
are found in every language.

A lookup name matches a symbol when it is a dotted suffix of its qualified
name (``resolve`` finds ``RuleRegistry.resolve``); a Java name may also carry the file's
package or a trailing part of it (``com.acme.order.validation.RuleRegistry.resolve``,
``validation.RuleRegistry``), and a Java ``package`` declaration defines the package
(``com.acme.order.validation``, at the declaration's line in each of its files), a name in another language its
module (``tools.BASH`` for ``BASH`` in ``tools.py``; the folder for ``__init__.py``, ``mod.rs``,
``index.ts``, ``lib.rs``; a Go name its package clause, ``digraph.DAG``). Python module-level assignments (``PROMPT_FILES = {...}``) are definitions, and so
is a package's re-export under a new name (``from .handler import LangchainHandler as CallbackHandler`` at
the top of an ``__init__.py`` defines ``CallbackHandler``; a plain import defines nothing). With several matches the exact
qualified name wins, then the shallowest, then the first in the file (Java overloads).

Parse results are cached (LRU) by a caller-given key such as the git blob id, or by a hash of
the content.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from memtui.domain.spans import split_lines

__all__ = ["SymbolSpan", "SymbolIndex", "language_for", "find_symbol", "calls_in", "call_sites",
           "default_index"]

_EXTENSIONS = {".java": "java", ".py": "python", ".pyi": "python",
               ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
               ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
               ".go": "go", ".rs": "rust", ".rb": "ruby", ".rake": "ruby", ".tcl": "tcl",
               ".kt": "kotlin", ".kts": "kotlin", ".cs": "csharp"}

_DECLS = {
    "java": ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
             "annotation_type_declaration", "method_declaration", "constructor_declaration",
             "compact_constructor_declaration", "annotation_type_element_declaration",
             "enum_constant"),
    "python": ("class_definition", "function_definition", "assignment", "aliased_import"),
    "typescript": ("class_declaration", "abstract_class_declaration", "interface_declaration",
                   "type_alias_declaration", "enum_declaration", "function_declaration",
                   "generator_function_declaration", "function_signature", "method_definition",
                   "abstract_method_signature", "method_signature", "variable_declarator",
                   "public_field_definition", "internal_module", "module", "property_signature"),
    "javascript": ("class_declaration", "function_declaration", "generator_function_declaration",
                   "method_definition", "variable_declarator", "field_definition"),
    "go": ("function_declaration", "method_declaration", "type_spec", "type_alias", "method_elem",
           "const_spec", "var_spec"),
    "rust": ("function_item", "function_signature_item", "struct_item", "enum_item", "union_item",
             "trait_item", "type_item", "mod_item", "const_item", "static_item", "macro_definition",
             "associated_type"),
    "ruby": ("class", "module", "method", "singleton_method", "assignment"),
}
_DECLS["tsx"] = _DECLS["typescript"]
# Ancestors whose names qualify the definitions inside them (Java/Python: every declaration).
_SCOPES = {lang: frozenset(types) for lang, types in _DECLS.items()}
_SCOPES["rust"] = _SCOPES["rust"] | {"impl_item"}
_SCOPES["ruby"] = frozenset({"class", "module"})
_CALLS = {
    "java": "(method_invocation) @call (object_creation_expression) @new (method_reference) @ref",
    "python": "(call) @call",
    "typescript": "(call_expression) @call (new_expression) @new",
    "javascript": "(call_expression) @call (new_expression) @new",
    "go": "(call_expression) @call",
    "rust": "(call_expression) @call",
    "ruby": "(call) @call",
}
_CALLS["tsx"] = _CALLS["typescript"]
_NAME_TYPES = frozenset({"identifier", "type_identifier", "property_identifier",
                         "private_property_identifier", "field_identifier", "nested_identifier",
                         "constant", "scope_resolution"})
_FUNC_VALUES = frozenset({"arrow_function", "function_expression", "function",
                          "generator_function", "class"})
# Leading siblings that belong to a definition's span (TS/JS class-member decorators, Rust attributes).
_LEADING = {"typescript": "decorator", "tsx": "decorator", "javascript": "decorator",
            "rust": "attribute_item"}
_DOTTED = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$")


@dataclass(frozen=True)
class SymbolSpan:
    """A symbol found in a file: 1-based inclusive lines of its declaration (Python decorators
    included), and ``text``, the exact text of those whole lines (each with its ``"\\n"``, the
    last one without when the file does not end with one). ``name`` is its qualified name."""

    start_line: int
    end_line: int
    text: str
    name: str = ""


def language_for(path: str) -> str | None:
    """The language of ``path`` by extension (``"java"``, ``"python"``, ``"typescript"``,
    ``"tsx"``, ``"javascript"``, ``"go"``, ``"rust"``, ``"ruby"``), or ``None``."""
    name = (path or "").rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return _EXTENSIONS.get(name[dot:].lower()) if dot > 0 else None


class _Lang:
    def __init__(self, name: str) -> None:
        from tree_sitter import Language, Parser, Query

        if name == "java":
            import tree_sitter_java as grammar
        elif name == "python":
            import tree_sitter_python as grammar
        elif name == "javascript":
            import tree_sitter_javascript as grammar
        elif name == "go":
            import tree_sitter_go as grammar
        elif name == "rust":
            import tree_sitter_rust as grammar
        elif name == "ruby":
            import tree_sitter_ruby as grammar
        else:
            import tree_sitter_typescript as grammar
        self.name = name
        self.language = Language(grammar.language_tsx() if name == "tsx" else
                                 grammar.language_typescript() if name == "typescript" else
                                 grammar.language())
        self.parser = Parser(self.language)
        self.decl_query = Query(self.language, "[" + " ".join(f"({t})" for t in _DECLS[name]) + "] @decl")
        self.call_query = Query(self.language, _CALLS[name])


@dataclass
class _Symbol:
    qualname: tuple[str, ...]
    start: int  # 1-based
    end: int
    node: Any  # the declaration node


@dataclass
class _Parsed:
    lang: _Lang
    tree: Any
    lines: list[str]
    symbols: list[_Symbol]
    package: tuple[str, ...]
    by_name: dict[str, list[tuple[int, _Symbol]]] = None  # last name -> (order, symbol)


def _name_of(node) -> str | None:
    name = node.child_by_field_name("name")
    return name.text.decode("utf-8", "replace") if name is not None else None


def _lines_of(node) -> tuple[int, int]:
    start = node.start_point.row + 1
    end_row, end_col = node.end_point.row, node.end_point.column
    end = end_row if end_col == 0 and end_row > node.start_point.row else end_row + 1
    return start, end


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


def _ident(node) -> tuple[str, ...] | None:
    """The dotted parts of a name node (``A.B`` of a TS ``nested_identifier``), or ``None`` for
    anything that is not a plain identifier (strings, computed names, patterns)."""
    if node is None or node.type not in _NAME_TYPES:
        return None
    return tuple(p for p in re.split(r"\.|::", _text(node).replace(" ", "")) if p)


def _type_base(node) -> str | None:
    """The bare type name of a Go receiver / Rust ``impl`` type: ``*Router``, ``Router[T]``,
    ``foo::Router<T>``, ``&mut Router`` all give ``"Router"``; ``None`` for other shapes."""
    for _ in range(16):
        if node is None:
            return None
        if node.type in ("type_identifier", "identifier", "field_identifier"):
            return _text(node)
        if node.type in ("scoped_type_identifier", "qualified_type"):
            node = node.child_by_field_name("name")
        elif node.type in ("generic_type", "reference_type", "parenthesized_type", "pointer_type"):
            inner = node.child_by_field_name("type")
            node = inner if inner is not None else (node.named_children[-1] if node.named_children else None)
        else:
            return None
    return None


def _top_level(decl) -> bool:
    """Whether a TS/JS declaration statement sits at module level (possibly exported), or
    directly in a namespace body."""
    parent = decl.parent
    if parent is not None and parent.type == "export_statement":
        parent = parent.parent
    if parent is None:
        return False
    return parent.type == "program" or (parent.type == "statement_block" and parent.parent is not None
                                        and parent.parent.type in ("internal_module", "module"))


def _def_names(lang: str, node) -> list[tuple[str, ...]]:
    """Qualified-name parts a definition node contributes (several for ``var a, b``), ``[]``
    when the node is not a definition here (object-literal method, local variable, ...)."""
    t = node.type
    if lang == "go":
        if t == "method_declaration":
            name = _ident(node.child_by_field_name("name"))
            if name is None:
                return []
            recv = node.child_by_field_name("receiver")
            params = [c for c in recv.named_children if c.type == "parameter_declaration"] if recv else []
            base = _type_base(params[0].child_by_field_name("type")) if params else None
            return [((base,) if base else ()) + name]
        if t in ("const_spec", "var_spec"):
            decl = node.parent
            if decl is not None and decl.type == "var_spec_list":
                decl = decl.parent
            if decl is None or decl.parent is None or decl.parent.type != "source_file":
                return []
            return [n for n in (_ident(c) for c in node.children_by_field_name("name")) if n]
    elif lang == "ruby":
        if t == "assignment":  # FOO = ... in a class, module or at top level
            left, parent = node.child_by_field_name("left"), node.parent
            if left is None or left.type != "constant" or parent is None:
                return []
            if parent.type == "body_statement":
                parent = parent.parent
            return [(_text(left),)] if parent is not None and parent.type in ("program", "class", "module") else []
    elif lang in ("typescript", "tsx", "javascript"):
        if t == "variable_declarator":
            name, value, decl = _ident(node.child_by_field_name("name")), node.child_by_field_name("value"), node.parent
            if name is None or decl is None or not _top_level(decl):
                return []
            is_const = decl.type == "lexical_declaration" and decl.child_count > 0 \
                and decl.children[0].type == "const"
            return [name] if is_const or (value is not None and value.type in _FUNC_VALUES) else []
        if t in ("method_definition", "abstract_method_signature", "method_signature"):
            parent = node.parent
            owner = parent.parent if parent is not None else None
            # methods of classes and interfaces; of an object type a type alias names
            # (``type Mode = { shouldTrigger(): boolean }``); of an object literal a top-level
            # variable holds (``export const tagMode: Mode = { shouldTrigger() {...} }``)
            if parent is None or not (parent.type in ("class_body", "interface_body")
                                      or (parent.type == "object_type" and owner is not None
                                          and owner.type == "type_alias_declaration")
                                      or (parent.type == "object" and owner is not None
                                          and owner.type == "variable_declarator"
                                          and owner.parent is not None and _top_level(owner.parent))):
                return []
        elif t == "property_signature":  # a field an interface or an object type alias declares
            parent = node.parent
            owner = parent.parent if parent is not None else None
            if parent is None or not (parent.type == "interface_body" or (
                    parent.type == "object_type" and owner is not None and owner.type == "type_alias_declaration")):
                return []
        elif t in ("public_field_definition", "field_definition"):
            value = node.child_by_field_name("value")
            if value is None or value.type not in _FUNC_VALUES:
                return []
            name = _ident(node.child_by_field_name("name") or node.child_by_field_name("property"))
            return [name] if name else []
    name = _ident(node.child_by_field_name("name"))
    return [name] if name else []


def _scope_names(lang: str, node) -> tuple[str, ...]:
    """The qualifier an enclosing node gives the definitions inside it (``()`` for none)."""
    if node.type == "impl_item":
        base = _type_base(node.child_by_field_name("type"))
        return (base,) if base else ()
    names = _def_names(lang, node)
    return names[0] if names else ()


def _span_of(lang: str, node) -> tuple[int, int]:
    """1-based inclusive lines of a (non Java/Python) definition: a lone declarator/spec spans its
    whole declaration statement, ``export``/``declare`` wrappers are included, and so are
    leading TS/JS member decorators and Rust attributes."""
    span = node
    parent = node.parent
    if node.type == "variable_declarator" and parent is not None \
            and sum(c.type == "variable_declarator" for c in parent.named_children) == 1:
        span, parent = parent, parent.parent
    elif lang == "go" and node.type in ("type_spec", "type_alias", "const_spec", "var_spec") \
            and parent is not None and parent.type in ("type_declaration", "const_declaration", "var_declaration") \
            and len(parent.named_children) == 1:
        span, parent = parent, parent.parent
    if parent is not None and parent.type in ("export_statement", "ambient_declaration"):
        span = parent
    first = span
    leading = _LEADING.get(lang)
    prev = span.prev_named_sibling
    while leading and prev is not None and prev.type == leading:
        first, prev = prev, prev.prev_named_sibling
    return _lines_of(first)[0], _lines_of(span)[1]


def _wants(parsed: _Parsed, want: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The name parts to match: as given, then without the file's package or module prefix, or a
    trailing part of it (``acme.util.Assert`` or ``util.Assert`` in package ``com.acme.util``)."""
    pkg = parsed.package
    for k in range(len(pkg)):
        tail = pkg[k:]
        if len(want) > len(tail) and want[:len(tail)] == tail:
            return [want, want[len(tail):]]
    return [want]


_TCL_PROC = re.compile(r"^\s*proc\s+(?:::)?([A-Za-z_][\w]*(?:::[A-Za-z_][\w]*)*)\s")


def _tcl_parsed(text: str) -> _Parsed:
    """The ``proc`` definitions of a Tcl file (``proc ns::name {args} {`` is ``ns.name``), each from its
    line to the line where its braces balance again (or the end of the file); no parse tree, no calls."""
    lines = split_lines(text)
    symbols: list[_Symbol] = []
    for i, line in enumerate(lines):
        m = _TCL_PROC.match(line)
        if not m:
            continue
        depth, end = 0, len(lines)
        for j in range(i, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            if depth <= 0 and j > i or (depth == 0 and "{" in lines[j]):
                end = j + 1
                break
        symbols.append(_Symbol(tuple(m.group(1).split("::")), i + 1, end, None))
    by_name: dict[str, list[tuple[int, _Symbol]]] = {}
    for order, sym in enumerate(symbols):
        by_name.setdefault(sym.qualname[-1], []).append((order, sym))
    return _Parsed(None, None, lines, symbols, (), by_name)


_KT_PACKAGE = re.compile(r"^\s*package\s+([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_KT_DECL = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|internal|protected|open|abstract|sealed|data|enum|inner|"
    r"annotation|value|inline|override|suspend|operator|infix|tailrec|external|const|lateinit|companion|final|"
    r"actual|expect)\s+)*(class|interface|object|fun|typealias|val|var)\s+(?:<[^>]*>\s*)?"
    r"(?:[A-Za-z_][\w<>, ?]*\.)?([A-Za-z_]\w*)")


_CS_NAMESPACE = re.compile(r"^\s*namespace\s+([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_CS_MODS = (r"(?:\[[^\]]*\]\s*)*(?:(?:public|private|internal|protected|static|sealed|abstract|partial|readonly|"
            r"unsafe|new|virtual|override|async|extern|const|file|required)\s+)")
_CS_DECL = re.compile(
    r"^\s*" + _CS_MODS + r"*(?:(class|interface|struct|enum|record(?:\s+class|\s+struct)?)\s+([A-Za-z_]\w*)"
    r"|(?:delegate\s+)?(?![A-Za-z_]\w*\s*\()(?:[\w<>\[\],.?]+(?<!new)(?<!return))\s+([A-Za-z_]\w*)\s*(?:<[^>()]*>)?\s*\()")


def _kotlin_parsed(text: str) -> _Parsed:
    """Kotlin by its lines (no grammar installed): the ``package`` line defines the package; ``class``,
    ``interface``, ``object``, ``fun``, ``typealias`` and ``val``/``var`` outside function bodies are
    definitions, qualified by the classes and objects whose braces enclose them, each to the line where
    its braces balance again (its own line without a body); no parse tree, no calls."""
    def decl(line: str):
        m = _KT_DECL.match(line)
        return (m.group(1), m.group(2), m.end()) if m else None

    return _lines_parsed(text, _KT_PACKAGE, decl, ("fun", "val", "var"))


def _csharp_parsed(text: str) -> _Parsed:
    """C# by its lines (no grammar installed): a ``namespace`` (block or file-scoped) defines the namespace
    and qualifies nothing else; classes, interfaces, structs, enums, records and methods declared with a
    modifier (``public void Place(``) are definitions, qualified by the types enclosing them; no calls."""
    def decl(line: str):
        m = _CS_DECL.match(line)
        if not m or (m.group(3) and not re.match(r"^\s*" + _CS_MODS, line)):
            return None  # a method needs a modifier: ``var x = Foo(`` is a statement
        return (m.group(1) or "method", m.group(2) or m.group(3), m.end())

    return _lines_parsed(text, _CS_NAMESPACE, decl, ("method",))


def _lines_parsed(text: str, package_rx: re.Pattern, decl, body_kinds: tuple[str, ...]) -> _Parsed:
    """Definitions found line by line: ``package_rx`` the package line (a definition of the package),
    ``decl(line)`` -> (kind, name, end of the match) or None; a definition spans to the line where its
    braces (on its line or starting the next one) balance again; nothing inside a ``body_kinds`` body counts."""
    lines = split_lines(text)
    symbols: list[_Symbol] = []
    package: tuple[str, ...] = ()
    scopes: list[tuple[str, int, bool]] = []  # (name, last line, a function body)
    for i, line in enumerate(lines):
        while scopes and scopes[-1][1] < i + 1:
            scopes.pop()
        if not package and (pm := package_rx.match(line)):
            package = tuple(pm.group(1).split("."))
            symbols.append(_Symbol(package, i + 1, i + 1, None))
            continue
        found = decl(line)
        if not found or any(fn for _, _, fn in scopes):
            continue
        kind, name, at = found
        end, depth, first = i + 1, 0, None
        if "{" in line[at:] or (kind not in body_kinds and "{" in line):
            first = i
        elif i + 1 < len(lines) and lines[i + 1].lstrip().startswith("{"):
            first = i + 1
        if first is not None:
            for j in range(first, len(lines)):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth <= 0:
                    end = j + 1
                    break
            else:
                end = len(lines)
        symbols.append(_Symbol(tuple(s for s, _, _ in scopes) + (name,), i + 1, end, None))
        if end > i + 1:
            scopes.append((name, end, kind in body_kinds))
    by_name: dict[str, list[tuple[int, _Symbol]]] = {}
    for order, sym in enumerate(symbols):
        by_name.setdefault(sym.qualname[-1], []).append((order, sym))
    return _Parsed(None, None, lines, symbols, package, by_name)


class SymbolIndex:
    """Parses source text with tree-sitter, caching up to ``maxsize`` parse results (LRU).

    Methods take ``text`` (the whole file), ``path`` (for the language) and an optional
    ``key`` (e.g. the git blob id) naming the content for the cache; without a key the
    cache key is a SHA-1 of the text. ``parses`` counts real parses (cache misses).
    """

    def __init__(self, maxsize: int = 4096) -> None:
        self.maxsize = maxsize
        self.parses = 0
        self._cache: OrderedDict[tuple[str, str], _Parsed] = OrderedDict()
        self._langs: dict[str, _Lang] = {}

    def _lang(self, name: str) -> _Lang:
        if name not in self._langs:
            self._langs[name] = _Lang(name)
        return self._langs[name]

    def _parse(self, text: str, path: str, key: str | None) -> _Parsed | None:
        lang_name = language_for(path)
        if lang_name is None:
            return None
        data = text.encode("utf-8", "surrogateescape")
        init = path.rsplit("/", 1)[-1] == "__init__.py"
        ck = (lang_name, key or hashlib.sha1(data).hexdigest(), init)
        hit = self._cache.get(ck)
        if hit is not None:
            self._cache.move_to_end(ck)
            return hit
        if lang_name in ("tcl", "kotlin", "csharp"):
            parsed = {"tcl": _tcl_parsed, "kotlin": _kotlin_parsed, "csharp": _csharp_parsed}[lang_name](text)
            self._cache[ck] = parsed
            if len(self._cache) > self.maxsize:
                self._cache.popitem(last=False)
            return parsed
        from tree_sitter import QueryCursor

        lang = self._lang(lang_name)
        tree = lang.parser.parse(data)
        self.parses += 1
        decl_types = set(_DECLS[lang_name])
        symbols: list[_Symbol] = []
        captures = QueryCursor(lang.decl_query).captures(tree.root_node).get("decl", [])
        for node in sorted(captures, key=lambda n: (n.start_byte, -n.end_byte)):
            if lang_name not in ("java", "python"):
                self._add_definitions(lang_name, node, symbols)
                continue
            if node.type == "assignment":  # Python: NAME = ... at module level only
                left, stmt = node.child_by_field_name("left"), node.parent
                if left is not None and left.type == "identifier" and stmt is not None and \
                        stmt.type == "expression_statement" and stmt.parent is not None and stmt.parent.type == "module":
                    start, end = _lines_of(stmt)
                    symbols.append(_Symbol((_text(left),), start, end, node))
                continue
            if node.type == "aliased_import":  # a package's re-export under a new name (see the module doc)
                alias, name, stmt = node.child_by_field_name("alias"), node.child_by_field_name("name"), node.parent
                if init and alias is not None and name is not None and stmt is not None and \
                        stmt.type == "import_from_statement" and stmt.parent is not None and \
                        stmt.parent.type == "module" and _text(alias) != _text(name).rsplit(".", 1)[-1]:
                    start, end = _lines_of(stmt)
                    symbols.append(_Symbol((_text(alias),), start, end, node))
                continue
            name = _name_of(node)
            if not name:
                continue
            qual = [name]
            parent = node.parent
            while parent is not None:
                if parent.type in decl_types:
                    pname = _name_of(parent)
                    if pname:
                        qual.append(pname)
                parent = parent.parent
            span_node = node
            if node.parent is not None and node.parent.type == "decorated_definition":
                span_node = node.parent
            start, end = _lines_of(span_node)
            symbols.append(_Symbol(tuple(reversed(qual)), start, end, node))
        package: tuple[str, ...] = ()
        if lang_name == "java":
            for child in tree.root_node.named_children:
                if child.type == "package_declaration":
                    for sub in child.named_children:
                        if sub.type in ("scoped_identifier", "identifier"):
                            package = tuple(sub.text.decode("utf-8", "replace").split("."))
                    if package:  # the package declaration defines the package (``com.acme.orders``)
                        start, end = _lines_of(child)
                        symbols.insert(0, _Symbol(package, start, end, child))
                    break
        if lang_name == "go":  # ``digraph.DAG``: a Go name qualified by its package clause
            clause = next((c for c in tree.root_node.named_children if c.type == "package_clause"), None)
            ident = next((c for c in clause.named_children if c.type == "package_identifier"), None) if clause else None
            if ident is not None:
                package = (_text(ident),)
        if not package:  # ``tools.BASH``: a name qualified by its module (file stem, or folder for __init__.py)
            parts = path.rsplit("/", 2)
            stem = parts[-1].rsplit(".", 1)[0]
            package = ((parts[-2],) if len(parts) > 1 and stem in ("__init__", "mod", "index", "lib") else
                       (stem,))
        by_name: dict[str, list[tuple[int, _Symbol]]] = {}
        for order, sym in enumerate(symbols):
            by_name.setdefault(sym.qualname[-1], []).append((order, sym))
        parsed = _Parsed(lang, tree, split_lines(text), symbols, package, by_name)
        self._cache[ck] = parsed
        if len(self._cache) > self.maxsize:
            self._cache.popitem(last=False)
        return parsed

    @staticmethod
    def _add_definitions(lang: str, node, symbols: list[_Symbol]) -> None:
        names = _def_names(lang, node)
        if not names:
            return
        scopes = _SCOPES[lang]
        qual: tuple[str, ...] = ()
        parent = node.parent
        while parent is not None:
            if parent.type in scopes:
                qual = _scope_names(lang, parent) + qual
            parent = parent.parent
        start, end = _span_of(lang, node)
        for name in names:
            symbols.append(_Symbol(qual + name, start, end, node))

    def _lookup(self, parsed: _Parsed, name: str) -> _Symbol | None:
        want = tuple(p for p in (name or "").strip().split(".") if p)
        if not want:
            return None
        best: tuple[tuple[int, int, int], _Symbol] | None = None
        for w in _wants(parsed, want):
            for order, sym in parsed.by_name.get(w[-1], ()):
                q = sym.qualname
                if len(q) >= len(w) and q[len(q) - len(w):] == w:
                    rank = (0 if q == w else 1, len(q), order)
                    if best is None or rank < best[0]:
                        best = (rank, sym)
            if best is not None:
                break
        return best[1] if best else None

    def symbols(self, text: str, path: str, *, key: str | None = None) -> list[SymbolSpan]:
        """Every symbol of the file in document order (``[]`` for unsupported languages)."""
        parsed = self._parse(text, path, key)
        if parsed is None:
            return []
        return [self._span(parsed, s) for s in parsed.symbols]

    @staticmethod
    def _span(parsed: _Parsed, sym: _Symbol) -> SymbolSpan:
        return SymbolSpan(sym.start, sym.end, "".join(parsed.lines[sym.start - 1:sym.end]),
                          ".".join(sym.qualname))

    def find_symbol(self, text: str, path: str, name: str, *, key: str | None = None) -> SymbolSpan | None:
        """The declaration of ``name`` (``"RuleRegistry.resolve"``, ``"RuleRegistry"``,
        ``"resolve"``) in ``text``, or ``None`` when absent or the language is unsupported."""
        parsed = self._parse(text, path, key)
        if parsed is None:
            return None
        sym = self._lookup(parsed, name)
        return None if sym is None else self._span(parsed, sym)

    def package_of(self, text: str, path: str, *, key: str | None = None) -> str:
        """The package ``text`` declares (Java/Kotlin ``package``, Go package clause) or its module name
        (file stem; the folder of ``__init__.py``, ``mod.rs``, ``index.ts``, ``lib.rs``), dotted; ``""``
        for unsupported languages."""
        parsed = self._parse(text, path, key)
        return ".".join(parsed.package) if parsed is not None else ""

    def find_all(self, text: str, path: str, name: str, *, key: str | None = None) -> list[SymbolSpan]:
        """Every definition that ``name`` matches in ``text`` (dotted suffix of its qualified
        name, Java package prefix allowed; all Java overloads), in document order; ``[]`` when
        none or the language is unsupported."""
        parsed = self._parse(text, path, key)
        want = tuple(p for p in (name or "").strip().split(".") if p)
        if parsed is None or not want:
            return []
        for w in _wants(parsed, want):
            hits = [self._span(parsed, sym) for _, sym in parsed.by_name.get(w[-1], ())
                    if len(sym.qualname) >= len(w) and sym.qualname[len(sym.qualname) - len(w):] == w]
            if hits:
                return hits
        return []

    def call_sites(self, text: str, path: str, caller: str, *,
                   key: str | None = None) -> list[tuple[str, int]]:
        """Names invoked inside ``caller``'s declaration with the 1-based line of each call,
        in document order. Each call gives its method name (``resolve``) and, when the
        receiver is a plain dotted name, the qualified form (``registry.resolve``,
        ``RuleRegistry.withDefaultRules``); a Java ``new T(...)`` gives ``new T`` (and
        ``new Simple`` for a qualified ``T``); a method reference ``A::m`` gives ``m``, ``A.m``.
        TS/JS (``new T`` too), Go and Rust calls likewise (Rust ``Router::new()`` gives ``new``,
        ``Router.new``). ``[]`` when the caller is not found."""
        parsed = self._parse(text, path, key)
        if parsed is None or parsed.lang is None:
            return []
        sym = self._lookup(parsed, caller)
        if sym is None:
            return []
        from tree_sitter import QueryCursor

        out: list[tuple[str, int]] = []
        caps = QueryCursor(parsed.lang.call_query).captures(sym.node)
        nodes = [(n.start_byte, kind, n) for kind, ns in caps.items() for n in ns]
        for _, kind, node in sorted(nodes, key=lambda t: (t[0], t[1])):
            line = node.start_point.row + 1
            for name in self._call_names(parsed.lang.name, kind, node):
                out.append((name, line))
        return out

    @staticmethod
    def _call_names(lang: str, kind: str, node) -> list[str]:
        def txt(n) -> str:
            return n.text.decode("utf-8", "replace")

        names: list[str] = []
        if lang == "java":
            if kind == "call":
                name, obj = node.child_by_field_name("name"), node.child_by_field_name("object")
                if name is not None:
                    names.append(txt(name))
                    if obj is not None and _DOTTED.match(txt(obj)):
                        names.append(f"{txt(obj)}.{txt(name)}")
            elif kind == "new":
                typ = node.child_by_field_name("type")
                if typ is not None:
                    if typ.type == "generic_type" and typ.named_children:
                        typ = typ.named_children[0]
                    t = txt(typ)
                    if _DOTTED.match(t):
                        names.append(f"new {t}")
                        if "." in t:
                            names.append(f"new {t.rsplit('.', 1)[1]}")
            elif kind == "ref":
                kids = node.named_children
                last = node.children[-1] if node.children else None
                meth = txt(last) if last is not None and last.type in ("identifier", "new") else None
                if meth:
                    names.append(meth)
                    if kids and _DOTTED.match(txt(kids[0])):
                        names.append(f"{txt(kids[0])}.{meth}")
        elif lang != "python":
            fn = node.child_by_field_name("constructor" if kind == "new" else "function")
            if fn is not None and fn.type == "generic_function":  # Rust f::<T>()
                fn = fn.child_by_field_name("function")
            member = {"member_expression": ("object", "property"), "selector_expression": ("operand", "field"),
                      "field_expression": ("value", "field"), "scoped_identifier": ("path", "name")}
            if fn is None:
                pass
            elif fn.type == "identifier":
                names.append(f"new {txt(fn)}" if kind == "new" else txt(fn))
            elif fn.type in member:
                obj, attr = (fn.child_by_field_name(f) for f in member[fn.type])
                if attr is not None:
                    qual = txt(obj).replace("::", ".") if obj is not None else ""
                    qual = f"{qual}.{txt(attr)}" if qual and _DOTTED.match(qual) else ""
                    if kind == "new":
                        names += [f"new {qual}"] if qual else []
                        names.append(f"new {txt(attr)}")
                    else:
                        names += [txt(attr)] + ([qual] if qual else [])
        else:
            fn = node.child_by_field_name("function")
            if fn is not None:
                if fn.type == "identifier":
                    names.append(txt(fn))
                elif fn.type == "attribute":
                    attr, obj = fn.child_by_field_name("attribute"), fn.child_by_field_name("object")
                    if attr is not None:
                        names.append(txt(attr))
                        if obj is not None and _DOTTED.match(txt(obj)):
                            names.append(f"{txt(obj)}.{txt(attr)}")
        return names

    def calls_in(self, text: str, path: str, caller: str, *, key: str | None = None) -> set[str]:
        """The set of names invoked inside ``caller`` (see :meth:`call_sites`); empty when the
        caller is absent or the language is unsupported."""
        return {name for name, _ in self.call_sites(text, path, caller, key=key)}


default_index = SymbolIndex()


def find_symbol(text: str, path: str, name: str, *, key: str | None = None) -> SymbolSpan | None:
    """:meth:`SymbolIndex.find_symbol` on the module's shared cache."""
    return default_index.find_symbol(text, path, name, key=key)


def calls_in(text: str, path: str, caller_symbol: str, *, key: str | None = None) -> set[str]:
    """:meth:`SymbolIndex.calls_in` on the module's shared cache."""
    return default_index.calls_in(text, path, caller_symbol, key=key)


def call_sites(text: str, path: str, caller_symbol: str, *, key: str | None = None) -> list[tuple[str, int]]:
    """:meth:`SymbolIndex.call_sites` on the module's shared cache."""
    return default_index.call_sites(text, path, caller_symbol, key=key)
