//! `memskill preflight`'s pure parts, beside [`crate::inspect`]: the prompts a config will
//! send, rendered with the run's own templates over its own data ([`render`]); their
//! longest and mean token counts through any token counter ([`measure`]); the overflow
//! check; the whole run's LLM calls and tokens per role ([`estimate`]) and its wall time at
//! a probed throughput; the report as a table ([`Report::render`]) or JSON. The HTTP probes
//! are at the edge (the CLI's `preflight.rs`, the executor's `backends/probe.rs`).
//!
//! What a rendered prompt holds: the span (or question) of the data, the K selectable skills
//! with the longest texts (the most a selection can add), and no retrieved memories (they
//! are written by the model during the run, so unknown before it): the retrieved memories
//! come on top of the counts here. The designer's prompts are rendered with the longest
//! training questions as its hard cases (gold answers, no prediction, no memories).

use anyhow::{Context, Result};
use memskill_core::{Message, PromptSet, Query, Sample, Skill, SkillBank};
use serde::Serialize;

use crate::config::{Config, RewardKind};
use crate::inspect::Plan;

/// How many of the longest prompts of a role are counted exactly.
pub const KEEP: usize = 5;

/// Training or the evaluation after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Train,
    Eval,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Train => "train",
            Phase::Eval => "eval",
        }
    }
}

/// An LLM role of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Executor,
    Answer,
    Judge,
    Designer,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Executor, Role::Answer, Role::Judge, Role::Designer];

    pub fn name(self) -> &'static str {
        match self {
            Role::Executor => "executor",
            Role::Answer => "answer",
            Role::Judge => "judge",
            Role::Designer => "designer",
        }
    }

    /// The role's LLM section of `cfg` (answer, judge and designer fall back to the
    /// executor's as a run does).
    pub fn llm(self, cfg: &Config) -> &crate::config::LlmConfig {
        match self {
            Role::Executor => &cfg.executor,
            Role::Answer => cfg.answer_llm(),
            Role::Judge => cfg.judge_llm(),
            Role::Designer => cfg.designer_llm(),
        }
    }
}

/// The prompts of one role in one phase: how many, their total characters and the
/// [`KEEP`] longest (where from, text), longest first.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub phase: Phase,
    pub role: Role,
    pub count: usize,
    pub total_chars: usize,
    pub longest: Vec<(String, String)>,
    /// The reply budget of these calls.
    pub max_tokens: u32,
}

impl Rendered {
    fn new(phase: Phase, role: Role, max_tokens: u32) -> Self {
        Self {
            phase,
            role,
            count: 0,
            total_chars: 0,
            longest: Vec::new(),
            max_tokens,
        }
    }

    fn push(&mut self, at: String, messages: &[Message]) {
        let text = joined(messages);
        let n = text.chars().count();
        self.count += 1;
        self.total_chars += n;
        let pos = self
            .longest
            .iter()
            .position(|(_, t)| t.chars().count() < n)
            .unwrap_or(self.longest.len());
        if pos < KEEP {
            self.longest.insert(pos, (at, text));
            self.longest.truncate(KEEP);
        }
    }

    pub fn mean_chars(&self) -> f64 {
        self.total_chars as f64 / self.count.max(1) as f64
    }
}

/// A chat as one text for a tokenizer: each message's role and content on their own lines
/// (the server's chat template adds a few special tokens per message on top).
pub fn joined(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        let role = match m.role {
            memskill_core::Role::System => "system",
            memskill_core::Role::User => "user",
            memskill_core::Role::Assistant => "assistant",
        };
        out.push_str(role);
        out.push('\n');
        out.push_str(&m.content);
        out.push('\n');
    }
    out
}

/// What [`render`] renders from.
pub struct Inputs<'a> {
    pub cfg: &'a Config,
    pub prompts: &'a PromptSet,
    /// The bank a training run starts from.
    pub train_bank: &'a SkillBank,
    /// The bank the evaluation selects from (a checkpoint's, else the training bank).
    pub eval_bank: &'a SkillBank,
    pub train: &'a [Sample],
    pub eval: &'a [Sample],
}

