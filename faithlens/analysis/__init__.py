"""Dataset-agnostic analysis: the label mapping, agreement metrics, thresholds for score sources,
tallies of one source against another, and per-generator tables. Pages and the CLI read it through
`faithlens.views`; dataset adapters name the paper tables that reproduce their benchmark."""
