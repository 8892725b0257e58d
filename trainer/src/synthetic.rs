//! A synthetic task and a scripted oracle LLM for tests, demos and benchmarks. **Not a
//! research backend**: it exists so the closed loop can be tested offline and
//! deterministically.
//!
//! Each sample has `spans` spans; span `j` of sample `k` states one fact ("The code of
//! locker LkXj is amber.") and is tagged with the marker `[syn-k-j]`. Each fact has one
//! question. The skill bank holds one useful skill (`capture-facts`) and distractors. The
//! oracle executor emits the INSERT of the span's fact exactly when `capture-facts` is
//! among the selected skills in the executor prompt, a useless note when `note-mood` is,
//! a wrong code when `shorthand-colours` (a harmful skill a test's designer may propose) is, and
//! NOOP otherwise. The oracle answerer answers from the memories in its prompt: the
//! code when the fact is there, "unknown" otherwise. The oracle judge grades exactly: 1.0
//! when the graded answer is one of the references, else 0.0. The optimal policy therefore always
//! selects `capture-facts`. Serving another dataset's samples (LoCoMo with
//! `backend = "scripted-synthetic"`), the executor writes one memory per turn
//! ([`conversation`]).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

pub mod contextual;
pub mod conversation;
pub mod reading;

use memskill_core::{
    ActionKind, ChatRequest, ChatResponse, Llm, LlmError, Query, Sample, Session, Skill, SkillBank,
    Span, Turn,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The skill that leads to correct memories.
pub const USEFUL_SKILL: &str = "capture-facts";
/// A distractor that writes useless notes.
pub const NOISE_SKILL: &str = "note-mood";
/// Not in the bank: a skill a designer might propose that writes each locker code wrong
/// (the oracle stores the next colour of the list), so it hurts every answer it touches.
/// (Named `scramble-codes` before the guard: the guard's classifier reads a skill named for
/// scrambling codes that stores "locker codes in a compact shorthand" as one that hides
/// access codes, p 0.95, and rejects it before the release gate this skill exists to test.
/// The task's codes are colours; the skill now says so.)
pub const HARMFUL_SKILL: &str = "shorthand-colours";

const CODES: [&str; 16] = [
    "amber", "cobalt", "crimson", "olive", "saffron", "teal", "violet", "indigo", "maroon",
    "ochre", "scarlet", "ivory", "jade", "bronze", "coral", "azure",
];
const FILLER: [&str; 6] = [
    "Sam said, \"The weather was lovely this morning.\"",
    "Sam said, \"I watched a long film yesterday.\"",
    "Sam said, \"Lunch was a bit too salty.\"",
    "Sam said, \"My cat keeps sleeping on the keyboard.\"",
    "Sam said, \"Traffic was terrible on the bridge.\"",
    "Sam said, \"I might start jogging again.\"",
];

fn locker(k: usize, j: usize) -> String {
    format!("L{k}X{j}")
}

/// The fact sentence of span `j` of sample `k` with code `code`.
pub fn fact(k: usize, j: usize, code: &str) -> String {
    format!("The code of locker {} is {code}.", locker(k, j))
}

/// `n` synthetic samples of `spans` spans each, deterministic in `seed`. Spans are filled.
pub fn dataset(n: usize, spans: usize, seed: u64) -> Vec<Sample> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5f37_59df);
    (0..n)
        .map(|k| {
            let id = format!("syn-{k}");
            let mut sessions = Vec::new();
            let mut span_list = Vec::new();
            let mut queries = Vec::new();
            for j in 0..spans {
                let code = CODES[rng.random_range(0..CODES.len())];
                let filler = FILLER[rng.random_range(0..FILLER.len())];
                let date = format!("{} May 2023", j + 1);
                let said = format!("Alex said, \"{}\"", fact(k, j, code));
                let turns = vec![
                    Turn {
                        id: format!("D{}:1", j + 1),
                        speaker: "Alex".into(),
                        text: said.clone(),
                    },
                    Turn {
                        id: format!("D{}:2", j + 1),
                        speaker: "Sam".into(),
                        text: filler.into(),
                    },
                ];
                let text = format!("DATE: {date}\n[syn-{k}-{j}] {said}\n{filler}");
                span_list.push(Span {
                    id: format!("{id}:{j}"),
                    index: j,
                    session: Some(j + 1),
                    date: Some(date.clone()),
                    turn_ids: turns.iter().map(|t| t.id.clone()).collect(),
                    text,
                });
                sessions.push(Session {
                    index: j + 1,
                    date: Some(date),
                    turns,
                });
                queries.push(Query {
                    id: format!("{id}:q{j}"),
                    question: format!("What is the code of locker {}?", locker(k, j)),
                    answers: vec![code.to_string()],
                    category: "4".into(),
                    evidence: vec![format!("D{}:1", j + 1)],
                    date: None,
                });
            }
            Sample {
                id,
                dataset: crate::config::Dataset::Synthetic.name(),
                sessions,
                spans: span_list,
                queries,
            }
        })
        .collect()
}

