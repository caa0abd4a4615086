"""Qualitative coding: codebooks, sessions following the seed papers' annotation protocols, append-only
codes that become label sources and tags, agreement between coders, adjudication, export and import.

Layered above `llm` (the hybrid and ARM modes show LLM suggestions and rewrites) and below `views`."""
