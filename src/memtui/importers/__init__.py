"""Importers: turn files in the design's record shapes (and later, agents' own formats) into memories."""
