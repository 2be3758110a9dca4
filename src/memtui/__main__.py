"""``python -m memtui``: the console script's entry (:func:`memtui.cli.warm.main`)."""

from memtui.cli.warm import main

main()
