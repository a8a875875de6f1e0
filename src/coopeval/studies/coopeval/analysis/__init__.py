"""Analyses of stored results: design-quality checks (NS/WD) and other frames for figures."""
