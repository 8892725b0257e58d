//! Actors choose the next command of a game: scripted (walkthrough, first admissible) or an LLM.

pub(crate) use memskill_core::jsonfix::{is_py_space as py_space, py_strip};
use memskill_core::{ChatRequest, Llm, Message, PromptSet};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};

/// One action and the observation it produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub action: String,
    pub obs: String,
}

/// What an actor sees before each step.
#[derive(Debug, Clone, Copy)]
pub struct ActorContext<'a> {
    /// The task, e.g. `put a pencil in dresser.`
    pub goal: &'a str,
    /// Procedural tips (memories) returned by [`Actor::begin`].
    pub tips: &'a [String],
    /// The first observation (room description and task).
    pub intro: &'a str,
    /// Actions taken so far and what they produced.
    pub history: &'a [StepRecord],
    /// Commands the environment accepts now.
    pub admissible: &'a [String],
    /// The latest observation.
    pub obs: &'a str,
    /// What the agent carries now, as the environment reports it ("" when unknown).
    pub inventory: &'a str,
    /// 0-based step number.
    pub step: usize,
}

/// How replies were matched to admissible commands during one game.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActorStats {
    pub exact: usize,
    pub substring: usize,
    /// Replies that matched nothing and fell back to the first admissible command.
    pub fallback: usize,
    /// LLM calls that failed (also fall back to the first admissible command).
    pub llm_errors: usize,
}

impl ActorStats {
    /// Adds `o`'s counters to these (totals over several games).
    pub fn merge(&mut self, o: &ActorStats) {
        self.exact += o.exact;
        self.substring += o.substring;
        self.fallback += o.fallback;
        self.llm_errors += o.llm_errors;
    }
}

/// Chooses commands. One actor plays one game.
pub trait Actor {
    /// Called once after reset with the objective and first observation; returns the tips
    /// shown in every [`ActorContext`] of this game.
    fn begin(&mut self, _goal: &str, _intro: &str) -> Vec<String> {
        Vec::new()
    }
    /// The next command.
    fn act(&mut self, ctx: &ActorContext<'_>) -> String;
    /// Matching counters for this game.
    fn stats(&self) -> ActorStats {
        ActorStats::default()
    }
}

/// Replays a game's expert walkthrough (then `look` if the game is not over).
#[derive(Debug, Clone)]
pub struct WalkthroughActor {
    actions: Vec<String>,
    next: usize,
}

impl WalkthroughActor {
    pub fn new(actions: Vec<String>) -> Self {
        WalkthroughActor { actions, next: 0 }
    }
}

impl Actor for WalkthroughActor {
    fn act(&mut self, _ctx: &ActorContext<'_>) -> String {
        let a = self
            .actions
            .get(self.next)
            .cloned()
            .unwrap_or_else(|| "look".into());
        self.next += 1;
        a
    }
}

/// Always sends the first admissible command (a weak baseline).
#[derive(Debug, Clone, Default)]
pub struct FirstAdmissibleActor;

impl Actor for FirstAdmissibleActor {
    fn act(&mut self, ctx: &ActorContext<'_>) -> String {
        ctx.admissible
            .first()
            .cloned()
            .unwrap_or_else(|| "look".into())
    }
}

/// How an LLM reply was turned into a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Substring,
    Fallback,
}

fn norm(s: &str) -> String {
    s.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Cleans one reply line: drops `ACTION:` / `>` prefixes, quotes, backticks and a final period.
fn clean_line(line: &str) -> String {
    let mut t = line.trim();
    for p in ["action:", "command:", ">"] {
        if t.len() >= p.len() && t[..p.len()].eq_ignore_ascii_case(p) {
            t = t[p.len()..].trim();
        }
    }
    let t = t
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c == '*')
        .trim();
    let t = t.strip_suffix('.').unwrap_or(t);
    norm(t)
}

/// How an LLM reply is turned into a command (`alfworld.reply_match`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplyMatch {
    /// The reference's `_parse_action_response` ([`match_reply_reference`]).
    #[default]
    Reference,
    /// Ours ([`match_reply`]): more forgiving, not the reference.
    WordBounded,
}

