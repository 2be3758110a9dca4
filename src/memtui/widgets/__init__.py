"""Reusable TUI parts."""
