"""``memtui import`` for the memory formats agents actually write (issue 5, "Import" items 1-4).

Kept for the modules that import from here: the record types live in
:mod:`memtui.importers.records` (what the format parsers import), the database import pipeline
(detection, ids, supersede/withdraw, the transaction; its module doc is the reference) in
:mod:`memtui.importers.pipeline`. Public API: :func:`detect_format` and :func:`import_paths`.
"""

from __future__ import annotations

from memtui.importers.pipeline import (FORMATS, FormatImportReport, _compute_ids, _context, _parse,
                                       detect_format, import_paths)
from memtui.importers.records import (ImportContext, Item, Parsed, line_of, load_json_lines, norm_text,
                                      parse_time, read_text, record_error, tag, type_for_label, type_for_text)

__all__ = ["FORMATS", "Item", "Parsed", "FormatImportReport", "detect_format", "import_paths",
           "ImportContext", "norm_text", "parse_time", "load_json_lines", "type_for_label", "type_for_text",
           "tag", "read_text", "record_error", "line_of", "_compute_ids", "_context", "_parse"]
