"""Fixtures of acco's Python tests. ctest (python.pytest) runs them on the build tree's package
with ACCO_MAKE_SYSROOT and ACCO_BINARY naming the sysroot generator and the CLI of that build;
run by hand, they look in build/default."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _tool(env: str, default: str) -> pathlib.Path:
    path = pathlib.Path(os.environ.get(env, ROOT / "build" / "default" / default))
    if not path.exists():
        pytest.skip(f"{path} is not built (set {env} or build the default preset)")
    return path


@pytest.fixture(scope="session")
def acco_binary() -> pathlib.Path:
    return _tool("ACCO_BINARY", "apps/acco/acco")


@pytest.fixture(scope="session")
def workstation(tmp_path_factory) -> pathlib.Path:
    """The integration tests' `workstation` machine: 2 sockets, 4 GPUs, one 100G NIC."""
    tool = _tool("ACCO_MAKE_SYSROOT", "tests/support/acco-make-sysroot")
    root = tmp_path_factory.mktemp("sysroot") / "workstation"
    subprocess.run([str(tool), "workstation", str(root)], check=True)
    return root


@pytest.fixture(autouse=True)
def _no_saved_state(tmp_path, monkeypatch):
    # Nothing a test does reads or writes the user's tune profiles or history.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
