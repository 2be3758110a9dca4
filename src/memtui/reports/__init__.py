"""Reports: the maintenance reports of the design (seed 000 §26.2) and decision exports."""
