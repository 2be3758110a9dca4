"""The base of every memtui screen: one keymap everywhere (issue 11, item 4).

Every screen gets the same keys from here, each with a binding id a user keymap can remap
(:mod:`memtui.keymap`):

====================  ===========================  ==================================
keys                  binding id                   effect
====================  ===========================  ==================================
``j`` / ``down``      ``nav.down``                 next row of the screen's main list
``k`` / ``up``        ``nav.up``                   previous row
``g`` / ``home``      ``nav.top``                  first row
``G`` / ``end``       ``nav.bottom``               last row
``]`` / ``[``         ``nav.next_unresolved`` …    next / previous unresolved item
``escape``            ``nav.back``                 back to the screen underneath
``q``                 ``nav.quit``                 quit
``?``                 ``nav.help``                 the keys of this screen (:mod:`.help`)
``:`` (``ctrl+p``)    ``nav.palette``              the command palette
``i`` ``C`` ``d``     ``goto.queue`` ``goto.conflicts`` ``goto.duplicates``
``p`` ``h`` ``H``     ``goto.compaction`` ``goto.health`` ``goto.history``
====================  ===========================  ==================================

Screen letters avoid the decision keys (a x r s b u c v): ``i`` the review queue ("inbox"),
``C`` conflicts, ``d`` duplicates, ``p`` compaction proposals, ``h`` health, ``H`` the history of
the highlighted memory. A screen's own binding on one of these keys wins on that screen
(``d`` is "not duplicates" on the duplicates screen, ``]``/``[`` switch evidence on the evidence screen).

The main list is the widget named by :attr:`BaseScreen.MAIN_LIST`, else the first widget with a
row cursor (``cursor_row``, ``row_count``, ``move_cursor(row=)``: a ``DataTable`` or a Line-API
list with the same three), else the first scrollable container, which the movement keys scroll.

The footer and the help list a screen's own keys first, in the order of its ``BINDINGS``, then
these common ones, then the focused widget's (:attr:`BaseScreen.active_bindings`), so at 80 columns the footer shows
what the screen is for. Destructive decisions ask with :meth:`BaseScreen.confirm` — the one way
every screen asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import events, on
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

#: below this width the footer is compact and leaves out the palette hint (``:`` still opens it)
NARROW_FOOTER = 120

#: the screens one letter opens: name -> (key, label); see :meth:`memtui.app.MemtuiApp.action_goto`
SCREEN_KEYS: dict[str, tuple[str, str]] = {
    "queue": ("i", "Queue"),
    "conflicts": ("C", "Conflicts"),
    "duplicates": ("d", "Duplicates"),
    "compaction": ("p", "Compaction"),
    "health": ("h", "Health"),
    "history": ("H", "History"),
}

COMMON_BINDINGS: list[BindingType] = [
    Binding("question_mark", "help", "Help", key_display="?", id="nav.help"),
    Binding("escape", "back", "Back", id="nav.back"),
    Binding("q", "app.quit", "Quit", id="nav.quit"),
    Binding("j,down", "list_down", "Down", show=False, id="nav.down"),
    Binding("k,up", "list_up", "Up", show=False, id="nav.up"),
    Binding("g", "list_top", "Top", show=False, id="nav.top"),
    Binding("G", "list_bottom", "Bottom", show=False, id="nav.bottom"),
    # priority: a DataTable's own home/end scroll sideways, which a row list never needs
    Binding("home", "list_top", "Top", show=False, priority=True, id="nav.home"),
    Binding("end", "list_bottom", "Bottom", show=False, priority=True, id="nav.end"),
    Binding("right_square_bracket", "next_unresolved", "Next unresolved", show=False, key_display="]",
            id="nav.next_unresolved"),
    Binding("left_square_bracket", "previous_unresolved", "Previous unresolved", show=False, key_display="[",
            id="nav.previous_unresolved"),
    Binding("colon", "app.command_palette", "Palette", show=False, key_display=":", id="nav.palette"),
] + [Binding(key, f"app.goto('{name}')", label, show=False, id=f"goto.{name}")
     for name, (key, label) in SCREEN_KEYS.items()]
_COMMON_ORDER = {b.id: i for i, b in enumerate(COMMON_BINDINGS) if isinstance(b, Binding)}


#: cells the command palette's hint takes at the right of a wide footer
PALETTE_HINT = 14


def fit_footer(bindings: dict, width: int, *, narrow: bool) -> dict:
    """``bindings`` (key -> ActiveBinding, in footer order) with ``show`` turned off for every shown
    binding after the line of ``width`` cells is full (a compact footer key takes its key, its
    description and 2 cells; a wide one 3), except help (``nav.help``), which always shows: the keys
    left out are in the help. One entry per action, as the footer draws them."""
    from dataclasses import replace

    pad = 2 if narrow else 3
    room = width - 1 - (0 if narrow else PALETTE_HINT)
    cost = {}
    for key, ab in bindings.items():
        b = ab.binding
        if b.show and b.action not in cost:
            cost[b.action] = len(b.key_display or key) + len(b.description) + pad
    help_cost = next((cost[ab.binding.action] for ab in bindings.values() if ab.binding.id == "nav.help"
                      and ab.binding.show), 0)
    used, shown, out = help_cost, set(), {}
    for key, ab in bindings.items():
        b = ab.binding
        if b.show and b.id != "nav.help" and b.action not in shown:
            if used + cost[b.action] <= room:
                used += cost[b.action]
                shown.add(b.action)
            else:
                ab = ab._replace(binding=replace(b, show=False))
        elif b.show and b.id != "nav.help" and b.action in shown:
            pass
        out[key] = ab
    return out


class BaseScreen(Screen):
    """A memtui screen: common keys, help built from the active bindings, one confirmation.

    Subclasses set :attr:`HELP_TITLE` (the help's heading) and, when the main list is not found
    by itself, :attr:`MAIN_LIST` (a CSS selector). :meth:`unresolved` tells ``]``/``[`` which rows
    still wait; :meth:`current_memory_id` tells ``H`` (history) and the palette which memory is in view.
    """

    BINDINGS: ClassVar[list[BindingType]] = COMMON_BINDINGS
    HELP_TITLE: ClassVar[str] = "Keys"
    MAIN_LIST: ClassVar[str | None] = None

    # ---- the order of the footer and the help ---------------------------------------------
    @property
    def active_bindings(self):  # type: ignore[override]
        """:attr:`all_bindings` as the footer shows them: in order, as many as fit on one line of the
        screen's width, ``?`` (help: every key) always among them; the others are still active, only
        not shown (``show=False``)."""
        return fit_footer(self.all_bindings, self.size.width or self.app.size.width, narrow=self._narrow())

    def _narrow(self) -> bool:
        return (self.size.width or self.app.size.width) < NARROW_FOOTER

    @property
    def all_bindings(self):
        """Textual's active bindings, this screen's own keys first (in ``BINDINGS`` order), then
        the common keys of :class:`BaseScreen`, then the focused widget's, then the app's."""
        bindings = super().active_bindings
        own = {b.id: i for i, b in enumerate(type(self)._own_bindings())}

        def rank(item) -> tuple[int, int]:
            ab = item[1]
            if ab.node is self:
                if ab.binding.id in own:
                    return (0, own[ab.binding.id])
                return (1, _COMMON_ORDER.get(ab.binding.id, len(_COMMON_ORDER)))  # then Textual's (tab…)
            return (2, 0) if isinstance(ab.node, Widget) else (3, 0)

        return dict(sorted(bindings.items(), key=rank))

    @classmethod
    def _own_bindings(cls) -> list[Binding]:
        """The bindings declared by the screen classes below BaseScreen (not the common ones)."""
        out: list[Binding] = []
        for klass in reversed(cls.__mro__):
            if klass is BaseScreen or not (isinstance(klass, type) and issubclass(klass, BaseScreen)):
                continue
            out += [b for b in klass.__dict__.get("BINDINGS", []) if isinstance(b, Binding)]
        return out

    @on(events.Resize)
    def _fit_footer(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW_FOOTER
        for footer in self.query(Footer):
            footer.compact = narrow
            footer.show_command_palette = not narrow
            footer.refresh(recompose=True)  # what fits changes with the width

    # ---- the main list --------------------------------------------------------------------
    def main_list(self) -> Widget | None:
        """The widget the movement keys drive (see the module docstring)."""
        if self.MAIN_LIST:
            return self.query_one(self.MAIN_LIST)
        scrollable = None
        for w in self.query("*"):
            if hasattr(w, "move_cursor") and hasattr(w, "row_count") and w.display:
                return w
            if scrollable is None and w.is_scrollable and w.display and not isinstance(w, Screen):
                scrollable = w
        return scrollable

    def focused_scroller(self) -> Widget | None:
        """The focused widget when it is a scrollable pane other than the main list (the detail pane
        after ``tab``): the movement keys scroll it instead of moving the list's cursor."""
        f = self.focused
        if f is None or hasattr(f, "move_cursor") or not f.is_scrollable or isinstance(f, Screen):
            return None
        return f if f is not self.main_list() else None

    def scroll_focused_pane(self, scroll: str) -> bool:
        """Scroll the :meth:`focused_scroller` (``scroll`` names the method: ``"scroll_down"``, ...);
        False when no such pane has focus and the keys move the list."""
        pane = self.focused_scroller()
        if pane is None:
            return False
        getattr(pane, scroll)(animate=False)
        return True

    def _move(self, where: Callable[[int, int], int | None], scroll: str) -> None:
        if self.scroll_focused_pane(scroll):
            return
        w = self.main_list()
        if w is None:
            return
        if not hasattr(w, "move_cursor"):
            getattr(w, scroll)(animate=False)
            return
        n = w.row_count
        if n == 0:
            return
        target = where(w.cursor_row or 0, n)
        if target is None:
            self.app.bell()
            return
        w.move_cursor(row=max(0, min(n - 1, target)))

    def action_list_down(self) -> None:
        """Next row (``j``, ``down``)."""
        self._move(lambda row, n: row + 1, "scroll_down")

    def action_list_up(self) -> None:
        """Previous row (``k``, ``up``)."""
        self._move(lambda row, n: row - 1, "scroll_up")

    def action_list_top(self) -> None:
        """First row (``g``, ``home``); in a text field, home stays the field's."""
        self._not_in_text_field()
        self._move(lambda row, n: 0, "scroll_home")

    def action_list_bottom(self) -> None:
        """Last row (``G``, ``end``); in a text field, end stays the field's."""
        self._not_in_text_field()
        self._move(lambda row, n: n - 1, "scroll_end")

    def _not_in_text_field(self) -> None:
        from textual.widgets import Input, TextArea

        if isinstance(self.focused, (Input, TextArea)):
            raise SkipAction()

    def unresolved(self, row: int) -> bool:
        """Whether row ``row`` of the main list still waits for a decision (default: every row:
        the proposal screens list only open items)."""
        return True

    def _step_unresolved(self, step: int) -> Callable[[int, int], int | None]:
        def where(row: int, n: int) -> int | None:
            for k in range(1, n + 1):
                candidate = (row + step * k) % n
                if self.unresolved(candidate):
                    return candidate
            return None

        return where

    def action_next_unresolved(self) -> None:
        """The next row that still waits for a decision, wrapping round (``]``)."""
        self._move(self._step_unresolved(1), "scroll_page_down")

    def action_previous_unresolved(self) -> None:
        """The previous row that still waits for a decision, wrapping round (``[``)."""
        self._move(self._step_unresolved(-1), "scroll_page_up")

    def current_memory_id(self) -> str | None:
        """The memory in view (for ``H`` and the palette); None when there is none."""
        return None

    # ---- back, help, confirmation ---------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``back`` exists only above the first screen (the queue), so the footer leaves it out there."""
        if action == "back":
            return len(self.app.screen_stack) > 2
        return True

    def action_back(self) -> None:
        """Back to the screen underneath."""
        self.app.pop_screen()

    def action_help(self) -> None:
        """Show every active key of this screen, built from its bindings (never by hand)."""
        from memtui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.all_bindings.values(), title=self.HELP_TITLE))

    def confirm(self, title: str, effect: str, on_yes: Callable[[], None]) -> None:
        """Ask before a destructive decision: ``effect`` says what changes and how to undo it;
        No is the default. ``on_yes`` runs only on Yes."""
        from memtui.screens.dialogs import ConfirmDialog

        def done(yes: bool | None) -> None:
            if yes:
                on_yes()

        self.app.push_screen(ConfirmDialog(title, effect), done)
