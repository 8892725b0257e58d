"""memskill: learned memory skills for LLM agents, from Python.

The work is done by the Rust library the ``memskill`` command line uses (the native
module ``memskill._native``); this package hands back plain Python objects:

* ``load_locomo``, ``load_longmemeval``, ``load_hotpotqa`` (and ``load_dataset``): a
  dataset file as a list of sample dicts;
* ``score``: a predictions file's F1, overall and per category (``memskill score``);
* ``SkillBank``: load, save, export, import, validate and diff skill banks
  (``memskill skills``);
* ``train`` and ``evaluate``: a training run and a checkpoint's evaluation; Ctrl-C stops
  training after the current update, with a checkpoint written;
* ``report``, ``compare`` and ``skills_eval``: the report page, the comparison table and
  the release gate's per-skill replay (``memskill report``, ``compare``, ``skills eval``);
* ``main``: the command line itself (the ``memskill`` console script).

Results are dataclasses (``memskill.results``) with ``to_dict()``; dataset samples are
plain dicts.

Every error is a ``MemskillError`` (a ``RuntimeError``) whose message names the file,
field or setting at fault.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _native
from ._native import MemskillError, SkillBank
from .results import (
    Comparison,
    EvaluationResult,
    ReportResult,
    ScoreResult,
    SkillsEvalResult,
    TrainResult,
)

__version__: str = _native.__version__

PathLike = Union[str, "os.PathLike[str]"]
Overrides = Union[Mapping[str, Any], Sequence[str], None]

__all__ = [
    "Comparison",
    "EvaluationResult",
    "MemskillError",
    "ReportResult",
    "ScoreResult",
    "SkillBank",
    "SkillsEvalResult",
    "TrainResult",
    "compare",
    "evaluate",
    "load_dataset",
    "load_hotpotqa",
    "load_locomo",
    "load_longmemeval",
    "main",
    "report",
    "score",
    "skills_eval",
    "train",
]


def _toml_value(v: Any) -> str:
    """A Python value as a TOML value (strings quoted, booleans lower-case, lists as arrays)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"override value {v!r}: expected a bool, number, string or list")


