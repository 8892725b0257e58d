//! The contextual synthetic task (`data.synthetic_task = "contextual"`): spans of three
//! kinds, each needing its own skill, so the best policy must read the span. **Tests and
//! demos only**, like the rest of [`crate::synthetic`].
//!
//! Span `j` of sample `k` (marker `[ctx-k-j]`) is one of
//! - an *event* with a date ("On 12 March I saw the dentist; ..."), asked "When did Alex see
//!   the dentist?" — needs [`DATES_SKILL`];
//! - an object's *location* ("I put my red umbrella in the hallway cupboard; ..."), asked
//!   "Where did Alex leave the red umbrella?" — needs [`PLACES_SKILL`];
//! - a *preference* ("I like green tea better than coffee; ..."), asked "Which does Alex
//!   prefer, green tea or coffee?" — needs [`PREFS_SKILL`].
//!
//! The oracle executor writes the exact memory of the span only when the skill of the span's
//! kind is selected; the generic [`GIST_SKILL`] writes a note without the detail the question
//! needs, [`crate::synthetic::NOISE_SKILL`] a mood note, anything else NOOP. The oracle
//! answerer answers from the exact memory when it is among the memories shown, "unknown"
//! otherwise. So with K = 1 a span is answered only when the controller picks its kind's
//! skill: the controller must tell the kinds apart from the span text.

use memskill_core::{ActionKind, Query, Sample, Session, SkillBank, Span, Turn};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{skill, NOISE_SKILL};

/// Time-keeping skill (events with dates).
pub const DATES_SKILL: &str = "track-dates";
/// Location skill (where objects are).
pub const PLACES_SKILL: &str = "track-places";
/// Preference skill.
pub const PREFS_SKILL: &str = "track-preferences";
/// A generic skill that keeps the gist but drops the detail.
pub const GIST_SKILL: &str = "capture-gist";

/// The kind of a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Event,
    Location,
    Preference,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Event, Kind::Location, Kind::Preference];

    /// The skill this kind needs.
    pub fn skill(self) -> &'static str {
        match self {
            Kind::Event => DATES_SKILL,
            Kind::Location => PLACES_SKILL,
            Kind::Preference => PREFS_SKILL,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Event => "event",
            Kind::Location => "location",
            Kind::Preference => "preference",
        }
    }
}

const EVENTS: [(&str, &str); 8] = [
    ("saw the dentist", "see the dentist"),
    ("ran a half marathon", "run a half marathon"),
    ("moved into the new flat", "move into the new flat"),
    ("started the pottery class", "start the pottery class"),
    ("visited grandma in Leeds", "visit grandma in Leeds"),
    ("sold the old bicycle", "sell the old bicycle"),
    ("passed the driving test", "pass the driving test"),
    ("adopted a kitten", "adopt a kitten"),
];
const MONTHS: [&str; 6] = ["March", "April", "May", "June", "July", "August"];
const OBJECTS: [&str; 8] = [
    "red umbrella",
    "spare keys",
    "passport",
    "blue notebook",
    "tennis racket",
    "camera charger",
    "winter gloves",
    "library card",
];
const PLACES: [&str; 8] = [
    "hallway cupboard",
    "glovebox of the car",
    "top kitchen drawer",
    "garden shed",
    "office desk",
    "bedside table",
    "blue backpack",
    "attic box",
];
const PREFS: [(&str, &str); 8] = [
    ("green tea", "coffee"),
    ("trains", "planes"),
    ("jazz", "techno"),
    ("mountains", "beaches"),
    ("paperbacks", "e-books"),
    ("cycling", "driving"),
    ("dark chocolate", "milk chocolate"),
    ("early mornings", "late nights"),
];
pub(crate) const FILLER: [&str; 4] = [
    "Sam said, \"Sounds good.\"",
    "Sam said, \"Oh, nice.\"",
    "Sam said, \"Tell me more later.\"",
    "Sam said, \"Good to know.\"",
];

/// What one span states: its kind, the exact memory, the gist note, the question, the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub kind: Kind,
    pub said: String,
    pub memory: String,
    pub gist: String,
    pub question: String,
    pub answer: String,
}

