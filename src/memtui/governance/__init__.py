"""Governance of a shared store (issue 9): the audit log, reviewers, roles and scopes, integrity checks."""
