"""CLI tests: the commands run against a data folder wired to the sandbox (HTTPS, FakeClock)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.context import Runtime
from app.launcher import main
from tests.support.nfe_harness import Harness, nfe_harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with nfe_harness(tmp_path) as h:
        yield h


class Cli:
    """Runs ``python main.py ...`` in-process on the harness's data folder and clock."""

    def __init__(self, harness: Harness, capsys: pytest.CaptureFixture[str]) -> None:
        self.harness = harness
        self.capsys = capsys
        self.out = ""
        self.err = ""

    def __call__(self, *args: str) -> int:
        self.capsys.readouterr()
        argv = ["--data-dir", str(self.harness.office.data_dir), *args]
        code = main(argv, runtime=Runtime(clock=self.harness.clock))
        captured = self.capsys.readouterr()
        self.out, self.err = captured.out, captured.err
        return code

    def json(self, *args: str) -> object:
        code = self(*args, "--json")
        assert code in (0, 3), self.err
        return json.loads(self.out)


@pytest.fixture
def cli(harness: Harness, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(harness, capsys)
