"""Read models for the pages and the CLI: what each page shows, computed from the store and the
analysis layer, as plain frozen dataclasses (the page's URL state among them)."""