impl std::str::FromStr for ReplyMatch {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "reference" => Ok(ReplyMatch::Reference),
            "word-bounded" => Ok(ReplyMatch::WordBounded),
            _ => Err(format!(
                "unknown reply matching `{s}` (reference | word-bounded)"
            )),
        }
    }
}

/// The first line of `s` as Python's `str.splitlines()[0]` cuts it ("" for "").
fn py_first_line(s: &str) -> &str {
    let end = s
        .find([
            '\n', '\r', '\u{0b}', '\u{0c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
            '\u{2029}',
        ])
        .unwrap_or(s.len());
    &s[..end]
}

/// Drops a leading `action:` / `action =` / `action -` (any case, spaces around).
fn strip_action_prefix(s: &str) -> &str {
    let t = s.trim_start_matches(py_space);
    if t.len() >= 6 && t.is_char_boundary(6) && t[..6].eq_ignore_ascii_case("action") {
        let rest = t[6..].trim_start_matches(py_space);
        if let Some(r) = rest.strip_prefix([':', '=', '-']) {
            return r.trim_start_matches(py_space);
        }
    }
    s
}

/// The reference's reply parsing: the reply stripped of an `action:` prefix; its first line
/// (stripped, then stripped of `"`, `'` and backticks) equal to an admissible command ignoring
/// case (`Exact`); else the first admissible command, in list order, contained in the
/// lowercased reply (`Substring`, no word boundaries); else the first admissible command
/// (`Fallback`). An empty reply falls back too; with no admissible commands the first line
/// (or `look`) is sent.
pub fn match_reply_reference(reply: &str, admissible: &[String]) -> (String, MatchKind) {
    let text = py_strip(reply);
    if text.is_empty() {
        return (
            admissible.first().cloned().unwrap_or_else(|| "look".into()),
            MatchKind::Fallback,
        );
    }
    let text = strip_action_prefix(text);
    let line = py_strip(py_first_line(text))
        .trim_matches('"')
        .trim_matches('\'')
        .trim_matches('`');
    if admissible.is_empty() {
        let l = if line.is_empty() { "look" } else { line };
        return (l.to_string(), MatchKind::Fallback);
    }
    let line_l = line.to_lowercase();
    if let Some(c) = admissible.iter().find(|c| c.to_lowercase() == line_l) {
        return (c.clone(), MatchKind::Exact);
    }
    let lowered = text.to_lowercase();
    if let Some(c) = admissible
        .iter()
        .find(|c| lowered.contains(c.to_lowercase().as_str()))
    {
        return (c.clone(), MatchKind::Substring);
    }
    (admissible[0].clone(), MatchKind::Fallback)
}

/// Maps an LLM reply onto an admissible command: an exact match of any reply line (after
/// cleaning, case-insensitive), else the longest admissible command contained in the reply,
/// else the admissible command containing the cleaned first line, else the first admissible
/// command (`Fallback`). With no admissible commands the cleaned first line is returned.
pub fn match_reply(reply: &str, admissible: &[String]) -> (String, MatchKind) {
    let lines: Vec<String> = reply
        .lines()
        .map(clean_line)
        .filter(|l| !l.is_empty())
        .collect();
    let adm: Vec<String> = admissible.iter().map(|a| norm(a)).collect();
    for l in &lines {
        if let Some(i) = adm.iter().position(|a| a == l) {
            return (admissible[i].clone(), MatchKind::Exact);
        }
    }
    let whole = norm(reply);
    let contained = adm
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.is_empty() && contains_words(&whole, a))
        .max_by_key(|(i, a)| (a.len(), std::cmp::Reverse(*i)));
    if let Some((i, _)) = contained {
        return (admissible[i].clone(), MatchKind::Substring);
    }
    if let Some(first) = lines.first() {
        if first.len() >= 3 {
            if let Some(i) = adm.iter().position(|a| a.contains(first.as_str())) {
                return (admissible[i].clone(), MatchKind::Substring);
            }
        }
    }
    match admissible.first() {
        Some(a) => (a.clone(), MatchKind::Fallback),
        None => (
            lines.first().cloned().unwrap_or_else(|| "look".into()),
            MatchKind::Fallback,
        ),
    }
}