fn fact(kind: Kind, slot: usize, rng: &mut ChaCha8Rng) -> Fact {
    match kind {
        Kind::Event => {
            let (past, base) = EVENTS[slot % EVENTS.len()];
            let date = format!(
                "{} {}",
                rng.random_range(1..=28),
                MONTHS[rng.random_range(0..MONTHS.len())]
            );
            Fact {
                kind,
                said: format!("On {date} I {past}; the date is on my calendar."),
                memory: format!("Alex {past} on {date}."),
                gist: format!("Alex mentioned that they {past}."),
                question: format!("When did Alex {base}?"),
                answer: date,
            }
        }
        Kind::Location => {
            let obj = OBJECTS[slot % OBJECTS.len()];
            let place = PLACES[rng.random_range(0..PLACES.len())];
            Fact {
                kind,
                said: format!("I put my {obj} in the {place}; that is where it is kept now."),
                memory: format!("Alex's {obj} is in the {place}."),
                gist: format!("Alex talked about the {obj}."),
                question: format!("Where did Alex leave the {obj}?"),
                answer: place.to_string(),
            }
        }
        Kind::Preference => {
            let (a, b) = PREFS[slot % PREFS.len()];
            let (x, y) = if rng.random_bool(0.5) { (a, b) } else { (b, a) };
            Fact {
                kind,
                said: format!("I like {x} better than {y}; {x} is my favourite."),
                memory: format!("Alex prefers {x} over {y}."),
                gist: format!("Alex compared {a} and {b}."),
                question: format!("Which does Alex prefer, {a} or {b}?"),
                answer: x.to_string(),
            }
        }
    }
}

/// The facts of sample `k`, in span order (deterministic in `seed`). Every kind's slots are
/// drawn without replacement, so no two spans of a sample share a question.
pub fn facts(k: usize, spans: usize, seed: u64) -> Vec<Fact> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0c7c_u64.wrapping_mul(k as u64 + 1));
    let mut slots: Vec<Vec<usize>> = Kind::ALL
        .iter()
        .map(|_| {
            let mut v: Vec<usize> = (0..8).collect();
            v.shuffle(&mut rng);
            v
        })
        .collect();
    (0..spans)
        .map(|j| {
            let ki = (j + k) % 3;
            let slot = slots[ki].pop().unwrap_or(j);
            fact(Kind::ALL[ki], slot, &mut rng)
        })
        .collect()
}

