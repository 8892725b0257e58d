"""Shared fixtures: the repository's paths (configs, dataset fixtures)."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture
def fixtures() -> pathlib.Path:
    return ROOT / "datasets" / "tests" / "fixtures"