/// An active 1.0.0 skill with provenance `synthetic` (tests and demos).
pub fn skill(name: &str, action: ActionKind, description: &str, instructions: &str) -> Skill {
    Skill::active(name, action, description, instructions, "synthetic")
}

/// The synthetic task's starting skill bank: one useful skill and three distractors.
pub fn skill_bank() -> SkillBank {
    SkillBank::from_skills(vec![
        skill(
            USEFUL_SKILL,
            ActionKind::Insert,
            "Store every locker code stated in the span as one sentence.",
            "Write the locker and its code as one self-contained sentence.",
        ),
        skill(
            NOISE_SKILL,
            ActionKind::Insert,
            "Record how the speakers feel.",
            "Write one sentence about the speakers' mood.",
        ),
        skill(
            "noop",
            ActionKind::Noop,
            "Leave memory unchanged.",
            "Do nothing.",
        ),
        skill(
            "delete",
            ActionKind::Delete,
            "Remove memories contradicted by the span.",
            "Delete a retrieved memory the span proves wrong.",
        ),
    ])
    .expect("synthetic skill names are valid and distinct")
}

/// The skill each span of the synthetic tasks should trigger (the activation eval's
/// expected triggers): the contextual task's span kind's skill, the locker task's
/// [`USEFUL_SKILL`] on every span (each states a code). Samples of neither task are left out.
/// The map is the gate's `ExpectedTriggers` (named here by its type: the gate is above this
/// module).
pub fn expected_triggers(samples: &[Sample]) -> BTreeMap<(String, usize), Option<String>> {
    let mut out = BTreeMap::new();
    for s in samples {
        if s.id.starts_with("ctx-") {
            for (j, k) in contextual::span_kinds(s).into_iter().enumerate() {
                out.insert((s.id.clone(), j), Some(k.skill().to_string()));
            }
        } else if s.id.starts_with("syn-") {
            for j in 0..s.spans.len() {
                out.insert((s.id.clone(), j), Some(USEFUL_SKILL.to_string()));
            }
        }
    }
    out
}

/// Spans no skill of the synthetic tasks should trigger on (small talk without a fact):
/// the negative cases `memskill data cases` adds as texts.
pub fn negative_texts() -> Vec<String> {
    contextual::FILLER
        .iter()
        .chain(FILLER.iter())
        .map(|t| t.to_string())
        .collect()
}

/// Deterministic oracle LLM for the synthetic task (see the module docs). Tests only.
pub struct SyntheticOracle {
    samples: Vec<Sample>,
    latency: Duration,
    /// What designer (and other non-executor, non-answer) prompts get instead of "no change".
    designer_reply: Option<String>,
    /// Contextual task: skills of the executor prompt followed, the first ones (0 = all).
    capacity: usize,
}

