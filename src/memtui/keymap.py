"""The user's keymap file: binding id → key, applied with Textual's keymap (issue 11, item 4).

The file is ``$MEMTUI_KEYMAP`` if set, else ``$XDG_CONFIG_HOME/memtui/keymap.yaml`` (by default
``~/.config/memtui/keymap.yaml``). It is one YAML mapping; a value is one key, several keys
separated by commas, or a list of keys::

    queue.approve: y
    nav.down: j,ctrl+n
    goto.conflicts: [C, F2]

An entry replaces every default key of its id. Key names are Textual's (``ctrl+r``, ``f2``, ``question_mark`` or ``?``, ``escape``; case
matters only for a single character). The ids
are those the help (``?``) lists. A file that cannot be read, or an entry naming an unknown id or
an impossible key, is reported as a :class:`KeymapProblem` naming the file, its line and the entry;
the good entries still apply and the app starts.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

MODIFIERS = {"ctrl", "shift", "alt", "meta", "super", "hyper"}


@dataclass(frozen=True)
class KeymapProblem:
    """One thing wrong in the keymap file: ``line`` is 1-based (None: the whole file)."""

    path: Path
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.path}{f':{self.line}' if self.line else ''}: {self.message}"


def keymap_path() -> Path:
    """Where the user's keymap file is (it need not exist)."""
    if os.environ.get("MEMTUI_KEYMAP"):
        return Path(os.environ["MEMTUI_KEYMAP"]).expanduser()
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "memtui" / "keymap.yaml"


def normalize_key(key: str) -> str:
    """``key`` as Textual names it: modifiers and key names in lower case (``Ctrl+F2`` → ``ctrl+f2``);
    a single character keeps its case (``G`` is shift+g)."""
    *mods, name = key.strip().split("+")
    return "+".join([m.lower() for m in mods] + [name if len(name) == 1 else name.lower()])


def valid_key(key: str) -> bool:
    """Whether Textual can bind ``key`` (modifiers from :data:`MODIFIERS`, then one key)."""
    from textual.keys import KEY_TO_UNICODE_NAME, REPLACED_KEYS, Keys

    *mods, name = key.split("+")
    if not name or any(m not in MODIFIERS for m in mods):
        return False
    if len(name) == 1:
        return name.isprintable()
    if name in {k.value for k in Keys} or name in REPLACED_KEYS:
        return True
    try:
        unicodedata.lookup(KEY_TO_UNICODE_NAME.get(name, name.replace("_", " ").upper()))
    except KeyError:
        return False
    return True


def read_keymap(path: Path, classes: Callable[[], Iterable[type]]) -> tuple[dict[str, str], list[KeymapProblem]]:
    """The keymap in ``path`` ({binding id: "key,key"}) and what is wrong in it; ``classes()`` gives
    the app and screen classes whose bindings exist (called only when there is a file: it imports
    every screen).

    A missing file is no keymap and no problem. Bad YAML or a file that is not a mapping gives one
    problem and no keymap; a bad entry gives a problem and is left out. An entry that takes a key
    another binding of the same screen keeps is applied, and told as a problem too (that binding
    loses the key)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [KeymapProblem(path, None, f"cannot be read: {exc}")]
    import yaml  # only once there is a file: keeps PyYAML off the start-up path

    try:
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return {}, [KeymapProblem(path, mark.line + 1 if mark else None,
                                  f"not valid YAML: {getattr(exc, 'problem', None) or exc}")]
    if root is None:
        return {}, []
    if not isinstance(root, yaml.MappingNode):
        return {}, [KeymapProblem(path, root.start_mark.line + 1,
                                  "must be a mapping of binding id to key, e.g. 'queue.approve: y'")]
    screens = list(classes())
    known = binding_ids(screens)
    keymap: dict[str, str] = {}
    lines: dict[str, int] = {}
    problems: list[KeymapProblem] = []
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + 1
        binding_id = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if not isinstance(binding_id, str) or binding_id not in known:
            problems.append(KeymapProblem(path, line, f"{binding_id!r}: no binding has this id "
                                                      "(? lists the ids of each screen)"))
            continue
        if isinstance(value_node, yaml.ScalarNode) and value_node.value.strip():
            keys = [normalize_key(k) for k in value_node.value.split(",")]
        elif isinstance(value_node, yaml.SequenceNode) and value_node.value and all(
                isinstance(n, yaml.ScalarNode) and n.value.strip() for n in value_node.value):
            keys = [normalize_key(n.value) for n in value_node.value]
        else:
            problems.append(KeymapProblem(path, line, f"{binding_id!r}: the value must be a key, "
                                                      "keys separated by commas, or a list of keys"))
            continue
        bad = [k for k in keys if not valid_key(k)]
        if bad:
            problems.append(KeymapProblem(path, line, f"{binding_id!r}: {', '.join(map(repr, bad))} "
                                                      "is not a key Textual knows"))
            continue
        keymap[binding_id] = ",".join(keys)
        lines[binding_id] = line
    for binding_id, key, loser, screen in clashes(keymap, screens):
        problems.append(KeymapProblem(path, lines[binding_id], f"{binding_id!r}: {key} was {loser!r}'s key on "
                                                               f"{screen}, which now has none there"))
    return keymap, problems


def _bindings_by_key(cls: type) -> dict[str, object]:
    """Key → binding of ``cls`` as Textual merges them (a subclass's binding of a key wins)."""
    from textual.binding import Binding

    out: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        for b in klass.__dict__.get("BINDINGS", []):
            if isinstance(b, Binding):
                for key in b.key.split(","):
                    out[_normalize(key.strip())] = b
    return out


def _normalize(key: str) -> str:
    from textual.keys import _character_to_key

    return _character_to_key(key) if len(key) == 1 else key


def clashes(keymap: dict[str, str], classes: Iterable[type]) -> list[tuple[str, str, str, str]]:
    """(id, key, id of the binding that loses the key, screen) for each keymap entry that takes a key
    another binding of the same class keeps (one not remapped itself)."""
    found = []
    for cls in classes:
        by_key = _bindings_by_key(cls)
        ids = {b.id for b in by_key.values()}
        for binding_id, keys in keymap.items():
            if binding_id not in ids:
                continue
            for key in keys.split(","):
                other = by_key.get(_normalize(key))
                if other is not None and other.id != binding_id and other.id not in keymap:
                    found.append((binding_id, key, other.id or other.action, cls.__name__))
    return found


def binding_ids(classes: Iterable[type]) -> set[str]:
    """Every binding id declared by ``classes`` and their bases (``BINDINGS``)."""
    from textual.binding import Binding

    ids: set[str] = set()
    for cls in classes:
        for klass in cls.__mro__:
            for b in klass.__dict__.get("BINDINGS", []):
                if isinstance(b, Binding) and b.id:
                    ids.add(b.id)
    return ids


def memtui_classes(app_class: type) -> list[type]:
    """``app_class`` and every screen class in :mod:`memtui.screens` (their bindings are the ones a
    keymap can remap)."""
    import importlib
    import pkgutil

    from textual.screen import Screen

    import memtui.screens

    classes: list[type] = [app_class]
    for info in pkgutil.iter_modules(memtui.screens.__path__):
        module = importlib.import_module(f"memtui.screens.{info.name}")
        classes += [v for v in vars(module).values()
                    if isinstance(v, type) and issubclass(v, Screen) and v.__module__ == module.__name__]
    return classes
