"""Sources of evidence: git (gitpython) and, later, symbol lookup."""
