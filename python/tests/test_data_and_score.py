"""Dataset loaders and the scorer, against the Rust CLI's own results."""

import json
import subprocess
import sys

import pytest

import memskill


def test_locomo_loader_returns_plain_samples(fixtures):
    samples = memskill.load_locomo(fixtures / "locomo_small.json")
    assert isinstance(samples, list) and len(samples) == 2
    a = samples[0]
    assert a["id"] == "conv-a" and a["dataset"] == "locomo"
    assert [s["index"] for s in a["sessions"]] == [1, 2]
    assert a["sessions"][1]["date"] == "7:00 pm on 20 May, 2023"
    assert a["sessions"][0]["turns"][0]["id"] == "D1:1"
    # the adversarial question (category 5) is left out, as the trainer does
    assert [q["id"] for q in a["queries"]] == ["conv-a:q0", "conv-a:q1", "conv-a:q2", "conv-a:q4"]
    assert a["queries"][1]["answers"] == ["3"] and a["queries"][1]["category"] == "1"
    assert a["spans"] == []


def test_other_loaders(fixtures):
    lme = memskill.load_longmemeval(fixtures / "longmemeval_small.json")
    assert lme and all(s["dataset"] == "longmemeval" for s in lme)
    hq = memskill.load_hotpotqa(fixtures / "hotpotqa_longbench_small.jsonl")
    assert hq and all(s["dataset"] == "hotpotqa" for s in hq)
    assert memskill.load_dataset("locomo", fixtures / "locomo_small.json")[0]["id"] == "conv-a"


def test_loader_errors_name_the_file_and_field(fixtures):
    with pytest.raises(memskill.MemskillError) as e:
        memskill.load_locomo(fixtures / "locomo_missing_field.json")
    assert "locomo_missing_field.json: [0].conversation.session_2[1].text: missing field" in str(e.value)
    with pytest.raises(memskill.MemskillError, match="unknown|expected"):
        memskill.load_dataset("nosuchset", fixtures / "locomo_small.json")


def write_lines(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


LOCOMO_ROWS = [
    {"question_id": "a", "prediction": "the cat", "answer": "cat", "category": 2},
    {"question_id": "b", "prediction": "red apple", "answer": "apple", "category": 4},
    {"question_id": "c", "prediction": "dog", "answer": "cat", "category": 4},
]


def test_score_locomo(tmp_path):
    p = write_lines(tmp_path / "pred.jsonl", LOCOMO_ROWS)
    r = memskill.score("locomo", p)
    assert isinstance(r, memskill.ScoreResult)
    assert r.per_line == pytest.approx([1.0, 2 / 3, 0.0])
    assert (r.overall.f1, r.overall.count) == (pytest.approx(5 / 9), 3)
    assert (r.by_category["2"].f1, r.by_category["2"].count) == (1.0, 1)
    assert (r.by_category["4"].f1, r.by_category["4"].count) == (pytest.approx(1 / 3), 2)
    assert r.to_dict()["overall"] == {"f1": pytest.approx(5 / 9), "count": 3}
    # dict-style access of the old API still answers, with a DeprecationWarning
    with pytest.warns(DeprecationWarning, match="dataclasses"):
        assert r["by_category"]["2"] == {"f1": 1.0, "count": 1}


def test_score_matches_the_cli(tmp_path):
    p = write_lines(tmp_path / "pred.jsonl", LOCOMO_ROWS)
    out = subprocess.run(
        [sys.executable, "-m", "memskill", "score", "--predictions", str(p), "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    cli = json.loads(out)
    r = memskill.score("locomo", p).to_dict()
    del r["per_line"]
    assert cli == r


def test_score_hotpotqa_variants(tmp_path):
    p = write_lines(
        tmp_path / "pred.jsonl",
        [{"question": "q", "prediction": "Yes, they are", "answer": ["yes"]}],
    )
    assert memskill.score("hotpotqa", p).overall.f1 == pytest.approx(0.5)
    assert memskill.score("hotpotqa", p, hotpotqa_f1="official").overall.f1 == 0.0


def test_score_errors(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps(LOCOMO_ROWS[0]) + "\n{not json\n")
    with pytest.raises(memskill.MemskillError, match=r"bad.jsonl:2: invalid JSON"):
        memskill.score("locomo", p)
    q = write_lines(tmp_path / "nocat.jsonl", [{"question": "q", "prediction": "x", "answer": "y"}])
    with pytest.raises(memskill.MemskillError, match=r'nocat.jsonl:1: field "category" is missing'):
        memskill.score("locomo", q)
    with pytest.raises(memskill.MemskillError, match="dataset"):
        memskill.score("squad", q)
    with pytest.raises(memskill.MemskillError):
        memskill.score("locomo", tmp_path / "missing.jsonl")
