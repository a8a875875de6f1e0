"""The workflow layer: config composition, study registry, generic play and store jobs."""