/// The `k` selectable skills of `bank` with the longest texts, longest first.
pub fn longest_skills(bank: &SkillBank, k: usize) -> Vec<&Skill> {
    let mut skills: Vec<&Skill> = bank.selectable();
    skills.sort_by_key(|s| {
        std::cmp::Reverse(s.name.len() + s.description.len() + s.instructions.len())
    });
    skills.truncate(k);
    skills
}

/// Every prompt of the run of `inp.cfg` that can be rendered before it: per phase, the
/// executor's for every span, the answerer's and (when judged) the judge's for every
/// question, and in training the designer's rounds. Roles a phase does not use are left out.
pub fn render(inp: &Inputs<'_>) -> Result<Vec<Rendered>> {
    let cfg = inp.cfg;
    let mut out = Vec::new();
    let train_judged = cfg.reward.kind == RewardKind::Judge;
    for (phase, samples, bank, k, judged) in [
        (
            Phase::Train,
            inp.train,
            inp.train_bank,
            cfg.controller.top_k,
            train_judged,
        ),
        (
            Phase::Eval,
            inp.eval,
            inp.eval_bank,
            cfg.eval.top_k,
            cfg.eval.judge,
        ),
    ] {
        out.push(render_executor(
            inp,
            phase,
            samples,
            &longest_skills(bank, k),
        )?);
        out.push(render_answers(inp, phase, samples)?);
        if judged {
            out.push(render_judge(inp, phase, samples)?);
        }
    }
    if cfg.designer.enabled {
        out.push(render_designer(inp)?);
    }
    Ok(out)
}

fn render_executor(
    inp: &Inputs<'_>,
    phase: Phase,
    samples: &[Sample],
    skills: &[&Skill],
) -> Result<Rendered> {
    let cfg = inp.cfg;
    let mut r = Rendered::new(phase, Role::Executor, cfg.executor.max_tokens);
    let form = memskill_executor::ReplyForm {
        structured: cfg.executor.structured.is_on(),
        typed: cfg.executor.typed_memories,
        scoped: cfg.executor.scoped_memories,
    };
    let domain = crate::episode::memory_domain(cfg.data.dataset);
    for sample in samples {
        for span in &sample.spans {
            let users = crate::episode::span_users(sample, span);
            let m = memskill_executor::executor_messages_with(
                inp.prompts,
                domain,
                span,
                &[],
                skills,
                form,
                &users,
            )
            .with_context(|| format!("executor prompt for span {}", span.id))?;
            r.push(span.id.clone(), &m);
        }
    }
    Ok(r)
}

fn render_answers(inp: &Inputs<'_>, phase: Phase, samples: &[Sample]) -> Result<Rendered> {
    let cfg = inp.cfg;
    let dataset = cfg.data.dataset;
    let style = dataset.descriptor().answer;
    let mut r = Rendered::new(phase, Role::Answer, cfg.answer_max_tokens(dataset));
    for q in samples.iter().flat_map(|s| &s.queries) {
        let m = memskill_executor::answer_messages(inp.prompts, style, q, &[])
            .with_context(|| format!("answer prompt for {}", q.id))?;
        r.push(q.id.clone(), &m);
    }
    Ok(r)
}

fn render_judge(inp: &Inputs<'_>, phase: Phase, samples: &[Sample]) -> Result<Rendered> {
    use memskill_executor::{JudgeContext, JudgeStyle};
    let cfg = inp.cfg;
    let bench = cfg.data.dataset.descriptor();
    let yes_no = cfg.eval.judge_style == JudgeStyle::LongmemevalYesNo && bench.yes_no_judge;
    let mut r = Rendered::new(phase, Role::Judge, cfg.eval.judge_max_tokens);
    for q in samples.iter().flat_map(|s| &s.queries) {
        // the prediction is unknown: the gold answer stands in for it
        let prediction = q.answers.first().map(String::as_str).unwrap_or("");
        let jc = JudgeContext::new(bench.judge_gold, q, prediction);
        let m = if yes_no {
            memskill_executor::lme_judge_messages(inp.prompts, &jc)
        } else {
            memskill_executor::judge_messages(inp.prompts, &jc)
        }
        .with_context(|| format!("judge prompt for {}", q.id))?;
        r.push(q.id.clone(), &m);
    }
    Ok(r)
}