impl SyntheticOracle {
    pub fn new(samples: Vec<Sample>, latency_ms: u64) -> Self {
        Self {
            samples,
            latency: Duration::from_millis(latency_ms),
            designer_reply: None,
            capacity: 0,
        }
    }

    /// Follow at most `n` of the skills an executor prompt lists (contextual task; 0 = all).
    pub fn with_capacity(mut self, n: usize) -> Self {
        self.capacity = n;
        self
    }

    /// Answer designer rounds with `reply` (e.g. a JSON list of changes) instead of "no change".
    pub fn with_designer_reply(mut self, reply: String) -> Self {
        self.designer_reply = Some(reply);
        self
    }

    /// The reply of a rule that comes before the locker task's own: the contextual task's
    /// prompts, and the reading methods' (Chain-of-Notes, ReadAgent), whose passages may
    /// carry span markers too.
    fn first_rules(&self, prompt: &str) -> Option<String> {
        if self.samples.iter().any(|s| s.id.starts_with("ctx-")) {
            if let Some(r) = contextual::reply(&self.samples, prompt, self.capacity) {
                return Some(r);
            }
        }
        reading::reply(prompt)
    }

    /// The scripted reply for a prompt.
    pub fn reply(&self, prompt: &str) -> String {
        if let Some(r) = self.first_rules(prompt) {
            return r;
        }
        // Executor prompt: it carries one span marker.
        for s in &self.samples {
            for (j, sp) in s.spans.iter().enumerate() {
                let k: usize = s.id.trim_start_matches("syn-").parse().unwrap_or(0);
                if prompt.contains(&format!("[syn-{k}-{j}]")) {
                    if prompt.contains(USEFUL_SKILL) {
                        let code = s
                            .queries
                            .get(j)
                            .and_then(|q| q.answers.first())
                            .cloned()
                            .unwrap_or_default();
                        return format!("ACTION: INSERT\nMEMORY_ITEM: {}", fact(k, j, &code));
                    }
                    if prompt.contains(HARMFUL_SKILL) {
                        let code = s.queries.get(j).and_then(|q| q.answers.first());
                        let at = CODES.iter().position(|c| Some(&c.to_string()) == code);
                        let wrong = CODES[at.map_or(0, |i| (i + 1) % CODES.len())];
                        return format!("ACTION: INSERT\nMEMORY_ITEM: {}", fact(k, j, wrong));
                    }
                    if prompt.contains(NOISE_SKILL) {
                        return format!(
                            "ACTION: INSERT\nMEMORY_ITEM: The speakers seemed relaxed on {}.",
                            sp.date.clone().unwrap_or_default()
                        );
                    }
                    return "ACTION: NOOP".into();
                }
            }
        }
        // Another dataset's conversation (LoCoMo run with the scripted backend): one memory
        // per turn (`conversation`).
        let synthetic = crate::config::Dataset::Synthetic.descriptor().name;
        if !self.samples.iter().any(|s| s.dataset == synthetic) {
            if let Some(r) = conversation::executor_reply(prompt) {
                return r;
            }
        }
        // The general judge (judge.user.j2): an oracle grades exactly, 1.0 for the gold
        // answer and 0.0 for anything else, so an evaluation's L-J equals its exact match.
        if let Some(verdict) = judge_reply(prompt) {
            return verdict;
        }
        // Answer prompt: the (single) question about a locker.
        let mut asked: Vec<(usize, usize)> = Vec::new();
        for s in &self.samples {
            let k: usize = s.id.trim_start_matches("syn-").parse().unwrap_or(0);
            for j in 0..s.queries.len() {
                if prompt.contains(&format!("What is the code of locker {}?", locker(k, j))) {
                    asked.push((k, j));
                }
            }
        }
        if asked.len() == 1 {
            let (k, j) = asked[0];
            let needle = format!("The code of locker {} is ", locker(k, j));
            if let Some(pos) = prompt.find(&needle) {
                let rest = &prompt[pos + needle.len()..];
                let code: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                return code;
            }
            return "unknown".into();
        }
        // Anything else (designer rounds, judges): a well-formed "no change", or the reply
        // the oracle was given for them.
        match &self.designer_reply {
            Some(r) => r.clone(),
            None => "{\"changes\": [{\"type\": \"no_change\"}]}".into(),
        }
    }
}

