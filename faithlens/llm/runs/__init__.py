"""Runs: one method over many units, as a background job or a foreground command.

- `spec`: what a run asks (RunSpec) and over which units (Selection -> unit ids, in words);
- `log`: the run and its append-only events in DuckDB (`llm_run`, `llm_run_event`);
- `estimate`: calls, tokens, cost and time before starting, counting the real prompts;
- `engine`: the worker (bounded concurrency, budget, cancel, failures kept with their reason);
- `batch`: the same run through the providers' batch APIs;
- `jobs`: runs alive in this process, for the app's Runs page;
- `stability`: self-agreement across repeats (TofuEval's Table 4).

The LLM cache is the truth about what was bought: a resume, a repeat of the same command or a
retry asks the cache first, so a finished answer is never bought twice.
"""