/// The designer's rounds (analysis, the reflections, the refinement) over the longest
/// training questions as hard cases; the refinement's reply budget is the larger one.
fn render_designer(inp: &Inputs<'_>) -> Result<Rendered> {
    use memskill_designer::prompts::{case_views, render_round, skill_views, DesignerContext};
    let d = &inp.cfg.designer.cfg;
    let s = &inp.cfg.select;
    let n = if s.max_total == 0 {
        s.clusters * s.per_cluster
    } else {
        s.max_total
    };
    let mut queries: Vec<(&Sample, &Query)> = inp
        .train
        .iter()
        .flat_map(|s| s.queries.iter().map(move |q| (s, q)))
        .collect();
    queries.sort_by_key(|(_, q)| std::cmp::Reverse(q.question.len() + q.answers.join(" ").len()));
    let cases: Vec<memskill_designer::HardCase> = queries
        .iter()
        .take(n)
        .map(|(s, q)| memskill_designer::HardCase {
            query_id: q.id.clone(),
            question: q.question.clone(),
            gold: q.answers.join(" | "),
            category: q.category.clone(),
            sample_id: s.id.clone(),
            fail_count: 1,
            ..Default::default()
        })
        .collect();
    let lim = memskill_designer::prompts::PromptLimits {
        max_retrieved: d.max_retrieved_per_case,
        max_memory_chars: d.max_memory_chars,
        max_evidence_chars: d.max_evidence_chars,
    };
    let mut ctx = DesignerContext {
        skills: skill_views(inp.train_bank, &d.score),
        cases: case_views(&cases, lim),
        feedback: None,
        max_changes: d.max_changes,
        new_skill_hint: d.new_skill_hint,
        refine_only: d.mode == memskill_designer::DesignerMode::RefineOnly,
        interactive: d.interactive,
        round: 1,
        rounds: d.reflection_cycles.max(1),
        analysis: String::new(),
        bank_operations: d.operations == memskill_designer::config::Operations::Governance,
    };
    let mut r = Rendered::new(
        Phase::Train,
        Role::Designer,
        d.max_tokens.max(d.refinement_max_tokens),
    );
    for round in 1..=ctx.rounds {
        ctx.round = round;
        let name = if round == 1 { "analysis" } else { "reflection" };
        r.push(
            format!("{name} round {round}"),
            &render_round(inp.prompts, name, &ctx)?,
        );
    }
    r.push(
        "refinement".into(),
        &render_round(inp.prompts, "refinement", &ctx)?,
    );
    Ok(r)
}

/// A role's prompts in tokens.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    pub phase: Phase,
    pub role: Role,
    /// Prompts rendered.
    pub prompts: usize,
    /// Mean tokens per prompt: the mean characters at the tokens-per-character of the
    /// longest prompts (which are counted exactly).
    pub mean_tokens: f64,
    pub longest_tokens: usize,
    /// Where the longest prompt comes from (a span or question id, a designer round).
    pub longest_at: String,
    pub max_tokens: u32,
}

/// `r` in tokens: its [`KEEP`] longest prompts counted by `count`, the mean from them.
pub fn measure(
    r: &Rendered,
    count: &mut dyn FnMut(&str) -> Result<usize, String>,
) -> Result<Measured, String> {
    let mut longest = (0usize, String::new());
    let (mut tokens, mut chars) = (0usize, 0usize);
    for (at, text) in &r.longest {
        let n = count(text)?;
        tokens += n;
        chars += text.chars().count();
        if n > longest.0 {
            longest = (n, at.clone());
        }
    }
    let per_char = if chars == 0 {
        0.0
    } else {
        tokens as f64 / chars as f64
    };
    Ok(Measured {
        phase: r.phase,
        role: r.role,
        prompts: r.count,
        mean_tokens: r.mean_chars() * per_char,
        longest_tokens: longest.0,
        longest_at: longest.1,
        max_tokens: r.max_tokens,
    })
}