def _sets(overrides: Overrides) -> List[str]:
    """``{"ppo.lr": 3e-4}`` or ``["ppo.lr=3e-4"]`` as the CLI's ``--set KEY=VALUE`` list."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{k}={_toml_value(v)}" for k, v in overrides.items()]
    if isinstance(overrides, str):
        raise TypeError("overrides: expected a dict or a list of 'key=value' strings, got a string")
    return [str(s) for s in overrides]


def _path(p: Optional[PathLike]) -> Optional[str]:
    return None if p is None else os.fspath(p)


def load_dataset(kind: str, path: PathLike) -> List[Dict[str, Any]]:
    """Loads a dataset file as a list of sample dicts.

    ``kind`` is ``"locomo"``, ``"longmemeval"`` or ``"hotpotqa"``. Each sample is a dict
    with ``id``, ``dataset``, ``sessions`` (each with its ``turns``), ``spans`` (empty: the
    samples are not segmented) and ``queries`` (question, answers, category, ...), the
    same records the trainer reads. A malformed file raises ``MemskillError`` naming the
    file and the JSON field.
    """
    return _native.load_dataset(kind, os.fspath(path))


def load_locomo(path: PathLike) -> List[Dict[str, Any]]:
    """Loads a LoCoMo file (``locomo10.json``); see ``load_dataset``."""
    return load_dataset("locomo", path)


def load_longmemeval(path: PathLike) -> List[Dict[str, Any]]:
    """Loads a LongMemEval file (``longmemeval_s_cleaned.json``); see ``load_dataset``."""
    return load_dataset("longmemeval", path)


def load_hotpotqa(path: PathLike) -> List[Dict[str, Any]]:
    """Loads a HotpotQA file (the long-context ``eval_*.json`` / JSONL or the dev
    distractor set); see ``load_dataset``."""
    return load_dataset("hotpotqa", path)


def score(
    dataset: str,
    predictions: PathLike,
    *,
    hotpotqa_f1: str = "memskill",
    max_work: int = 20_000_000,
) -> ScoreResult:
    """Scores a JSONL predictions file, as ``memskill score --json`` does.

    ``dataset`` is ``"locomo"`` (LoCoMo F1 by category) or ``"hotpotqa"`` (HotpotQA F1,
    ``hotpotqa_f1="memskill"`` or ``"official"``). Each line is
    ``{"question_id" or "question", "prediction", "answer", "category"}``. Returns a
    ``ScoreResult``: ``overall`` and ``by_category`` (``f1``, ``count``) and ``per_line``
    (every line's F1, in file order).
    """
    return ScoreResult.from_dict(
        _native.score(dataset, os.fspath(predictions), hotpotqa_f1=hotpotqa_f1, max_work=max_work)
    )


def train(
    config: Optional[PathLike] = None,
    *,
    overrides: Overrides = None,
    run_dir: Optional[PathLike] = None,
    max_updates: Optional[int] = None,
    resume: bool = False,
    log: bool = False,
) -> TrainResult:
    """Trains the controller and evolves the skill bank, as ``memskill train`` does.

    ``config`` is a TOML config file; ``overrides`` change its keys
    (``{"run.outer_epochs": 1}`` or ``["run.outer_epochs=1"]``, values as TOML).
    ``run_dir`` is the run's directory (default ``runs/<run.name>``; its last component
    becomes ``run.name``). ``max_updates`` stops at the first checkpoint after that many
    updates; ``resume=True`` continues the run from its latest checkpoint (``config`` may
    then be omitted). ``log=True`` prints one line per update to stderr.

    Returns a ``TrainResult`` (``run_dir``, ``update_step``, ``updates_this_run``,
    ``finished``, ``interrupted``, ``outer_rewards``, ``export_dir``, ``last_checkpoint``).

    Ctrl-C (KeyboardInterrupt) stops the run after the current update with a checkpoint
    written, then raises ``KeyboardInterrupt``; ``resume=True`` continues from there.
    """
    return TrainResult.from_dict(
        _native.train(
            _path(config),
            overrides=_sets(overrides),
            run_dir=_path(run_dir),
            max_updates=max_updates,
            resume=resume,
            log=log,
        )
    )


def evaluate(
    checkpoint: PathLike,
    *,
    dataset: Optional[str] = None,
    split: Optional[str] = None,
    limit: Optional[int] = None,
    overrides: Overrides = None,
    out: Optional[PathLike] = None,
    method: Optional[str] = None,
    judge: bool = True,
) -> EvaluationResult:
    """Evaluates a checkpoint (a checkpoint, run or checkpoints directory), as
    ``memskill eval`` does, and returns its ``results.json`` as an ``EvaluationResult``
    (``overall`` and ``by_category`` scores, the settings, ``queries`` with one record per
    question) with ``out_dir``, the folder the results were written to. ``judge=False`` skips the LLM judge. A run whose
    LLM error rate is above ``eval.max_error_rate`` raises ``MemskillError``. Ctrl-C stops
    the evaluation before its next sample, writes no results and raises
    ``KeyboardInterrupt``.
    """
    return EvaluationResult.from_dict(
        _native.evaluate(
            os.fspath(checkpoint),
            dataset=dataset,
            split=split,
            limit=limit,
            overrides=_sets(overrides),
            out=_path(out),
            method=method,
            judge=judge,
        )
    )


def report(
    inputs: Union[PathLike, Sequence[PathLike]],
    *,
    out: PathLike = "report",
    allow_failed: bool = False,
) -> ReportResult:
    """Writes ``report.md`` and ``report.html`` (and ``figure3.png`` for a context-length
    sweep) into ``out`` from every evaluation under ``inputs`` (run directories,
    evaluation directories or ``results.json`` files), as ``memskill report`` does.

    Returns a ``ReportResult``: the files written, the ``evaluations`` read (scores with
    95% bootstrap intervals) and the ``tables``. An evaluation that failed is named in
    ``failed`` and left out of the tables; as the command exits non-zero then, this raises
    ``MemskillError`` (after writing the report) unless ``allow_failed=True``.
    """
    paths = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    r = ReportResult.from_dict(_native.report([os.fspath(p) for p in paths], os.fspath(out)))
    if r.failed and not allow_failed:
        raise MemskillError(
            f"{len(r.failed)} evaluation(s) failed and are not in the report "
            f"(written to {r.out_dir}): " + "; ".join(r.failed)
        )
    return r


def compare(runs: Union[PathLike, Sequence[PathLike]]) -> Comparison:
    """The evaluations of one or more run directories side by side, as ``memskill
    compare`` prints them: a ``Comparison`` with the Markdown ``table``, the
    ``evaluations`` behind it and the ``failed`` ones (named in the table too)."""
    paths = [runs] if isinstance(runs, (str, os.PathLike)) else list(runs)
    return Comparison.from_dict(_native.compare([os.fspath(p) for p in paths]))


def skills_eval(
    bank: PathLike,
    *,
    checkpoint: Optional[PathLike] = None,
    config: Optional[PathLike] = None,
    dataset: Optional[str] = None,
    split: Optional[str] = None,
    limit: Optional[int] = None,
    skills: Sequence[str] = (),
    old: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
    resamples: int = 1000,
    cases: Optional[PathLike] = None,
    overrides: Overrides = None,
) -> SkillsEvalResult:
    """Does each skill of ``bank`` help on a dataset slice? As ``memskill skills eval``:
    every skill (or those in ``skills``) is replayed without it, at its version in ``old``
    and with it, on the same spans and seeds, with a trained run's controller picking
    skills (``checkpoint``) or every skill applied to every span (``config`` alone).
    ``cases`` is a JSON Lines file of expected triggers (activation precision / recall).

    Returns a ``SkillsEvalResult``: a ``SkillEval`` per skill (outcome delta with its 95%
    interval, gate verdict and reasons, the whole replay record), the printed table and
    ``out_dir`` (``skills-eval.md`` / ``.json``).
    """
    if checkpoint is None and config is None:
        raise MemskillError("skills_eval needs checkpoint= (a trained run) or config= (a config file)")
    return SkillsEvalResult.from_dict(
        _native.skills_eval(
            os.fspath(bank),
            checkpoint=_path(checkpoint),
            config=_path(config),
            dataset=dataset,
            split=split,
            limit=limit,
            skills=list(skills),
            old=_path(old),
            out=_path(out),
            resamples=resamples,
            cases=_path(cases),
            overrides=_sets(overrides),
        )
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the ``memskill`` command line with ``argv`` (default: ``sys.argv``, program name
    first) and returns its exit status. The command runs in Rust: during ``train`` and
    ``eval`` SIGINT / SIGTERM / SIGUSR1 stop it at its next safe point (status 75) and
    Python's own handlers are put back afterwards; otherwise Ctrl-C does not reach it (the
    console script restores the default SIGINT action, which ends the process)."""
    import sys

    args = list(sys.argv if argv is None else argv)
    return _native.main(args or ["memskill"])
