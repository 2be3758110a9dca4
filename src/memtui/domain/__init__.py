"""Domain rules: lifecycle states, transitions, invariants. Pure: no I/O, no database, no git."""
