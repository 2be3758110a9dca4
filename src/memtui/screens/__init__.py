"""TUI screens, one a file, each with its own bindings and ``.tcss`` styles."""