/// `needle` occurs in `hay` on word boundaries (so `cabinet 1` is not found in `cabinet 10`).
fn contains_words(hay: &str, needle: &str) -> bool {
    let mut from = 0;
    while let Some(pos) = hay[from..].find(needle) {
        let s = from + pos;
        let e = s + needle.len();
        let before_ok = s == 0
            || !hay[..s]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric());
        let after_ok =
            e == hay.len() || !hay[e..].chars().next().is_some_and(|c| c.is_alphanumeric());
        if before_ok && after_ok {
            return true;
        }
        from = s + needle.chars().next().map_or(1, |c| c.len_utf8());
    }
    false
}

/// Retrieves tips (memories) for a goal, e.g. top-R of a memory bank by the objective.
pub type TipSource = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// The LLM agent: prompt with goal, tips, history, inventory and admissible commands; one
/// command back.
#[derive(Clone)]
pub struct LlmActor {
    pub llm: Arc<dyn Llm>,
    /// Static tips shown in every game.
    pub tips: Vec<String>,
    /// Per-game tips looked up by the objective (added after the static tips).
    pub tip_source: Option<TipSource>,
    /// How many recent steps of history the prompt shows (the reference shows all).
    pub history_window: usize,
    pub max_tokens: u32,
    pub temperature: f32,
    /// Show the inventory (the reference does).
    pub include_inventory: bool,
    pub reply_match: ReplyMatch,
    /// Templates `actor.system.j2` / `actor.user.j2` (default: this crate's).
    pub prompts: Arc<PromptSet>,
    stats: ActorStats,
}

/// The LLM actor's knobs (defaults: the reference's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ActorSettings {
    pub history_window: usize,
    pub max_tokens: u32,
    pub temperature: f32,
    pub include_inventory: bool,
    pub reply_match: ReplyMatch,
}

impl Default for ActorSettings {
    fn default() -> Self {
        ActorSettings {
            history_window: usize::MAX,
            max_tokens: 32,
            temperature: 0.0,
            include_inventory: true,
            reply_match: ReplyMatch::Reference,
        }
    }
}

/// This crate's default templates as a set (built once).
pub fn default_prompts() -> Arc<PromptSet> {
    static SET: OnceLock<Arc<PromptSet>> = OnceLock::new();
    SET.get_or_init(|| {
        Arc::new(
            PromptSet::with_defaults(crate::PROMPT_TEMPLATES)
                .expect("the built-in ALFWorld templates parse (tested)"),
        )
    })
    .clone()
}

impl LlmActor {
    /// An actor with the reference's settings: whole history, inventory shown, reference
    /// reply matching, 32 reply tokens, temperature 0, the built-in templates.
    pub fn new(llm: Arc<dyn Llm>, tips: Vec<String>) -> Self {
        LlmActor {
            llm,
            tips,
            tip_source: None,
            history_window: usize::MAX,
            max_tokens: 32,
            temperature: 0.0,
            include_inventory: true,
            reply_match: ReplyMatch::Reference,
            prompts: default_prompts(),
            stats: ActorStats::default(),
        }
    }

    pub fn with_tip_source(mut self, src: TipSource) -> Self {
        self.tip_source = Some(src);
        self
    }

    /// Applies `s` (history window, reply budget, temperature, inventory, reply matching).
    pub fn with_settings(mut self, s: &ActorSettings) -> Self {
        self.history_window = s.history_window;
        self.max_tokens = s.max_tokens;
        self.temperature = s.temperature;
        self.include_inventory = s.include_inventory;
        self.reply_match = s.reply_match;
        self
    }

    /// Renders with `prompts` (a run's set, with `prompts.dir` overrides) instead of the
    /// built-in templates.
    pub fn with_prompts(mut self, prompts: Arc<PromptSet>) -> Self {
        self.prompts = prompts;
        self
    }
}

/// One step of history as the actor template sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ActorStep<'a> {
    pub action: &'a str,
    pub observation: &'a str,
}

