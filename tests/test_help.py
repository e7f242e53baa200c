"""`pytest --help` and `specbench --help` work and list everything.

The plugin registers through ``pytest11``, so a help text argparse cannot
format (a bare ``%``) would break ``pytest --help`` for every project in the
environment: each option and ini key is looked for in the real output.
"""
from __future__ import annotations

import argparse

import pytest
from _pytest.config.argparsing import Parser

from pytest_specbench import cli
from pytest_specbench.plugin.options import addoption


def _declared() -> tuple[list[str], list[str]]:
    parser = Parser(_ispytest=True)
    addoption(parser)
    group = parser.getgroup("specbench")
    options = [name for opt in group.options for name in opt.names() if name.startswith("--")]
    return options, sorted(parser._inidict)


def test_pytest_help_exits_0_and_lists_every_option_and_ini_key(pytester):
    options, ini_keys = _declared()
    assert "--specbench-fail-under" in options and "specbench" in ini_keys
    result = pytester.runpytest_subprocess("--help")
    assert result.ret == 0, result.stderr.str()[-2000:]
    out = result.stdout.str()
    missing = [name for name in options + ini_keys if name not in out]
    assert not missing, f"not in `pytest --help`: {missing}"
    assert "pass@1=70%" in out  # the text as written, not doubled


def _subcommand_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subcommand_paths(sub, prefix + (name,))


@pytest.mark.parametrize("path", list(_subcommand_paths(cli.build_parser())), ids=lambda p: " ".join(p) or "specbench")
def test_specbench_help_of_every_subcommand(path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([*path, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: specbench" + "".join(" " + p for p in path))