/// The overflow of `m` in a context window of `context` tokens: the longest prompt plus its
/// reply budget must fit (vLLM refuses a request that does not; llama.cpp servers cut the
/// reply short, or refuse a prompt that alone overflows).
pub fn overflow(m: &Measured, context: u64) -> Option<String> {
    let need = m.longest_tokens as u64 + m.max_tokens as u64;
    if m.prompts == 0 || need <= context {
        return None;
    }
    let how = if m.longest_tokens as u64 > context {
        "the prompt alone overflows"
    } else {
        "the prompt fits, its reply budget does not"
    };
    Some(format!(
        "{} ({}): the longest prompt ({}) is {} tokens + {} reply tokens = {need} > the context window of {context} tokens ({how})",
        m.role.name(),
        m.phase.name(),
        m.longest_at,
        m.longest_tokens,
        m.max_tokens
    ))
}

/// The LLM calls and tokens of one role in one phase of the whole run.
#[derive(Debug, Clone, Serialize)]
pub struct RoleEstimate {
    pub phase: Phase,
    pub role: Role,
    /// Calls expected (the designer: if every stage's first attempt gets a change accepted).
    pub calls: f64,
    /// Calls at most (the designer: every attempt of every stage).
    pub calls_max: f64,
    /// Prompt tokens of `calls_max` calls (retrieved memories not included, see the module).
    pub prompt_tokens: f64,
    /// Completion tokens at most: `calls_max` times the reply budget.
    pub completion_tokens: f64,
}

/// The evaluation's size: spans to build memories from, questions, judged questions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct EvalPlan {
    pub spans: usize,
    pub questions: usize,
    pub judged: usize,
}

impl EvalPlan {
    pub fn of(cfg: &Config, samples: &[Sample]) -> Self {
        let questions = samples.iter().map(|s| s.queries.len()).sum();
        EvalPlan {
            spans: samples.iter().map(|s| s.spans.len()).sum(),
            questions,
            judged: if cfg.eval.judge { questions } else { 0 },
        }
    }
}

/// The designer's calls over a training run: each stage is `reflection_cycles` analysis
/// rounds and one refinement, repeated up to `attempts` times while nothing is accepted.
pub fn designer_calls(cfg: &Config, plan: &Plan) -> (f64, f64) {
    let d = &cfg.designer.cfg;
    let per_attempt = (d.reflection_cycles.max(1) + 1) as f64;
    let stages = plan.designer_stages as f64;
    (
        stages * per_attempt,
        stages * per_attempt * d.attempts.max(1) as f64,
    )
}

/// The whole run's calls and tokens per role and phase, from the plan of its training, the
/// evaluation's size and the measured prompts (a role without measured prompts gets none).
pub fn estimate(
    cfg: &Config,
    plan: &Plan,
    eval: &EvalPlan,
    measured: &[Measured],
) -> Vec<RoleEstimate> {
    let (designer_lo, designer_hi) = designer_calls(cfg, plan);
    let calls = |phase: Phase, role: Role| -> (f64, f64) {
        match (phase, role) {
            (Phase::Train, Role::Executor) => (plan.executor_calls, plan.executor_calls),
            (Phase::Train, Role::Answer) => (plan.answer_calls, plan.answer_calls),
            (Phase::Train, Role::Judge) => (plan.judge_calls, plan.judge_calls),
            (Phase::Train, Role::Designer) => (designer_lo, designer_hi),
            (Phase::Eval, Role::Executor) => (eval.spans as f64, eval.spans as f64),
            (Phase::Eval, Role::Answer) => (eval.questions as f64, eval.questions as f64),
            (Phase::Eval, Role::Judge) => (eval.judged as f64, eval.judged as f64),
            (Phase::Eval, Role::Designer) => (0.0, 0.0),
        }
    };
    measured
        .iter()
        .map(|m| {
            let (lo, hi) = calls(m.phase, m.role);
            RoleEstimate {
                phase: m.phase,
                role: m.role,
                calls: lo,
                calls_max: hi,
                prompt_tokens: hi * m.mean_tokens,
                completion_tokens: hi * m.max_tokens as f64,
            }
        })
        .collect()
}

/// A server's probed throughput at the role's configured concurrency: tokens per second
/// over all requests in flight, reading prompts and writing replies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Throughput {
    pub concurrency: usize,
    pub prompt_tokens_per_s: f64,
    pub completion_tokens_per_s: f64,
}

