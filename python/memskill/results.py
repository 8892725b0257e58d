"""Typed results of ``memskill``'s functions: dataclasses with ``to_dict()``.

Each is built from what the Rust library returns (the same fields as the files the command
line writes: ``results.json``, ``skills-eval.json``, ...). ``to_dict()`` gives the plain
dict back, the whole record included (``EvaluationResult.to_dict()`` is ``results.json``
plus ``out_dir``). Indexing a result like a dict (``r["overall"]``) still works for code
written when these functions returned dicts, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


class _Result:
    """``to_dict()`` and the deprecated dict-style access shared by the result classes."""

    def to_dict(self) -> Dict[str, Any]:
        raw = getattr(self, "raw", None)
        if isinstance(raw, dict):
            return dict(raw)
        return {
            f.name: _plain(getattr(self, f.name))
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
            if f.name != "raw"
        }

    def __getitem__(self, key: str) -> Any:
        warnings.warn(
            f"{type(self).__name__}[{key!r}]: results are dataclasses now; use the attribute "
            f"or .to_dict()[{key!r}]",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.to_dict()[key]


def _plain(v: Any) -> Any:
    if isinstance(v, _Result):
        return v.to_dict()
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


@dataclass
class Score(_Result):
    """Scores over ``count`` questions: mean F1, mean LLM-judge score (None when no judge
    ran), failed answer calls (``errors``) and failed judge verdicts (``judge_errors``);
    failures are left out of the means, never scored 0."""

    count: int
    f1: float
    judge: Optional[float] = None
    errors: int = 0
    judge_errors: int = 0

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Score":
        return cls(
            count=int(d.get("count", 0)),
            f1=float(d.get("f1", 0.0)),
            judge=d.get("judge"),
            errors=int(d.get("errors", 0)),
            judge_errors=int(d.get("judge_errors", 0)),
        )


@dataclass
class F1Score(_Result):
    """Mean F1 over ``count`` lines (``memskill.score``)."""

    f1: float
    count: int


@dataclass
class ScoreResult(_Result):
    """``memskill.score``: overall and per-category F1, and every line's F1 in file order."""

    overall: F1Score
    by_category: Dict[str, F1Score]
    per_line: List[float]
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "ScoreResult":
        f = lambda x: F1Score(f1=float(x["f1"]), count=int(x["count"]))  # noqa: E731
        return cls(
            overall=f(d["overall"]),
            by_category={k: f(v) for k, v in d.get("by_category", {}).items()},
            per_line=list(d.get("per_line", [])),
            raw=d,
        )


@dataclass
class TrainResult(_Result):
    """``memskill.train``: where the run is and how far it got."""

    run_dir: str
    update_step: int
    updates_this_run: int
    finished: bool
    interrupted: bool
    outer_rewards: List[float]
    export_dir: Optional[str]
    last_checkpoint: Optional[str]
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "TrainResult":
        return cls(
            run_dir=str(d["run_dir"]),
            update_step=int(d["update_step"]),
            updates_this_run=int(d["updates_this_run"]),
            finished=bool(d["finished"]),
            interrupted=bool(d.get("interrupted", False)),
            outer_rewards=[float(x) for x in d.get("outer_rewards", [])],
            export_dir=d.get("export_dir"),
            last_checkpoint=d.get("last_checkpoint"),
            raw=d,
        )


@dataclass
class EvaluationResult(_Result):
    """``memskill.evaluate``: one evaluation (its ``results.json``). The main fields are
    attributes; ``queries`` keeps one dict per question; ``to_dict()`` is the whole file
    plus ``out_dir``."""

    out_dir: str
    method: str
    checkpoint: str
    dataset: str
    split: str
    executor: str
    top_k: int
    judge_model: Optional[str]
    overall: Score
    by_category: Dict[str, Score]
    memory_calls: int
    memory_call_errors: int
    queries: List[Dict[str, Any]] = field(repr=False)
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "EvaluationResult":
        return cls(
            out_dir=str(d.get("out_dir", "")),
            method=d["method"],
            checkpoint=d.get("checkpoint", ""),
            dataset=d["dataset"],
            split=d["split"],
            executor=d.get("executor", ""),
            top_k=int(d.get("top_k", 0)),
            judge_model=d.get("judge_model"),
            overall=Score.from_dict(d["overall"]),
            by_category={k: Score.from_dict(v) for k, v in d.get("by_category", {}).items()},
            memory_calls=int(d.get("memory_calls", 0)),
            memory_call_errors=int(d.get("memory_call_errors", 0)),
            queries=list(d.get("queries", [])),
            raw=d,
        )


