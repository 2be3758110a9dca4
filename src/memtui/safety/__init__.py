"""Safety of what memtui stores and shows (issue 9): secret scanning, personal-data redaction, input limits."""