/// The context of `actor.*.j2` (documented at the top of `prompts/actor.user.j2`).
#[derive(Debug, Clone, Serialize)]
pub struct ActorPrompt<'a> {
    pub goal: &'a str,
    pub tips: &'a [String],
    pub intro: &'a str,
    pub steps: Vec<ActorStep<'a>>,
    pub omitted: usize,
    pub inventory: &'a str,
    pub admissible: &'a [String],
    pub step: usize,
}

impl<'a> ActorPrompt<'a> {
    /// The template context of `ctx`: the last `history_window` steps, and the inventory
    /// when `include_inventory` and the environment reports one (the reference hides an empty,
    /// `none`, `null` or `(empty)` inventory).
    pub fn new(ctx: &ActorContext<'a>, history_window: usize, include_inventory: bool) -> Self {
        let skip = ctx.history.len().saturating_sub(history_window);
        let inv = py_strip(ctx.inventory);
        let inventory = if include_inventory
            && !inv.is_empty()
            && !matches!(inv.to_lowercase().as_str(), "none" | "null" | "(empty)")
        {
            inv
        } else {
            ""
        };
        ActorPrompt {
            goal: ctx.goal,
            tips: ctx.tips,
            intro: ctx.intro,
            steps: ctx.history[skip..]
                .iter()
                .map(|h| ActorStep {
                    action: &h.action,
                    observation: &h.obs,
                })
                .collect(),
            omitted: skip,
            inventory,
            admissible: ctx.admissible,
            step: ctx.step,
        }
    }
}

/// The actor prompt rendered from `actor.system.j2` / `actor.user.j2` of `prompts` (the
/// built-in ones: one user message, as the reference sends).
pub fn actor_prompt_messages(
    prompts: &PromptSet,
    ctx: &ActorContext<'_>,
    history_window: usize,
    include_inventory: bool,
) -> Result<Vec<Message>, memskill_core::PromptError> {
    prompts.render_chat(
        "actor",
        ActorPrompt::new(ctx, history_window, include_inventory),
    )
}

/// Render the actor templates once with sample data (tips, history with an omitted part,
/// with and without the inventory), so that a broken or runaway template is found at
/// start-up rather than at the first step.
pub fn sample_render(prompts: &PromptSet) -> Result<(), memskill_core::PromptError> {
    let tips = vec!["Look in drawers before shelves.".to_string()];
    let history: Vec<StepRecord> = (0..3)
        .map(|i| StepRecord {
            action: format!("go to drawer {i}"),
            obs: format!("You arrive at drawer {i}."),
        })
        .collect();
    let admissible = vec!["look".to_string(), "open drawer 1".to_string()];
    let ctx = ActorContext {
        goal: "put a pencil in dresser.",
        tips: &tips,
        intro: "You are in the middle of a room.",
        history: &history,
        admissible: &admissible,
        obs: "You arrive at drawer 2.",
        inventory: "You carry nothing.",
        step: 3,
    };
    for inventory in [false, true] {
        actor_prompt_messages(prompts, &ctx, 2, inventory)?;
    }
    Ok(())
}

/// Our earlier hand-written prompt (system + user message); kept for comparison only, the
/// actor renders [`actor_prompt_messages`].
pub fn actor_messages(ctx: &ActorContext<'_>, history_window: usize) -> Vec<Message> {
    let system = "You are an agent in a household text game (ALFWorld). Each turn you choose exactly one \
command from the list of admissible commands. Reply with the command only, copied exactly, nothing else.";
    let mut u = String::new();
    u.push_str(&format!("Your task: {}\n\n", ctx.goal.trim()));
    if !ctx.tips.is_empty() {
        u.push_str("Procedural tips from past experience:\n");
        for t in ctx.tips {
            u.push_str(&format!("- {}\n", t.trim()));
        }
        u.push('\n');
    }
    u.push_str(&format!("Initial observation:\n{}\n\n", ctx.intro.trim()));
    if !ctx.history.is_empty() {
        let skip = ctx.history.len().saturating_sub(history_window);
        u.push_str("History (oldest first):\n");
        if skip > 0 {
            u.push_str(&format!("({skip} earlier steps omitted)\n"));
        }
        for h in &ctx.history[skip..] {
            u.push_str(&format!("> {}\n{}\n", h.action.trim(), h.obs.trim()));
        }
        u.push('\n');
    }
    u.push_str(&format!("Current observation: {}\n\n", ctx.obs.trim()));
    u.push_str("Admissible commands:\n");
    for a in ctx.admissible {
        u.push_str(&format!("- {a}\n"));
    }
    u.push_str("\nReply with exactly one admissible command.");
    vec![Message::system(system), Message::user(u)]
}

