"""Settings: one table of names, defaults and help, read from the environment or secrets.

Precedence: explicit argument > environment variable > `.streamlit/secrets.toml` > default.
API keys are read here only when asked for and are never written anywhere.
"""

from __future__ import annotations

import getpass
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from faithlens.errors import FaithLensError

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
    "llm_attempts": Setting(
        "FAITHLENS_LLM_ATTEMPTS",
        "4",
        "Attempts a run makes at each call before the item counts as failed: 429, 5xx, timeouts, lost "
        "connections, cut streams, bodies that are not JSON and empty answers are asked again.",
    ),
    "llm_backoff": Setting(
        "FAITHLENS_LLM_BACKOFF",
        "1",
        "Seconds a run waits before its first retry of a call; each further retry waits twice as long "
        "(up to 30 s, less up to 25% jitter), or what the provider's retry-after asks.",
    ),
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
    "auth": Setting(
        "FAITHLENS_AUTH",
        "local",
        "How the server knows who you are: local (one user, loopback only), oidc (st.login against the "
        "provider in .streamlit/secrets.toml [auth]) or links (sign-in links an admin hands out).",
    ),
    "model_dir": Setting(
        "FAITHLENS_MODEL_DIR",
        "",
        "Folder the embedding model is unpacked into; default: share/faithlens-models inside the Python environment.",
    ),
    "user": Setting("FAITHLENS_USER", "", "The one user of `local` mode and of the CLI; default: the OS user name."),
    "mode": Setting(
        "FAITHLENS_MODE", "normal", "normal, or demo: a public read-only server (no writes, no paid calls)."
    ),
    "cookie_secret": Setting(
        "FAITHLENS_COOKIE_SECRET",
        "",
        "Secret that signs the sign-in cookie of `links` mode (32+ random characters); never logged.",
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
    import tomllib  # here: most commands and pages never find a secrets file, and the parser costs every start

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


AUTH_MODES = ("local", "oidc", "links")
SERVER_MODES = ("normal", "demo")


def _choice(name: str, allowed: tuple[str, ...]) -> str:
    value = get(name).strip().lower()
    if value not in allowed:
        env = SETTINGS[name].env
        raise FaithLensError(f"{env}={value!r} is not a known value", f"set {env} to one of {', '.join(allowed)}")
    return value


def auth_mode() -> str:
    """FAITHLENS_AUTH: local, oidc or links."""
    return _choice("auth", AUTH_MODES)


def server_mode() -> str:
    """FAITHLENS_MODE: normal, or demo (public and read-only)."""
    return _choice("mode", SERVER_MODES)


def user_name(override: str | None = None) -> str:
    """The user of `local` mode and of the CLI: `--as NAME`, else FAITHLENS_USER, else the OS user name."""
    name = get("user", override).strip()
    if name:
        return name
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name for this uid (a bare container)
        return "local"


def is_loopback(address: str | None) -> bool:
    """Whether a server bound to `address` is reachable from this machine only. Unset or empty means
    every interface (Streamlit's default), so it is not."""
    host = (address or "").strip().strip("[]")
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen(address: str | None) -> None:
    """Refuse to serve `local` mode (no sign-in: whoever connects is the one user) beyond loopback.

    Demo mode may listen anywhere: it writes nothing and pays for nothing."""
    if server_mode() == "demo" or auth_mode() != "local" or is_loopback(address):
        return
    where = address or "every interface"
    raise FaithLensError(
        f"FAITHLENS_AUTH=local has no sign-in, so the server listens on loopback only, not on {where}",
        "turn on sign-in with FAITHLENS_AUTH=oidc ([auth] in .streamlit/secrets.toml) or FAITHLENS_AUTH=links, "
        "or serve a read-only public copy with FAITHLENS_MODE=demo",
    )