/// The oracle's verdict on a general-judge prompt (`[Reference Answers]` ... `[Answer to
/// Grade]` ...): `{"explanation", "score"}` with 1.0 when the graded answer is one of the
/// references (case and surrounding space aside), else 0.0; None for any other prompt.
fn judge_reply(prompt: &str) -> Option<String> {
    let (_, after_gold) = prompt.split_once("[Reference Answers]")?;
    let (gold, after) = after_gold.split_once("[Answer to Grade]")?;
    let graded = after.trim_start().split("\n\n").next().unwrap_or("").trim();
    let norm = |t: &str| t.trim().to_lowercase();
    let right = gold
        .trim()
        .split(", ")
        .any(|g| !g.trim().is_empty() && norm(g) == norm(graded));
    let score = if right { 1.0 } else { 0.0 };
    Some(format!(
        "{{\"explanation\": \"the oracle compares the answer with the references\", \"score\": {score:.1}}}"
    ))
}

impl Llm for SyntheticOracle {
    fn id(&self) -> String {
        "scripted-synthetic".into()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let start = Instant::now();
        let prompt = crate::scripted_server::joined_prompt(req);
        let mut text = self.reply(&prompt);
        // a structured executor request gets the same actions in the schema's JSON form
        if req
            .response_schema
            .as_ref()
            .is_some_and(|rs| rs.name == memskill_executor::structured::EXECUTOR_SCHEMA_NAME)
        {
            text = memskill_executor::actions_json(&memskill_executor::parse_response(
                &text,
                usize::MAX,
            ));
        }
        if !self.latency.is_zero() {
            std::thread::sleep(self.latency);
        }
        Ok(crate::scripted_server::scripted_reply(&prompt, text, start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oracle_judges_exactly() {
        let p = |gold: &str, answer: &str| {
            format!("Grade it.\n\n[Question]\nq?\n\n[Reference Answers]\n{gold}\n\n[Answer to Grade]\n{answer}\n\nWhat to check: ...")
        };
        let score = |r: Option<String>| memskill_executor::parse_judge(&r.unwrap());
        assert_eq!(score(judge_reply(&p("teal", "Teal "))), Some(1.0));
        assert_eq!(score(judge_reply(&p("teal, cyan", "cyan"))), Some(1.0));
        assert_eq!(score(judge_reply(&p("teal", "unknown"))), Some(0.0));
        assert!(judge_reply("What is the code of locker 3?").is_none());
    }

    #[test]
    fn oracle_follows_the_selected_skill_and_memories() {
        let ds = dataset(2, 3, 1);
        let o = SyntheticOracle::new(ds.clone(), 0);
        let span = &ds[1].spans[2].text;
        let good = o.reply(&format!("skills: {USEFUL_SKILL}\n{span}"));
        let code = &ds[1].queries[2].answers[0];
        assert_eq!(
            good,
            format!("ACTION: INSERT\nMEMORY_ITEM: {}", fact(1, 2, code))
        );
        assert_eq!(o.reply(&format!("skills: noop\n{span}")), "ACTION: NOOP");
        let q = &ds[1].queries[2].question;
        assert_eq!(
            o.reply(&format!("memories: {}\nQ: {q}", fact(1, 2, code))),
            *code
        );
        assert_eq!(o.reply(&format!("memories: none\nQ: {q}")), "unknown");
        assert_eq!(dataset(2, 3, 1), ds, "deterministic in the seed");
    }
}
