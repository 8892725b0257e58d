//! `scripts/fidelity/reference-prompts.sh` writes a prompt folder from the reference's own
//! prompt builders; loaded as `prompts.dir`, our code renders the executor, answer and judge
//! prompts of a real LoCoMo span and question byte for byte as the reference does.
//!
//! Skips (with a message) when the reference checkout or a Python with jinja2 is missing:
//! set MEMSKILL_REFERENCE / MEMSKILL_PYTHON to point at them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use memskill_core::{MemoryBank, MemoryItem, Provenance, Query, Role, Skill, SkillBank};
use memskill_executor::{JudgeContext, MemoryDomain};
use memskill_trainer::registry::{HOTPOTQA, LOCOMO, LONGMEMEVAL};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn first_existing(cands: Vec<PathBuf>) -> Option<PathBuf> {
    cands.into_iter().find(|p| p.exists())
}

fn reference() -> Option<PathBuf> {
    let mut c = Vec::new();
    if let Ok(p) = std::env::var("MEMSKILL_REFERENCE") {
        c.push(PathBuf::from(p));
    }
    c.push(PathBuf::from("/work/shared/reference/MemSkill"));
    c.push(repo_root().join("../shared/reference/MemSkill"));
    first_existing(c).filter(|p| p.join("src/executor.py").exists())
}

fn python() -> Option<String> {
    let mut c: Vec<String> = Vec::new();
    if let Ok(p) = std::env::var("MEMSKILL_PYTHON") {
        c.push(p);
    }
    let cache = std::env::var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache")
        });
    c.push(
        cache
            .join("memskill/fidelity-venv/bin/python")
            .display()
            .to_string(),
    );
    c.push("python3".into());
    c.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import jinja2, numpy"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

fn locomo_sample() -> memskill_core::Sample {
    let data = first_existing(vec![
        repo_root().join("../shared/data/locomo/locomo10.json"),
        PathBuf::from("/work/shared/data/locomo/locomo10.json"),
    ])
    .unwrap_or_else(|| repo_root().join("datasets/tests/fixtures/locomo_small.json"));
    eprintln!("LoCoMo data: {}", data.display());
    let mut samples = memskill_datasets::load(
        memskill_datasets::DatasetKind::Locomo,
        &data,
        &Default::default(),
    )
    .expect("LoCoMo loads");
    let mut s = samples.remove(0);
    memskill_datasets::segment(&mut s, &memskill_datasets::SpanMode::FullSession);
    s
}

fn items(texts: &[String]) -> Vec<MemoryItem> {
    let mut b = MemoryBank::new();
    texts
        .iter()
        .map(|t| {
            let id = b
                .insert(t.clone(), vec![1.0], Provenance::default())
                .unwrap();
            b.get(id).unwrap().clone()
        })
        .collect()
}

fn one_user(msgs: Vec<memskill_core::Message>) -> String {
    assert_eq!(
        msgs.len(),
        1,
        "the reference sends one user message: {msgs:?}"
    );
    assert_eq!(msgs[0].role, Role::User);
    msgs[0].content.clone()
}

#[test]
fn reference_prompt_folder_renders_the_reference_prompts_byte_for_byte() {
    let Some(reference) = reference() else {
        eprintln!("skipped: no reference checkout (set MEMSKILL_REFERENCE)");
        return;
    };
    let Some(py) = python() else {
        eprintln!("skipped: no Python with jinja2 and numpy (set MEMSKILL_PYTHON)");
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let st = Command::new("bash")
        .arg(repo_root().join("scripts/fidelity/reference-prompts.sh"))
        .arg(&reference)
        .arg(out.path())
        .arg("100")
        .env("MEMSKILL_PYTHON", &py)
        .status()
        .expect("runs reference-prompts.sh");
    assert!(st.success(), "reference-prompts.sh failed");
    let set = memskill_trainer::prompts::load(Some(out.path())).expect("the folder loads");
    for name in [
        "executor.user.j2",
        "answer.locomo.user.j2",
        "answer.longmemeval.user.j2",
        "answer.hotpotqa.user.j2",
        "judge.user.j2",
    ] {
        assert!(set.overridden().iter().any(|n| n == name), "{name}");
    }

    let sample = locomo_sample();
    let span = &sample.spans[0];
    let q: &Query = sample
        .queries
        .iter()
        .find(|q| q.category != "5")
        .expect("a question");
    let memories: Vec<String> = sample.spans[1..]
        .iter()
        .take(3)
        .map(|s| s.text.lines().last().unwrap_or("").to_string())
        .chain(["  padded memory \n".to_string()])
        .collect();
    let bank = SkillBank::seed();
    let skills: Vec<&Skill> = bank.skills().iter().take(3).collect();
    let mem_refs: Vec<&str> = memories.iter().map(String::as_str).collect();
    let mem_items = items(&memories);
    let mem_item_refs: Vec<&MemoryItem> = mem_items.iter().collect();
    let prediction = "  Caroline went to a LGBTQ support group ";
    let jc = JudgeContext::new(LOCOMO.judge_gold, q, prediction);

    let ours_exec = one_user(
        memskill_executor::executor_messages(
            &set,
            MemoryDomain::Conversation,
            span,
            &mem_refs,
            &skills,
        )
        .unwrap(),
    );
    let answer = |style| {
        one_user(memskill_executor::answer_messages(&set, style, q, &mem_item_refs).unwrap())
    };
    let ours_judge = one_user(memskill_executor::judge_messages(&set, &jc).unwrap());

    let input = serde_json::json!({
        "text": span.text,
        "memories": memories,
        "skills": skills.iter().map(|s| serde_json::json!({
            "name": s.name, "description": s.description,
            "instructions": s.instructions, "action": s.action.as_str(),
        })).collect::<Vec<_>>(),
        "question": q.question,
        "date": q.date.clone().unwrap_or_default(),
        "ground_truth": jc.ground_truth,
        "prediction": prediction,
    });
    let mut child = Command::new(&py)
        .arg(repo_root().join("scripts/fidelity/reference_prompts.py"))
        .args(["render", "--reference"])
        .arg(&reference)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("runs the reference's builders");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "reference render failed");
    let theirs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cmp = |name: &str, ours: &str| {
        let t = theirs[name].as_str().expect(name);
        assert!(
            ours == t,
            "{name} differs:\n--- ours\n{ours}\n--- reference\n{t}"
        );
    };
    cmp("executor.user.j2", &ours_exec);
    cmp("answer.locomo.user.j2", &answer(LOCOMO.answer));
    cmp("answer.longmemeval.user.j2", &answer(LONGMEMEVAL.answer));
    cmp("answer.hotpotqa.user.j2", &answer(HOTPOTQA.answer));
    cmp("judge.user.j2", &ours_judge);
}