/// Seconds `e` takes at `t`, every reply taken to use its whole budget (the retrieved
/// memories, the embeddings and the trainer's own work are not counted).
pub fn wall_secs(e: &RoleEstimate, t: &Throughput) -> f64 {
    let rate = |tokens: f64, per_s: f64| {
        if tokens <= 0.0 {
            0.0
        } else {
            tokens / per_s.max(1e-9)
        }
    };
    rate(e.prompt_tokens, t.prompt_tokens_per_s)
        + rate(e.completion_tokens, t.completion_tokens_per_s)
}

/// One check of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// executor | answer | judge | designer | embeddings | config.
    pub role: String,
    /// "ok", "fail" or "note" (not checked, and why).
    pub status: &'static str,
    pub what: String,
}

impl Check {
    pub fn ok(role: &str, what: impl Into<String>) -> Self {
        Self::of(role, "ok", what)
    }
    pub fn fail(role: &str, what: impl Into<String>) -> Self {
        Self::of(role, "fail", what)
    }
    pub fn note(role: &str, what: impl Into<String>) -> Self {
        Self::of(role, "note", what)
    }
    fn of(role: &str, status: &'static str, what: impl Into<String>) -> Self {
        Self {
            role: role.to_string(),
            status,
            what: what.into(),
        }
    }
}

/// Everything `memskill preflight` found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub config: String,
    pub checks: Vec<Check>,
    pub prompts: Vec<Measured>,
    pub estimate: Vec<RoleEstimate>,
    /// The throughput probed for each role's server (roles on one server share a probe).
    pub throughput: Vec<(String, Throughput)>,
    /// Seconds of the whole run's LLM calls at the probed throughput ([`wall_secs`]), when every role with
    /// calls has a throughput.
    pub wall_secs: Option<f64>,
    pub failures: usize,
}

impl Report {
    pub fn new(
        config: String,
        checks: Vec<Check>,
        prompts: Vec<Measured>,
        estimate: Vec<RoleEstimate>,
        throughput: Vec<(String, Throughput)>,
    ) -> Self {
        let tput = |role: Role| {
            throughput
                .iter()
                .find(|(r, _)| r == role.name())
                .map(|t| t.1)
        };
        let wall = estimate
            .iter()
            .filter(|e| e.calls_max > 0.0)
            .map(|e| tput(e.role).map(|t| wall_secs(e, &t)))
            .sum::<Option<f64>>();
        let failures = checks.iter().filter(|c| c.status == "fail").count();
        Self {
            config,
            checks,
            prompts,
            estimate,
            throughput,
            wall_secs: wall,
            failures,
        }
    }

    /// The report for the terminal: the checks per role, the prompts table, the estimate
    /// table and the wall time.
    pub fn render(&self) -> String {
        let mut out = format!("preflight: {}\n\n", self.config);
        for c in &self.checks {
            out.push_str(&format!("{:<4}  {:<10}  {}\n", c.status, c.role, c.what));
        }
        out.push_str("\nlongest prompts (rendered over the data, without retrieved memories):\n");
        out.push_str("| phase | role | prompts | mean tokens | longest tokens | reply budget | longest at |\n|---|---|---|---|---|---|---|\n");
        for m in &self.prompts {
            out.push_str(&format!(
                "| {} | {} | {} | {:.0} | {} | {} | {} |\n",
                m.phase.name(),
                m.role.name(),
                m.prompts,
                m.mean_tokens,
                m.longest_tokens,
                m.max_tokens,
                m.longest_at
            ));
        }
        out.push_str("\nestimate for the whole run (before retries and caching):\n");
        out.push_str("| phase | role | LLM calls | prompt tokens | completion tokens (at most) | time at probed throughput |\n|---|---|---|---|---|---|\n");
        for e in &self.estimate {
            let calls = if e.calls == e.calls_max {
                format!("{:.0}", e.calls)
            } else {
                format!("{:.0}-{:.0}", e.calls, e.calls_max)
            };
            let t = self.throughput.iter().find(|(r, _)| r == e.role.name());
            let time = t.map_or("-".into(), |(_, t)| human_secs(wall_secs(e, t)));
            out.push_str(&format!(
                "| {} | {} | {calls} | {:.0} | {:.0} | {time} |\n",
                e.phase.name(),
                e.role.name(),
                e.prompt_tokens,
                e.completion_tokens
            ));
        }
        // roles on one server share its probe: one line for them
        let mut shared: Vec<(Vec<&str>, Throughput)> = Vec::new();
        for (role, t) in &self.throughput {
            match shared.iter_mut().find(|(_, u)| u == t) {
                Some((roles, _)) => roles.push(role),
                None => shared.push((vec![role], *t)),
            }
        }
        for (roles, t) in shared {
            out.push_str(&format!(
                "throughput ({}; {} in flight): {:.1} prompt tokens/s, {:.1} completion tokens/s\n",
                roles.join(", "),
                t.concurrency,
                t.prompt_tokens_per_s,
                t.completion_tokens_per_s
            ));
        }
        match self.wall_secs {
            Some(s) => out.push_str(&format!(
                "wall time of the LLM calls (at the probed throughput, replies at their full budget): {}\n",
                human_secs(s)
            )),
            None => {
                out.push_str("wall time: unknown (a role with calls has no probed throughput)\n")
            }
        }
        out.push_str(&match self.failures {
            0 => "ok: nothing failed\n".to_string(),
            n => format!("{n} check(s) failed\n"),
        });
        out
    }
}

