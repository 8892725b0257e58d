"""Training and evaluation on the synthetic task (scripted oracle, hashing encoder: no
model, no network; a few updates take seconds), Ctrl-C, and the console script."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import memskill


def synthetic(root):
    return root / "configs" / "synthetic.toml"


def test_train_then_evaluate(root, tmp_path):
    run = tmp_path / "runs" / "py-synthetic"
    r = memskill.train(
        synthetic(root),
        overrides={"run.outer_epochs": 1, "run.inner_epochs": 3, "run.batch_size": 4},
        run_dir=run,
    )
    assert isinstance(r, memskill.TrainResult)
    assert r.run_dir == str(run)
    assert r.update_step == 3 and r.updates_this_run == 3
    assert r.finished is True and r.interrupted is False
    assert len(r.outer_rewards) == 1 and 0.0 <= r.outer_rewards[0] <= 1.0
    assert pathlib.Path(r.last_checkpoint).is_dir()
    assert memskill.SkillBank.validate(r.export_dir)
    assert r.to_dict()["update_step"] == 3
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [x["step"] for x in lines if x["type"] == "update"] == [1, 2, 3]

    e = memskill.evaluate(run, limit=4, judge=False, out=tmp_path / "eval")
    assert isinstance(e, memskill.EvaluationResult)
    assert e.out_dir == str(tmp_path / "eval")
    assert e.overall.count == 4 and len(e.queries) == 4 and e.overall.judge is None
    assert e.dataset == "synthetic" and e.method and e.top_k >= 1
    saved = json.loads((tmp_path / "eval" / "results.json").read_text())
    d = e.to_dict()
    assert saved["overall"] == d["overall"] and saved["checkpoint_hash"] == d["checkpoint_hash"]
    assert {k: v for k, v in d.items() if k != "out_dir"} == saved

    # the report, the comparison and the release gate's replay over the same run
    rep = memskill.report(tmp_path / "eval", out=tmp_path / "report")
    assert isinstance(rep, memskill.ReportResult)
    assert (tmp_path / "report" / "report.html").is_file()
    assert any(f.endswith("report.md") for f in rep.files)
    [ev] = rep.evaluations
    assert ev.kind == "qa" and ev.questions == 4
    assert ev.f1.mean == pytest.approx(e.overall.f1) and ev.judge is None
    assert rep.tables and rep.tables[0].rows and not rep.failed

    e2 = memskill.evaluate(run, limit=4, judge=False)  # into the run's eval/ folder
    cmp = memskill.compare([run])
    assert isinstance(cmp, memskill.Comparison)
    assert "| " in cmp.table and not cmp.failed
    assert [x.f1.mean for x in cmp.evaluations] == [pytest.approx(e2.overall.f1)]
    assert cmp.evaluations[0].f1.lo <= cmp.evaluations[0].f1.mean <= cmp.evaluations[0].f1.hi

    se = memskill.skills_eval(
        r.export_dir, checkpoint=run, limit=4, resamples=50, out=tmp_path / "se"
    )
    assert isinstance(se, memskill.SkillsEvalResult)
    assert (tmp_path / "se" / "skills-eval.md").is_file() and se.out_dir == str(tmp_path / "se")
    names = set(memskill.SkillBank.load(r.export_dir).names)
    assert se.rows and {x.skill for x in se.rows} <= names
    assert all(x.delta is None or x.delta.lo <= x.delta.mean <= x.delta.hi for x in se.rows)
    assert all(x.passed or x.reasons for x in se.rows)
    assert all(x.skill in se.table for x in se.rows)


def test_train_errors(root, tmp_path):
    with pytest.raises(memskill.MemskillError, match="unknown key `nosuch`"):
        memskill.train(synthetic(root), overrides=["nosuch.key=1"], run_dir=tmp_path / "x")
    with pytest.raises(memskill.MemskillError, match="config is required"):
        memskill.train(run_dir=tmp_path / "x")
    with pytest.raises(TypeError):
        memskill.train(synthetic(root), overrides="run.seed=1")
    with pytest.raises(memskill.MemskillError):
        memskill.evaluate(tmp_path / "no-run")
    with pytest.raises(memskill.MemskillError, match="no such file or directory"):
        memskill.report(tmp_path / "no-run", out=tmp_path / "r")
    with pytest.raises(memskill.MemskillError, match="no eval"):
        memskill.compare(tmp_path)
    with pytest.raises(memskill.MemskillError, match="needs checkpoint= .* or config="):
        memskill.skills_eval(tmp_path / "bank.json")
    memskill.SkillBank.seed().save(tmp_path / "bank.json")
    with pytest.raises(memskill.MemskillError, match="no-run"):
        memskill.skills_eval(tmp_path / "bank.json", checkpoint=tmp_path / "no-run")


INTERRUPTED = textwrap.dedent(
    """
    import signal, sys, memskill
    # Python keeps SIGINT ignored when it starts with it ignored (a job started with `&` by a
    # non-interactive shell): Ctrl-C's handler is set here so the test does not depend on that
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        memskill.train(sys.argv[1], run_dir=sys.argv[2], overrides={
            "run.outer_epochs": 1, "run.inner_epochs": int(sys.argv[3]),
            "run.checkpoint_every": 100000, "run.batch_size": 4})
    except KeyboardInterrupt:
        print("KeyboardInterrupt raised", flush=True)
        sys.exit(3)
    print("not interrupted", flush=True)
    """
)


def test_ctrl_c_stops_at_a_checkpoint_and_resumes(root, tmp_path):
    run = tmp_path / "runs" / "interrupted"
    total = 150
    p = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, str(synthetic(root)), str(run), str(total)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    metrics = run / "metrics.jsonl"
    deadline = time.monotonic() + 120
    while not (metrics.exists() and metrics.read_text().count("\n") >= 2):
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "no update within 120 s"
        time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 3, (out, err)
    assert "KeyboardInterrupt raised" in out and "interrupted: stopping" in err
    assert "continue with resume=True" in err
    done = len([x for x in metrics.read_text().splitlines() if '"type":"update"' in x])
    assert 2 <= done < total
    assert f"stopped at update {done}: checkpoint " in err
    # with checkpoint_every far away, the checkpoint is the one the stop wrote
    latest = (run / "checkpoints" / "latest").read_text().strip()
    assert (run / "checkpoints" / latest).is_dir()
    r = memskill.train(run_dir=run, resume=True)
    assert r.finished is True
    assert r.update_step == total and r.updates_this_run == total - done


def console_script():
    exe = pathlib.Path(sys.executable).parent / ("memskill.exe" if os.name == "nt" else "memskill")
    if not exe.exists():
        pytest.skip(f"skipped: no console script at {exe} (package not installed in this venv)")
    return str(exe)


def test_console_script_is_the_cli(tmp_path):
    exe = console_script()
    v = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert v.returncode == 0 and v.stdout.startswith("memskill ")
    bad = subprocess.run(
        [exe, "score", "--predictions", str(tmp_path / "none.jsonl")], capture_output=True, text=True
    )
    assert bad.returncode == 1 and bad.stderr.startswith("error: ") and "none.jsonl" in bad.stderr
    usage = subprocess.run([exe, "no-such-command"], capture_output=True, text=True)
    assert usage.returncode == 2
    init = subprocess.run([exe, "skills", "init", "--out", str(tmp_path / "b.json")], capture_output=True, text=True)
    assert init.returncode == 0, init.stderr
    assert memskill.SkillBank.load(tmp_path / "b.json").names == memskill.SkillBank.seed().names


def test_console_script_ends_on_ctrl_c(tmp_path):
    exe = console_script()
    port = tmp_path / "port"
    p = subprocess.Popen(
        [exe, "llm", "serve-scripted", "--port-file", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not port.exists():
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the scripted server did not start"
        time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    try:
        assert p.wait(timeout=10) == -signal.SIGINT
    finally:
        p.kill()