/// `n` contextual samples of `spans` spans each (at most 24: 8 per kind).
pub fn dataset(n: usize, spans: usize, seed: u64) -> Vec<Sample> {
    let spans = spans.min(24);
    (0..n)
        .map(|k| {
            let id = format!("ctx-{k}");
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed ^ k as u64);
            let mut sessions = Vec::new();
            let mut span_list = Vec::new();
            let mut queries = Vec::new();
            for (j, f) in facts(k, spans, seed).into_iter().enumerate() {
                let date = format!("{} September 2023", j + 1);
                let said = format!("Alex said, \"{}\"", f.said);
                let filler = FILLER[rng.random_range(0..FILLER.len())];
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
                span_list.push(Span {
                    id: format!("{id}:{j}"),
                    index: j,
                    session: Some(j + 1),
                    date: Some(date.clone()),
                    turn_ids: turns.iter().map(|t| t.id.clone()).collect(),
                    // the filler turn stays in the session, not in the span: the span is the
                    // statement whose kind the controller must recognise
                    text: format!("DATE: {date}\n[ctx-{k}-{j}] {said}"),
                });
                sessions.push(Session {
                    index: j + 1,
                    date: Some(date),
                    turns,
                });
                queries.push(Query {
                    id: format!("{id}:q{j}"),
                    question: f.question,
                    answers: vec![f.answer],
                    category: f.kind.name().into(),
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

/// The kind of each span of `sample` (from its query's category).
pub fn span_kinds(sample: &Sample) -> Vec<Kind> {
    sample
        .queries
        .iter()
        .map(|q| match q.category.as_str() {
            "event" => Kind::Event,
            "location" => Kind::Location,
            _ => Kind::Preference,
        })
        .collect()
}

/// The contextual task's skill bank: the three kind skills, the generic gist skill and the
/// mood distractor.
pub fn skill_bank() -> SkillBank {
    SkillBank::from_skills(vec![
        skill(
            DATES_SKILL,
            ActionKind::Insert,
            "Keep track of when things happened: store each event with its date.",
            "Write the event and its exact date as one sentence.",
        ),
        skill(
            PLACES_SKILL,
            ActionKind::Insert,
            "Keep track of where objects are: store each object with the place it was left.",
            "Write the object and the exact place it is kept as one sentence.",
        ),
        skill(
            PREFS_SKILL,
            ActionKind::Insert,
            "Keep track of what the user likes: store each stated preference and what it was preferred over.",
            "Write the preferred option and the option it beat as one sentence.",
        ),
        skill(
            GIST_SKILL,
            ActionKind::Insert,
            "Store a short note of the topic of the span.",
            "Write one short sentence naming what the span was about.",
        ),
        skill(
            NOISE_SKILL,
            ActionKind::Insert,
            "Record how the speakers feel.",
            "Write one sentence about the speakers' mood.",
        ),
    ])
    .expect("contextual skill names are valid and distinct")
}

fn sample_index(s: &Sample) -> usize {
    s.id.trim_start_matches("ctx-").parse().unwrap_or(0)
}

/// The fact behind a query of this task, read back from its question and answer (the
/// oracle needs no seed).
pub fn fact_of(q: &Query) -> Option<Fact> {
    let answer = q.answers.first()?.clone();
    if let Some(base) = q
        .question
        .strip_prefix("When did Alex ")
        .and_then(|r| r.strip_suffix('?'))
    {
        let (past, _) = EVENTS.iter().find(|(_, b)| *b == base)?;
        return Some(Fact {
            kind: Kind::Event,
            said: format!("On {answer} I {past}; the date is on my calendar."),
            memory: format!("Alex {past} on {answer}."),
            gist: format!("Alex mentioned that they {past}."),
            question: q.question.clone(),
            answer,
        });
    }
    if let Some(obj) = q
        .question
        .strip_prefix("Where did Alex leave the ")
        .and_then(|r| r.strip_suffix('?'))
    {
        return Some(Fact {
            kind: Kind::Location,
            said: format!("I put my {obj} in the {answer}; that is where it is kept now."),
            memory: format!("Alex's {obj} is in the {answer}."),
            gist: format!("Alex talked about the {obj}."),
            question: q.question.clone(),
            answer,
        });
    }
    let pair = q
        .question
        .strip_prefix("Which does Alex prefer, ")
        .and_then(|r| r.strip_suffix('?'))?;
    let (a, b) = pair.split_once(" or ")?;
    let other = if answer == a { b } else { a };
    Some(Fact {
        kind: Kind::Preference,
        said: format!("I like {answer} better than {other}; {answer} is my favourite."),
        memory: format!("Alex prefers {answer} over {other}."),
        gist: format!("Alex compared {a} and {b}."),
        question: q.question.clone(),
        answer,
    })
}

/// The oracle's reply for the contextual task; None when the prompt is neither an executor
/// prompt with a `[ctx-k-j]` marker nor a question of these samples.
pub fn reply(samples: &[Sample], prompt: &str, capacity: usize) -> Option<String> {
    let follows = |skill: &str| follows(prompt, skill, capacity);
    for s in samples {
        let k = sample_index(s);
        for j in 0..s.spans.len() {
            if prompt.contains(&format!("[ctx-{k}-{j}]")) {
                let f = fact_of(s.queries.get(j)?)?;
                let note = if follows(f.kind.skill()) {
                    f.memory
                } else if follows(GIST_SKILL) {
                    f.gist
                } else if follows(NOISE_SKILL) {
                    "The speakers sounded cheerful.".to_string()
                } else {
                    return Some("ACTION: NOOP".into());
                };
                return Some(format!("ACTION: INSERT\nMEMORY_ITEM: {note}"));
            }
        }
    }
    // A question (the same question can be asked in several samples, with different
    // answers): answered from its exact memory when one is shown.
    let asked: Vec<Fact> = samples
        .iter()
        .flat_map(|s| s.queries.iter().filter_map(fact_of))
        .filter(|f| prompt.contains(&f.question))
        .collect();
    if asked.is_empty() {
        return None;
    }
    Some(
        asked
            .iter()
            .find(|f| prompt.contains(&f.memory))
            .map_or_else(|| "unknown".to_string(), |f| f.answer.clone()),
    )
}

/// Whether the scripted executor follows `skill`: it is named in the prompt, and with a
/// `capacity` it is among the first `capacity` skills listed (`[Skill i] name` lines).
fn follows(prompt: &str, skill: &str, capacity: usize) -> bool {
    let listed: Vec<&str> = prompt
        .lines()
        .filter_map(|l| l.strip_prefix("[Skill "))
        .filter_map(|l| l.split_once("] ").map(|(_, name)| name.trim()))
        .collect();
    if capacity == 0 || listed.is_empty() {
        return prompt.contains(skill);
    }
    listed.iter().take(capacity).any(|n| *n == skill)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_needs_its_own_skill() {
        let ds = dataset(3, 6, 9);
        assert_eq!(dataset(3, 6, 9), ds, "deterministic");
        let kinds = span_kinds(&ds[1]);
        assert_eq!(
            kinds
                .iter()
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            3
        );
        for (j, kind) in kinds.iter().enumerate() {
            let span = &ds[1].spans[j].text;
            let f = &facts(1, 6, 9)[j];
            assert_eq!(fact_of(&ds[1].queries[j]).as_ref(), Some(f));
            let right = reply(&ds, &format!("skills: {}\n{span}", kind.skill()), 0).unwrap();
            assert_eq!(right, format!("ACTION: INSERT\nMEMORY_ITEM: {}", f.memory));
            for other in Kind::ALL.iter().filter(|o| *o != kind) {
                let wrong = reply(&ds, &format!("skills: {}\n{span}", other.skill()), 0).unwrap();
                assert_eq!(wrong, "ACTION: NOOP");
            }
            let gist = reply(&ds, &format!("skills: {GIST_SKILL}\n{span}"), 0).unwrap();
            assert!(gist.ends_with(&f.gist));
            // the answer needs the exact memory
            let q = &ds[1].queries[j];
            assert_eq!(
                reply(
                    &ds,
                    &format!("memories: {}\nQ: {}", f.memory, q.question),
                    0
                )
                .unwrap(),
                q.answers[0]
            );
            assert_eq!(
                reply(&ds, &format!("memories: {}\nQ: {}", f.gist, q.question), 0).unwrap(),
                "unknown"
            );
        }
        // the skills' own texts never name another kind's skill
        let bank = skill_bank();
        assert_eq!(bank.selectable().len(), 5);
    }

    #[test]
    fn a_limited_executor_follows_only_the_first_listed_skills() {
        let ds = dataset(1, 1, 9);
        let kind = span_kinds(&ds[0])[0];
        let span = &ds[0].spans[0].text;
        let f = &facts(0, 1, 9)[0];
        let listed = |names: &[&str]| {
            let list: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("[Skill {}] {n}", i + 1))
                .collect();
            format!("{}\n{span}", list.join("\n"))
        };
        let first = listed(&[kind.skill(), NOISE_SKILL, GIST_SKILL]);
        let last = listed(&[NOISE_SKILL, GIST_SKILL, kind.skill()]);
        let right = format!("ACTION: INSERT\nMEMORY_ITEM: {}", f.memory);
        assert_eq!(reply(&ds, &first, 2).unwrap(), right);
        assert_ne!(reply(&ds, &last, 2).unwrap(), right);
        // unlimited: any listed skill is followed
        assert_eq!(reply(&ds, &last, 0).unwrap(), right);
    }
}
