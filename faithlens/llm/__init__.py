"""Asking language models: providers, the papers' prompts as versioned files, strict parsing, the cache and costs."""
