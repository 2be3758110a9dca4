"""memtui — a keyboard-first terminal workstation for maintaining the long-term memory of coding agents."""

__version__ = "0.1.0"
