"""``python -m memtui``."""

from memtui.cli import main

main()