@dataclass
class Estimate(_Result):
    """A mean with its 95% percentile-bootstrap interval over ``n`` items."""

    mean: float
    lo: float
    hi: float
    n: int

    @classmethod
    def maybe(cls, d: Optional[Dict[str, Any]]) -> Optional["Estimate"]:
        if d is None:
            return None
        return cls(mean=float(d["mean"]), lo=float(d["lo"]), hi=float(d["hi"]), n=int(d["n"]))


@dataclass
class Evaluation(_Result):
    """One evaluation as ``report`` and ``compare`` read it from its ``results.json``.
    Question answering (``kind == "qa"``) has ``f1`` and ``judge``; ALFWorld
    (``kind == "alfworld"``) has ``success`` and ``steps``. ``errors`` counts failed
    calls (answer, judge and memory-building; ALFWorld: environment errors)."""

    path: str
    kind: str
    method: str
    dataset: str
    split: str
    executor: str
    top_k: int
    errors: int
    questions: int = 0
    games: int = 0
    f1: Optional[Estimate] = None
    judge: Optional[Estimate] = None
    judge_model: Optional[str] = None
    success: Optional[Estimate] = None
    steps: Optional[Estimate] = None
    context_docs: Optional[int] = None
    external: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Evaluation":
        return cls(
            path=str(d["path"]),
            kind=d["kind"],
            method=d["method"],
            dataset=d["dataset"],
            split=d["split"],
            executor=d.get("executor", ""),
            top_k=int(d.get("top_k", 0)),
            errors=int(d.get("errors", 0)),
            questions=int(d.get("questions", 0)),
            games=int(d.get("games", 0)),
            f1=Estimate.maybe(d.get("f1")),
            judge=Estimate.maybe(d.get("judge")),
            judge_model=d.get("judge_model"),
            success=Estimate.maybe(d.get("success")),
            steps=Estimate.maybe(d.get("steps")),
            context_docs=d.get("context_docs"),
            external=d.get("external"),
        )


@dataclass
class TableRow(_Result):
    label: str
    cells: List[str]


@dataclass
class Table(_Result):
    """A report table: its title, the note saying what the numbers are, the column
    header and the rows (cell texts as the report prints them)."""

    title: str
    note: str
    header: List[str]
    rows: List[TableRow]

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Table":
        return cls(
            title=d["title"],
            note=d["note"],
            header=list(d["header"]),
            rows=[TableRow(label=r["label"], cells=list(r["cells"])) for r in d["rows"]],
        )


@dataclass
class ReportResult(_Result):
    """``memskill.report``: the files written, the evaluations in them, their tables and
    the evaluations that failed (named, left out of the tables)."""

    out_dir: str
    files: List[str]
    evaluations: List[Evaluation]
    tables: List[Table]
    failed: List[str]

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "ReportResult":
        return cls(
            out_dir=str(d["out_dir"]),
            files=[str(f) for f in d["files"]],
            evaluations=[Evaluation.from_dict(e) for e in d["evaluations"]],
            tables=[Table.from_dict(t) for t in d["tables"]],
            failed=list(d["failed"]),
        )


@dataclass
class Comparison(_Result):
    """``memskill.compare``: the table ``memskill compare`` prints (Markdown), the
    evaluations behind it and the failed ones."""

    table: str
    evaluations: List[Evaluation]
    failed: List[str]

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Comparison":
        return cls(
            table=d["table"],
            evaluations=[Evaluation.from_dict(e) for e in d["evaluations"]],
            failed=list(d["failed"]),
        )


@dataclass
class SkillEval(_Result):
    """One skill in ``memskill.skills_eval``: its outcome delta (with minus the better of
    without / old) with a 95% interval, whether it passes the gate rules and why not; the
    whole replay record (modes, tokens, activation) is ``run``."""

    skill: str
    version: str
    outcome_delta: float
    delta: Optional[Estimate]
    regressions: int
    token_overhead: float
    passed: bool
    reasons: List[str]
    run: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "SkillEval":
        run = d["run"]
        return cls(
            skill=run["skill"],
            version=str(run["version"]),
            outcome_delta=float(run["outcome_delta"]),
            delta=Estimate.maybe(d.get("delta")),
            regressions=int(run.get("regressions", 0)),
            token_overhead=float(run.get("token_overhead", 0.0)),
            passed=bool(run["passed"]),
            reasons=list(run.get("reasons", [])),
            run=run,
        )


@dataclass
class SkillsEvalResult(_Result):
    """``memskill.skills_eval``: a row per skill, the table ``memskill skills eval`` prints
    and the folder holding ``skills-eval.md`` and ``skills-eval.json``."""

    out_dir: str
    table: str
    rows: List[SkillEval]

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "SkillsEvalResult":
        return cls(
            out_dir=str(d["out_dir"]),
            table=d["table"],
            rows=[SkillEval.from_dict(r) for r in d["rows"]],
        )
