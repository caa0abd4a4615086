"""Settings: one table of names, defaults and help, read from the environment or secrets.

Precedence: explicit argument > environment variable > `.streamlit/secrets.toml` > default.
API keys are read here only when asked for and are never written anywhere.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Setting:
    """One configurable value: its environment variable, default and help text."""

    env: str
    default: str
    help: str


SETTINGS: dict[str, Setting] = {
    "db": Setting("FAITHLENS_DB", str(PROJECT_ROOT / "data" / "faithlens.duckdb"), "Path of the DuckDB database file."),
    "data_dir": Setting("FAITHLENS_DATA_DIR", str(PROJECT_ROOT / "data"), "Folder holding the vendored raw datasets."),
    "openai_key": Setting("OPENAI_API_KEY", "", "API key for OpenAI (optional for an OpenAI-compatible local server)."),
    "anthropic_key": Setting("ANTHROPIC_API_KEY", "", "API key for Anthropic."),
    "openai_base_url": Setting(
        "FAITHLENS_OPENAI_BASE_URL", "", "Base URL of an OpenAI-compatible server (vLLM, Ollama, llama.cpp, ...)."
    ),
    "anthropic_base_url": Setting("FAITHLENS_ANTHROPIC_BASE_URL", "", "Base URL of an Anthropic-compatible server."),
    "llm_timeout": Setting("FAITHLENS_LLM_TIMEOUT", "60", "Seconds an on-demand LLM call may take before it fails."),
    "batch_poll": Setting(
        "FAITHLENS_BATCH_POLL", "30", "Seconds between checks on a provider batch (a run in batch mode)."
    ),
    "events_url": Setting(
        "FAITHLENS_EVENTS_URL",
        "",
        "PostgreSQL URL of a team store shared by several app servers (postgresql://user@host/db); unset: none.",
    ),
    "events_retry": Setting(
        "FAITHLENS_EVENTS_RETRY", "5", "Seconds a write keeps trying while the team store does not answer."
    ),
    "llm_prices": Setting(
        "FAITHLENS_LLM_PRICES",
        str(PROJECT_ROOT / "faithlens" / "llm" / "prices.toml"),
        "Price table (USD per million tokens) used for LLM costs; copy and edit it, then point this here.",
    ),
}


def _secrets(path: Path | None = None) -> dict[str, object]:
    path = path or PROJECT_ROOT / ".streamlit" / "secrets.toml"
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        return tomllib.load(handle)


def get(name: str, override: str | None = None) -> str:
    """Resolve setting `name` (a key of SETTINGS)."""
    if override:
        return override
    setting = SETTINGS[name]
    if os.environ.get(setting.env):
        return os.environ[setting.env]
    secret = _secrets().get(setting.env)
    return str(secret) if secret else setting.default


def db_path(override: str | None = None) -> Path:
    """The database file: `--db`, else FAITHLENS_DB, else data/faithlens.duckdb."""
    return Path(get("db", override))


def data_dir(override: str | None = None) -> Path:
    """The folder of vendored raw datasets."""
    return Path(get("data_dir", override))
