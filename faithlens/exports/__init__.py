"""Data out of FaithLens for analysis elsewhere: every label source of a dataset as CSV, JSON Lines or
Parquet, one row per labelled unit with its text context (`labels`). The same function writes the
CLI's `export` file and the pages' downloads."""
