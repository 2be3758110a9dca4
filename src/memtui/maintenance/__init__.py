"""Maintenance services: repositories, and (later) revalidation, expiry, dedupe, conflicts, pruning."""
