"""`local` mode (no sign-in) serves loopback only; sign-in modes and demo mode may listen anywhere;
`make run HOST=0.0.0.0` with no settings refuses to start with one line saying how to turn on sign-in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from faithlens import config
from faithlens.errors import FaithLensError

ROOT = Path(__file__).resolve().parents[2]
SETTING_ENVS = [config.SETTINGS[name].env for name in ("auth", "mode", "user")]


@pytest.fixture(autouse=True)
def no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for env in SETTING_ENVS:
        monkeypatch.delenv(env, raising=False)


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_local_mode_serves_loopback(address: str):
    config.check_listen(address)


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "", None, "192.168.1.20", "lab-server.example.org"])
def test_local_mode_refuses_any_other_address_in_one_line(address: str | None):
    with pytest.raises(FaithLensError) as refused:
        config.check_listen(address)
    text = str(refused.value)
    assert "\n" not in text
    assert "FAITHLENS_AUTH=oidc" in text and "FAITHLENS_AUTH=links" in text


@pytest.mark.parametrize(("env", "value"), [("auth", "oidc"), ("auth", "links"), ("mode", "demo")])
def test_sign_in_and_demo_mode_may_listen_anywhere(monkeypatch: pytest.MonkeyPatch, env: str, value: str):
    monkeypatch.setenv(config.SETTINGS[env].env, value)
    config.check_listen("0.0.0.0")


def test_make_run_on_every_interface_stops_before_the_server_starts():
    env = {k: v for k, v in os.environ.items() if k not in SETTING_ENVS}
    done = subprocess.run(
        [sys.executable, "-m", "faithlens.access", "check-listen", "0.0.0.0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: FAITHLENS_AUTH=local has no sign-in"), done.stderr
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    run_target = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert run_target.index("check-listen") < run_target.index("streamlit run"), "make run checks first"