/// Seconds as `1 h 02 min`, `3 min 05 s` or `12.3 s`.
pub fn human_secs(s: f64) -> String {
    let whole = s.round() as u64;
    if s < 60.0 {
        format!("{s:.1} s")
    } else if whole < 3600 {
        format!("{} min {:02} s", whole / 60, whole % 60)
    } else {
        format!("{} h {:02} min", whole / 3600, (whole % 3600) / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(sets: &[&str]) -> Config {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        Config::from_toml_str("", &sets, "t").unwrap()
    }

    fn rendered_of(cfg: &Config, samples: &[Sample]) -> Vec<Rendered> {
        let prompts = crate::prompts::defaults().unwrap();
        let bank = SkillBank::seed();
        render(&Inputs {
            cfg,
            prompts: &prompts,
            train_bank: &bank,
            eval_bank: &bank,
            train: samples,
            eval: &samples[..1],
        })
        .unwrap()
    }

    #[test]
    fn every_span_and_question_is_rendered_with_the_roles_the_run_uses() {
        let samples = crate::synthetic::dataset(3, 4, 1);
        let c = cfg(&["designer.reflection_cycles=2", "eval.judge=false"]);
        let r = rendered_of(&c, &samples);
        let find = |phase, role| r.iter().find(|x| x.phase == phase && x.role == role);
        let spans: usize = samples.iter().map(|s| s.spans.len()).sum();
        let questions: usize = samples.iter().map(|s| s.queries.len()).sum();
        assert_eq!(find(Phase::Train, Role::Executor).unwrap().count, spans);
        assert_eq!(find(Phase::Train, Role::Answer).unwrap().count, questions);
        assert_eq!(
            find(Phase::Eval, Role::Executor).unwrap().count,
            samples[0].spans.len()
        );
        assert!(
            find(Phase::Train, Role::Judge).is_none() && find(Phase::Eval, Role::Judge).is_none()
        );
        // analysis, one reflection, refinement
        assert_eq!(find(Phase::Train, Role::Designer).unwrap().count, 3);
        let e = find(Phase::Train, Role::Executor).unwrap();
        assert!(e.longest.len() <= KEEP && !e.longest.is_empty());
        let lens: Vec<usize> = e.longest.iter().map(|(_, t)| t.chars().count()).collect();
        assert!(lens.windows(2).all(|w| w[0] >= w[1]), "{lens:?}");
        // a judged run renders the judge in both phases; no designer when it is off
        let c = cfg(&[
            "reward.kind=\"judge\"",
            "eval.judge=true",
            "designer.enabled=false",
        ]);
        let r = rendered_of(&c, &samples);
        assert_eq!(r.iter().filter(|x| x.role == Role::Judge).count(), 2);
        assert!(r.iter().all(|x| x.role != Role::Designer));
    }

    fn measured(longest: usize, max_tokens: u32) -> Measured {
        Measured {
            phase: Phase::Train,
            role: Role::Executor,
            prompts: 10,
            mean_tokens: 100.0,
            longest_tokens: longest,
            longest_at: "s:1".into(),
            max_tokens,
        }
    }

    #[test]
    fn measuring_counts_the_longest_and_scales_the_mean() {
        let mut r = Rendered::new(Phase::Train, Role::Answer, 8);
        for (i, n) in [40usize, 400, 4, 80, 120, 160, 200].iter().enumerate() {
            r.push(format!("q{i}"), &[Message::user("x".repeat(*n))]);
        }
        assert_eq!(r.count, 7);
        assert_eq!(r.longest.len(), KEEP);
        assert_eq!(r.longest[0].0, "q1");
        // two characters per token
        let m = measure(&r, &mut |t| Ok(t.chars().count() / 2)).unwrap();
        assert_eq!(m.longest_at, "q1");
        assert_eq!(
            m.longest_tokens,
            joined(&[Message::user("x".repeat(400))]).len() / 2
        );
        assert!(
            (m.mean_tokens - r.mean_chars() / 2.0).abs() < 1.0,
            "{}",
            m.mean_tokens
        );
        let e = measure(&r, &mut |_| Err("down".into())).unwrap_err();
        assert_eq!(e, "down");
    }

    #[test]
    fn overflow_counts_the_reply_budget_and_says_which_part_overflows() {
        assert_eq!(overflow(&measured(900, 100), 1000), None);
        let e = overflow(&measured(901, 100), 1000).unwrap();
        assert!(
            e.contains("= 1001 > the context window of 1000")
                && e.contains("its reply budget does not"),
            "{e}"
        );
        let e = overflow(&measured(1200, 100), 1000).unwrap();
        assert!(
            e.contains("the prompt alone overflows") && e.contains("(s:1)"),
            "{e}"
        );
        let mut none = measured(5000, 100);
        none.prompts = 0;
        assert_eq!(overflow(&none, 1000), None);
    }

    #[test]
    fn the_estimate_multiplies_the_plan_and_the_designer_rounds() {
        let c = cfg(&[
            "run.outer_epochs=4",
            "run.inner_epochs=2",
            "run.batch_size=3",
            "designer.freq=2",
            "designer.reflection_cycles=3",
            "designer.attempts=2",
        ]);
        let samples = crate::synthetic::dataset(2, 5, 1);
        let plan = crate::inspect::plan(&c, &samples);
        assert_eq!(plan.episodes, 24);
        assert_eq!(designer_calls(&c, &plan), (8.0, 16.0));
        let eval = EvalPlan {
            spans: 7,
            questions: 5,
            judged: 5,
        };
        let ms = vec![
            measured(10, 64),
            Measured {
                role: Role::Designer,
                mean_tokens: 1000.0,
                max_tokens: 500,
                ..measured(1, 1)
            },
            Measured {
                phase: Phase::Eval,
                role: Role::Judge,
                mean_tokens: 50.0,
                max_tokens: 10,
                ..measured(1, 1)
            },
        ];
        let e = estimate(&c, &plan, &eval, &ms);
        assert_eq!(e[0].calls, 24.0 * 5.0);
        assert_eq!(e[0].prompt_tokens, 24.0 * 5.0 * 100.0);
        assert_eq!(e[0].completion_tokens, 24.0 * 5.0 * 64.0);
        assert_eq!((e[1].calls, e[1].calls_max), (8.0, 16.0));
        assert_eq!(e[1].prompt_tokens, 16_000.0);
        assert_eq!((e[2].calls, e[2].completion_tokens), (5.0, 50.0));
        let t = Throughput {
            concurrency: 4,
            prompt_tokens_per_s: 1000.0,
            completion_tokens_per_s: 10.0,
        };
        assert!((wall_secs(&e[2], &t) - (0.25 + 5.0)).abs() < 1e-9);
        let report = Report::new(
            "c".into(),
            vec![Check::fail("executor", "x")],
            ms,
            e,
            vec![("executor".into(), t)],
        );
        assert_eq!(report.failures, 1);
        // the designer and the judge have no throughput: no wall time
        assert_eq!(report.wall_secs, None);
        let text = report.render();
        assert!(
            text.contains("| train | designer | 8-16 |") && text.contains("1 check(s) failed"),
            "{text}"
        );
    }

    #[test]
    fn seconds_read_as_people_read_them() {
        assert_eq!(human_secs(12.34), "12.3 s");
        assert_eq!(human_secs(185.0), "3 min 05 s");
        assert_eq!(human_secs(3720.0), "1 h 02 min");
    }
}