impl Actor for LlmActor {
    fn begin(&mut self, goal: &str, _intro: &str) -> Vec<String> {
        let mut tips = self.tips.clone();
        if let Some(src) = &self.tip_source {
            tips.extend(src(goal));
        }
        tips
    }

    fn act(&mut self, ctx: &ActorContext<'_>) -> String {
        let messages = match actor_prompt_messages(
            &self.prompts,
            ctx,
            self.history_window,
            self.include_inventory,
        ) {
            Ok(m) => m,
            Err(e) => {
                // A broken user template: counted like a failed call (the game goes on).
                eprintln!("warning: ALFWorld actor prompt: {e}");
                self.stats.llm_errors += 1;
                self.stats.fallback += 1;
                return ctx
                    .admissible
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "look".into());
            }
        };
        let req = ChatRequest::new(messages)
            .with_max_tokens(self.max_tokens)
            .with_temperature(self.temperature);
        match self.llm.chat(&req) {
            Ok(resp) => {
                let (cmd, kind) = match self.reply_match {
                    ReplyMatch::Reference => match_reply_reference(&resp.text, ctx.admissible),
                    ReplyMatch::WordBounded => match_reply(&resp.text, ctx.admissible),
                };
                match kind {
                    MatchKind::Exact => self.stats.exact += 1,
                    MatchKind::Substring => self.stats.substring += 1,
                    MatchKind::Fallback => self.stats.fallback += 1,
                }
                cmd
            }
            Err(_) => {
                self.stats.llm_errors += 1;
                self.stats.fallback += 1;
                ctx.admissible
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "look".into())
            }
        }
    }

    fn stats(&self) -> ActorStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::{ChatResponse, LlmError, Usage};

    fn adm() -> Vec<String> {
        [
            "go to cabinet 1",
            "go to cabinet 10",
            "take pencil 1 from sidetable 1",
            "look",
            "inventory",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    #[test]
    fn exact_match_ignores_case_prefix_quotes_and_period() {
        let a = adm();
        assert_eq!(
            match_reply("go to cabinet 10", &a),
            ("go to cabinet 10".into(), MatchKind::Exact)
        );
        assert_eq!(
            match_reply("ACTION: Go to Cabinet 1.", &a).1,
            MatchKind::Exact
        );
        assert_eq!(
            match_reply("ACTION: Go to Cabinet 1.", &a).0,
            "go to cabinet 1"
        );
        assert_eq!(
            match_reply("> `look`", &a),
            ("look".into(), MatchKind::Exact)
        );
        assert_eq!(
            match_reply("Thinking...\n\"take pencil 1 from sidetable 1\"", &a),
            ("take pencil 1 from sidetable 1".into(), MatchKind::Exact)
        );
    }

    #[test]
    fn substring_prefers_longest_word_bounded_command() {
        let a = adm();
        let (c, k) = match_reply("I will go to cabinet 10 now because it is close", &a);
        assert_eq!((c.as_str(), k), ("go to cabinet 10", MatchKind::Substring));
        let (c, k) = match_reply("I should go to cabinet 1 first", &a);
        assert_eq!((c.as_str(), k), ("go to cabinet 1", MatchKind::Substring));
        // Reply is a fragment of one command.
        let (c, k) = match_reply("take pencil 1", &a);
        assert_eq!(
            (c.as_str(), k),
            ("take pencil 1 from sidetable 1", MatchKind::Substring)
        );
    }

    #[test]
    fn unmatched_reply_falls_back_to_first_admissible() {
        let a = adm();
        assert_eq!(
            match_reply("fly to the moon", &a),
            ("go to cabinet 1".into(), MatchKind::Fallback)
        );
        assert_eq!(match_reply("", &a).1, MatchKind::Fallback);
        assert_eq!(
            match_reply("open fridge 1", &[]),
            ("open fridge 1".into(), MatchKind::Fallback)
        );
        assert_eq!(match_reply("", &[]), ("look".into(), MatchKind::Fallback));
    }

    #[test]
    fn word_boundaries() {
        assert!(contains_words("go to cabinet 1 now", "cabinet 1"));
        assert!(!contains_words("go to cabinet 10", "cabinet 1"));
        assert!(contains_words("go to cabinet 10 or cabinet 1", "cabinet 1"));
        assert!(!contains_words("lookup", "look"));
    }

    struct Fixed(Result<String, LlmError>, std::sync::Mutex<Vec<ChatRequest>>);
    impl Llm for Fixed {
        fn id(&self) -> String {
            "fixed".into()
        }
        fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
            self.1.lock().unwrap().push(req.clone());
            self.0.clone().map(|text| ChatResponse {
                text,
                usage: Usage::default(),
                latency_ms: 0,
                cached: false,
                truncated: false,
            })
        }
    }

    #[test]
    fn llm_actor_prompts_and_counts() {
        let llm = Arc::new(Fixed(Ok("go to cabinet 10".into()), Default::default()));
        let mut actor = LlmActor::new(llm.clone(), vec!["static tip".into()])
            .with_tip_source(Arc::new(|g: &str| vec![format!("tip for {g}")]));
        let tips = actor.begin("put a pencil in dresser.", "intro");
        assert_eq!(
            tips,
            vec![
                "static tip".to_string(),
                "tip for put a pencil in dresser.".to_string()
            ]
        );
        let a = adm();
        let hist = vec![StepRecord {
            action: "look".into(),
            obs: "You see a room.".into(),
        }];
        let ctx = ActorContext {
            goal: "put a pencil in dresser.",
            tips: &tips,
            intro: "You are in the middle of a room.",
            history: &hist,
            admissible: &a,
            obs: "You see a room.",
            inventory: "You are carrying: a pencil 1.",
            step: 1,
        };
        assert_eq!(actor.act(&ctx), "go to cabinet 10");
        assert_eq!(actor.stats().exact, 1);
        let sent = llm.1.lock().unwrap();
        // One user message, as the reference sends.
        assert_eq!(sent[0].messages.len(), 1);
        assert_eq!(sent[0].max_tokens, 32);
        let user = &sent[0].messages[0].content;
        for needle in [
            "Task:\nput a pencil in dresser.",
            "1. static tip\n2. tip for put a pencil in dresser.",
            "You are in the middle of a room.\nACTION: look\nOBSERVATION: You see a room.",
            "You are carrying: a pencil 1.",
            "- go to cabinet 10",
        ] {
            assert!(user.contains(needle), "prompt lacks {needle:?}: {user}");
        }
        assert!(!user.ends_with('\n'));

        let bad = Arc::new(Fixed(
            Err(LlmError::Other("down".into())),
            Default::default(),
        ));
        let mut actor = LlmActor::new(bad, vec![]);
        assert_eq!(actor.act(&ctx), "go to cabinet 1");
        assert_eq!(
            actor.stats(),
            ActorStats {
                exact: 0,
                substring: 0,
                fallback: 1,
                llm_errors: 1
            }
        );
    }

    #[test]
    fn history_window_truncates() {
        let hist: Vec<StepRecord> = (0..10)
            .map(|i| StepRecord {
                action: format!("act{i}"),
                obs: format!("obs{i}"),
            })
            .collect();
        let ctx = ActorContext {
            goal: "g",
            tips: &[],
            intro: "i",
            history: &hist,
            admissible: &[],
            obs: "o",
            inventory: "",
            step: 10,
        };
        let m = actor_messages(&ctx, 3);
        assert!(m[1].content.contains("(7 earlier steps omitted)"));
        assert!(m[1].content.contains("> act9") && !m[1].content.contains("> act6\n"));
        let set = default_prompts();
        let m = actor_prompt_messages(&set, &ctx, 3, true).unwrap();
        assert!(m[0].content.contains("(7 earlier steps not shown)"));
        assert!(m[0].content.contains("ACTION: act9") && !m[0].content.contains("ACTION: act6\n"));
        // The reference shows the whole history.
        let m = actor_prompt_messages(&set, &ctx, usize::MAX, true).unwrap();
        assert!(m[0]
            .content
            .contains("i\nACTION: act0\nOBSERVATION: obs0\nACTION: act1"));
        assert!(!m[0].content.contains("not shown"));
    }

    #[test]
    fn inventory_shown_as_the_reference_does() {
        let a = adm();
        let mk = |inv: &'static str| ActorContext {
            goal: "g",
            tips: &[],
            intro: "room",
            history: &[],
            admissible: &[],
            obs: "room",
            inventory: inv,
            step: 0,
        };
        let _ = &a;
        let set = default_prompts();
        let with =
            actor_prompt_messages(&set, &mk("You are carrying: a mug 1."), 50, true).unwrap();
        assert!(with[0].content.contains("\nYou are carrying: a mug 1."));
        for hidden in ["", "  ", "None", "null", "(empty)"] {
            let m = actor_prompt_messages(&set, &mk(hidden), 50, true).unwrap();
            assert!(!m[0].content.contains("Inventory"), "{hidden:?}");
        }
        let off =
            actor_prompt_messages(&set, &mk("You are carrying: a mug 1."), 50, false).unwrap();
        assert!(!off[0].content.contains("mug"));
        // An empty history reads as such.
        let m = actor_prompt_messages(
            &set,
            &ActorContext {
                intro: "",
                ..mk("")
            },
            50,
            true,
        )
        .unwrap();
        assert!(m[0].content.contains("(nothing yet)"));
    }

    #[test]
    fn reference_reply_matching() {
        let a = adm();
        let m = |r: &str| match_reply_reference(r, &a);
        assert_eq!(
            m("go to cabinet 10"),
            ("go to cabinet 10".into(), MatchKind::Exact)
        );
        assert_eq!(
            m("  Action: `Go To Cabinet 1`\nbecause"),
            ("go to cabinet 1".into(), MatchKind::Exact)
        );
        assert_eq!(m("action = \"look\""), ("look".into(), MatchKind::Exact));
        // Substring: the FIRST admissible command (list order) found anywhere, no word
        // boundaries: `go to cabinet 1` is found inside `go to cabinet 10`.
        assert_eq!(
            m("I will go to cabinet 10 now"),
            ("go to cabinet 1".into(), MatchKind::Substring)
        );
        // A trailing period breaks the exact match but not the substring one.
        assert_eq!(m("look."), ("look".into(), MatchKind::Substring));
        assert_eq!(
            m("fly away"),
            ("go to cabinet 1".into(), MatchKind::Fallback)
        );
        assert_eq!(m("   "), ("go to cabinet 1".into(), MatchKind::Fallback));
        assert_eq!(
            match_reply_reference("", &[]),
            ("look".into(), MatchKind::Fallback)
        );
        assert_eq!(
            match_reply_reference("action: open fridge 1\nmore", &[]),
            ("open fridge 1".into(), MatchKind::Fallback)
        );
        // Our word-bounded matcher differs on the same reply.
        assert_eq!(
            match_reply("I will go to cabinet 10 now", &a).0,
            "go to cabinet 10"
        );
    }

    #[test]
    fn default_actor_is_the_reference_one() {
        let d = ActorSettings::default();
        assert_eq!(
            (
                d.max_tokens,
                d.include_inventory,
                d.reply_match,
                d.history_window
            ),
            (32, true, ReplyMatch::Reference, usize::MAX)
        );
        assert_eq!(
            "word-bounded".parse::<ReplyMatch>(),
            Ok(ReplyMatch::WordBounded)
        );
        assert!("fuzzy".parse::<ReplyMatch>().is_err());
        let set = default_prompts();
        assert!(set.contains("actor.user.j2") && set.contains("actor.system.j2"));
    }
}
