//! Skills, their versions and statuses, and the skill bank.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::CoreError;
use crate::hash::sha256_hex;

/// The memory operation a skill allows the executor to emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionKind {
    Insert,
    Update,
    Delete,
    Noop,
}

impl ActionKind {
    pub const ALL: [ActionKind; 4] = [Self::Insert, Self::Update, Self::Delete, Self::Noop];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Insert => "insert",
            Self::Update => "update",
            Self::Delete => "delete",
            Self::Noop => "noop",
        }
    }
}

impl fmt::Display for ActionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ActionKind {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "insert" | "add" => Ok(Self::Insert),
            "update" => Ok(Self::Update),
            "delete" => Ok(Self::Delete),
            "noop" | "no_op" | "no-op" | "none" => Ok(Self::Noop),
            _ => Err(CoreError::InvalidAction(s.to_string())),
        }
    }
}

/// Semantic version `MAJOR.MINOR.PATCH`, serialised as a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }
    /// The version of a freshly added (candidate) skill.
    pub const INITIAL: Version = Version::new(0, 1, 0);
    pub fn bump_patch(self) -> Self {
        Self {
            patch: self.patch + 1,
            ..self
        }
    }
    pub fn bump_minor(self) -> Self {
        Self {
            minor: self.minor + 1,
            patch: 0,
            ..self
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl FromStr for Version {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || CoreError::InvalidVersion(s.to_string());
        let mut it = s.trim().split('.');
        let mut next = || -> Result<u32, CoreError> {
            let p = it.next().ok_or_else(bad)?;
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            p.parse().map_err(|_| bad())
        };
        let v = Version::new(next()?, next()?, next()?);
        if it.next().is_some() {
            return Err(bad());
        }
        Ok(v)
    }
}

impl Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Life-cycle of a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SkillStatus {
    /// Proposed, not yet accepted into the bank; never selectable.
    Draft,
    /// Passed validation and the safety scan; enters the eval harness (`designer.gate`), not
    /// selectable. A skill whose gate failed stays here, with the failing record.
    Candidate,
    /// Passed the gate (or the gate is off): selectable in training with the new-skill bias,
    /// not exported as active, until its stage beats the best snapshot.
    Canary,
    /// Proven: its stage beat the best snapshot (seed skills start here). Selectable
    /// everywhere, exported.
    Active,
    /// Evicted to respect the bank-size cap.
    Deprecated,
    /// Removed by a rollback.
    Archived,
}

impl SkillStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Candidate => "candidate",
            Self::Canary => "canary",
            Self::Active => "active",
            Self::Deprecated => "deprecated",
            Self::Archived => "archived",
        }
    }
    /// Whether the controller may select a skill with this status.
    pub fn is_selectable(self) -> bool {
        matches!(self, Self::Canary | Self::Active)
    }
}

impl FromStr for SkillStatus {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "draft" => Ok(Self::Draft),
            "candidate" => Ok(Self::Candidate),
            "canary" => Ok(Self::Canary),
            "active" => Ok(Self::Active),
            "deprecated" => Ok(Self::Deprecated),
            "archived" => Ok(Self::Archived),
            _ => Err(CoreError::InvalidStatus(s.to_string())),
        }
    }
}

impl fmt::Display for SkillStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How often a skill was selected and what reward the episodes that used it earned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageStats {
    pub count: u64,
    pub mean_reward: f64,
    /// The most recent rewards, oldest first, at most [`UsageStats::RECENT`].
    pub recent_rewards: Vec<f64>,
}

impl UsageStats {
    pub const RECENT: usize = 50;

    /// Record one use of the skill in an episode that earned `reward`.
    pub fn record(&mut self, reward: f64) {
        self.count += 1;
        self.mean_reward += (reward - self.mean_reward) / self.count as f64;
        self.recent_rewards.push(reward);
        if self.recent_rewards.len() > Self::RECENT {
            let excess = self.recent_rewards.len() - Self::RECENT;
            self.recent_rewards.drain(..excess);
        }
    }

    pub fn recent_mean(&self) -> Option<f64> {
        (!self.recent_rewards.is_empty())
            .then(|| self.recent_rewards.iter().sum::<f64>() / self.recent_rewards.len() as f64)
    }
}

/// One memory skill: a reusable instruction card for the executor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// Lowercase letters, digits and single hyphens, at most 64 characters.
    pub name: String,
    /// Short description: the only text the controller embeds.
    pub description: String,
    /// The full card the executor reads.
    pub instructions: String,
    /// The one memory operation this skill allows.
    pub action: ActionKind,
    pub version: Version,
    pub status: SkillStatus,
    /// Ids of the hard cases / trajectories this skill came from.
    #[serde(default)]
    pub provenance: Vec<String>,
    #[serde(default)]
    pub usage: UsageStats,
    /// What the skill's text asks for ([`RiskLevel`]), set where the governance design is
    /// on (`designer.operations` or `designer.gate_preset = "governance"`); `None`:
    /// unassessed (every bank of the paper's path). Not part of [`Skill::content_hash`]: it
    /// follows from the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<RiskLevel>,
}

/// The governance design's risk level of a skill: `high` when its text asks for tools,
/// code execution or external services (the high-risk gate applies), else `low`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RiskLevel {
    Low,
    High,
}

impl RiskLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::High => "high",
        }
    }
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Skill {
    /// An active 1.0.0 skill with one provenance entry and no usage yet (seed banks, tests).
    pub fn active(
        name: &str,
        action: ActionKind,
        description: &str,
        instructions: &str,
        provenance: &str,
    ) -> Skill {
        Skill {
            name: name.into(),
            description: description.into(),
            instructions: instructions.into(),
            action,
            version: Version::new(1, 0, 0),
            status: SkillStatus::Active,
            provenance: vec![provenance.into()],
            usage: UsageStats::default(),
            risk: None,
        }
    }

    /// Hash of what defines the skill's behaviour (not its usage statistics).
    pub fn content_hash(&self) -> String {
        sha256_hex(self.canonical_content())
    }

    fn canonical_content(&self) -> String {
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "instructions": self.instructions,
            "action": self.action,
            "version": self.version,
            "status": self.status,
            "provenance": self.provenance,
        })
        .to_string()
    }
}

/// Check a skill name: lowercase ASCII letters, digits and single hyphens, 1..=64 chars,
/// neither starting nor ending with a hyphen (the Agent Skills naming rule).
pub fn validate_skill_name(name: &str) -> Result<(), CoreError> {
    let err = |reason: &str| {
        Err(CoreError::InvalidSkillName {
            name: name.to_string(),
            reason: reason.to_string(),
        })
    };
    if name.is_empty() {
        return err("empty");
    }
    if name.len() > 64 {
        return err("longer than 64 characters");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return err("only lowercase letters, digits and hyphens are allowed");
    }
    if name.starts_with('-') || name.ends_with('-') {
        return err("must not start or end with a hyphen");
    }
    if name.contains("--") {
        return err("must not contain consecutive hyphens");
    }
    Ok(())
}

/// What happened to a skill in one release record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReleaseKind {
    Seeded,
    /// A designer proposal, recorded as a draft before validation (not in the bank yet).
    Drafted,
    /// Draft -> candidate: the proposal passed validation and the safety scan (the evidence
    /// in the note); the `added` / `refined` record that follows enters it.
    Validated,
    /// The proposal failed validation or the safety scan: it stays a draft, never enters the
    /// bank (the reason in the note).
    Rejected,
    Added,
    Refined,
    /// Candidate -> canary: the offline gate passed (evidence in the bank's eval runs), or
    /// the gate is off.
    Canaried,
    /// The offline gate failed: an added skill stays candidate, a refine is not applied (its
    /// text is kept in the eval run).
    #[serde(rename = "gate-failed")]
    GateFailed,
    Promoted,
    Deprecated,
    Archived,
    Restored,
    /// A person accepted a guard finding on the skill's current text after review (the
    /// rule, the reason and `approved_by` in the record); the text and version are unchanged.
    Approved,
    /// A skill made by a designer MERGE of two skills (`designer.operations =
    /// "governance"`): the parents are in the note and its provenance; they are deprecated
    /// with records that name it.
    Merged,
    /// One part of a designer SPLIT of a skill (the parent in the note; it is deprecated
    /// with a record that names the parts).
    Split,
    /// The skill joined a bundle (a named group selected together; the bundle and its
    /// members in the note, the group in [`SkillBank::bundles`]).
    Bundled,
    /// A high-risk candidate passed the offline gate under the governance preset and waits
    /// for a person: it stays a candidate (not selectable) until promoted with
    /// `approved_by` (the high-risk gate).
    Held,
}

/// One entry of a skill's release history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReleaseRecord {
    pub skill: String,
    pub kind: ReleaseKind,
    pub from_version: Option<Version>,
    pub to_version: Version,
    /// Unified-style diff of the description and instructions (empty when unchanged).
    #[serde(default)]
    pub diff: String,
    /// Hard-case ids that motivated the change.
    #[serde(default)]
    pub hard_cases: Vec<String>,
    pub reward_before: Option<f64>,
    pub reward_after: Option<f64>,
    /// Designer stage (0 for the seed bank).
    pub stage: u32,
    #[serde(default)]
    pub note: String,
    /// The person who approved the change, where a person did (`skills approve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
}

impl ReleaseRecord {
    /// A record of a status change that leaves the skill's text and version as they are
    /// (promoted, deprecated, canaried, gate-failed): no diff, no hard cases, no rewards.
    pub fn status_change(
        skill: &str,
        kind: ReleaseKind,
        version: Version,
        stage: u32,
        note: String,
    ) -> Self {
        ReleaseRecord {
            skill: skill.to_string(),
            kind,
            from_version: Some(version),
            to_version: version,
            diff: String::new(),
            hard_cases: Vec::new(),
            reward_before: None,
            reward_after: None,
            stage,
            note,
            approved_by: None,
        }
    }
}

/// Which guard accepted a skill's text, or who approved it past one finding: the record
/// that keeps a later guard from locking a researcher out of their own bank (see
/// `memskill_designer::check_bank_with`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuardRecord {
    pub skill: String,
    /// sha256 of the skill's name, description and instructions (`memskill_guard::text_hash`).
    pub hash: String,
    /// The guard version that accepted this text (`memskill_guard::GUARD_VERSION`), or
    /// `before-records` for a bank written before records existed.
    pub guard: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<GuardApproval>,
}

/// A guard finding a person accepted on review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuardApproval {
    /// The rule id the finding named.
    pub rule: String,
    pub reason: String,
    pub approved_by: String,
}

/// The skill bank: skills ordered by name plus their release history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredBank")]
pub struct SkillBank {
    /// Incremented at every accepted designer change.
    pub bank_version: u32,
    skills: Vec<Skill>,
    #[serde(default)]
    pub releases: Vec<ReleaseRecord>,
    /// Evidence of the offline gate (`designer.gate = "offline"`) and of `skills eval`, one
    /// record per evaluated skill version (empty with the gate off).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eval_runs: Vec<EvalRun>,
    /// Which guard accepted each skill's text, and approvals (empty in banks written before
    /// records existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guard: Vec<GuardRecord>,
    /// Named groups of skills selected together (designer BUNDLE, `designer.operations =
    /// "governance"`); empty in every bank of the paper's path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bundles: Vec<Bundle>,
}

/// A bundle: when the controller selects one of its members for a span, the executor is
/// also given every other selectable member (see [`with_bundled`]). The controller's
/// choice, its log-probability and its training are unchanged: a bundle widens what the
/// executor reads, it adds no action to the policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    /// A skill-style name (lowercase letters, digits, single hyphens), distinct from every
    /// skill and other bundle.
    pub name: String,
    /// Two or more skill names, sorted.
    pub members: Vec<String>,
    /// Designer stage that made it.
    pub stage: u32,
    #[serde(default)]
    pub note: String,
}

/// The names the executor reads for a span: `chosen` (the controller's pick, in order), then
/// the other members of every bundle that holds a chosen skill, in bundle order and member
/// order, each once, and only those in `available` (the selectable skills): a deprecated or
/// archived member is never brought back by its bundle.
pub fn with_bundled(bundles: &[Bundle], chosen: &[&str], available: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = chosen.iter().map(|s| s.to_string()).collect();
    for b in bundles {
        if !b.members.iter().any(|m| chosen.contains(&m.as_str())) {
            continue;
        }
        for m in &b.members {
            if available.contains(&m.as_str()) && !out.contains(m) {
                out.push(m.clone());
            }
        }
    }
    out
}

/// A bank as stored. Banks written before the release gate existed (no `canaried`,
/// `gate-failed` or `held` record) used `candidate` for a selectable skill on trial, which is a canary
/// now: such skills are read as canaries, so old checkpoints, exports and `run.skill_bank`
/// files keep selecting what they selected.
#[derive(Deserialize)]
struct StoredBank {
    bank_version: u32,
    skills: Vec<Skill>,
    #[serde(default)]
    releases: Vec<ReleaseRecord>,
    #[serde(default)]
    eval_runs: Vec<EvalRun>,
    #[serde(default)]
    guard: Vec<GuardRecord>,
    #[serde(default)]
    bundles: Vec<Bundle>,
}

impl From<StoredBank> for SkillBank {
    fn from(b: StoredBank) -> Self {
        let gated = b.releases.iter().any(|r| {
            matches!(
                r.kind,
                ReleaseKind::Canaried | ReleaseKind::GateFailed | ReleaseKind::Held
            )
        });
        let mut skills = b.skills;
        if !gated {
            for s in skills
                .iter_mut()
                .filter(|s| s.status == SkillStatus::Candidate)
            {
                s.status = SkillStatus::Canary;
            }
        }
        SkillBank {
            bank_version: b.bank_version,
            skills,
            releases: b.releases,
            eval_runs: b.eval_runs,
            guard: b.guard,
            bundles: b.bundles,
        }
    }
}

/// Which mode of a skill's three-mode comparison an [`EvalMode`] is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompareMode {
    /// The skill removed from the bank.
    #[default]
    Without,
    /// Its previous version (absent for a new skill).
    Old,
    /// The version under test.
    Candidate,
}

impl CompareMode {
    /// The lowercase name (as eval runs store it).
    pub fn as_str(self) -> &'static str {
        match self {
            CompareMode::Without => "without",
            CompareMode::Old => "old",
            CompareMode::Candidate => "candidate",
        }
    }
}

impl std::fmt::Display for CompareMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One mode of a skill's three-mode comparison, on the same cases, spans and seeds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalMode {
    /// `without` (the skill removed), `old` (its previous version; absent for a new skill)
    /// or `candidate` (the version under test).
    pub mode: CompareMode,
    /// Mean score over the scorable cases (outcome; NaN, JSON null, when none was).
    #[serde(with = "crate::nan_json::float")]
    pub score: f64,
    /// Per-case scores, in the order of [`EvalRun::cases`] (unscorable cases are NaN, JSON null).
    #[serde(with = "crate::nan_json::floats")]
    pub case_scores: Vec<f64>,
    /// Tokens (prompt + completion) and LLM calls of executor, answerer and judge (cost).
    pub tokens: u64,
    pub calls: u64,
    /// Fraction of the cases' spans where the controller selected the skill (activation;
    /// 0 in the `without` mode).
    pub activation: f64,
    /// Memories the safety filter flagged or refused while this mode built its memory.
    pub safety_findings: u64,
    /// Wall time of this mode's uncached executor calls (`executor_calls` of them), in
    /// milliseconds (latency). Measured, so the one field of an eval run that differs
    /// between two equal runs. A reply the LLM cache answered takes no model time and is
    /// counted in `cached_calls` instead.
    #[serde(default)]
    pub executor_ms: f64,
    /// Executor calls that reached the model (timed in `executor_ms`) ...
    #[serde(default)]
    pub executor_calls: u64,
    /// ... and those the LLM cache answered (not timed).
    #[serde(default)]
    pub cached_calls: u64,
    /// Spans where the skill under test was selected, and of those the ones where the reply
    /// performed the skill's action kind, the write reached the memory bank, and nothing was
    /// flagged or refused (process).
    #[serde(default)]
    pub selections: u64,
    #[serde(default)]
    pub process_ok: u64,
}

impl EvalMode {
    /// The process share: `process_ok / selections` (`None` without a selection).
    pub fn process(&self) -> Option<f64> {
        (self.selections > 0).then(|| self.process_ok as f64 / self.selections as f64)
    }
}

/// The three-mode comparison of one skill version on one set of cases, and what the gate
/// (or `skills eval`) concluded from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalRun {
    /// `stage-<n>:<skill>@<version>` for the gate, `eval:<...>` for `skills eval`.
    pub id: String,
    pub skill: String,
    pub version: Version,
    /// The version compared against (`None`: a new skill).
    pub old_version: Option<Version>,
    /// Designer stage (0 outside training).
    pub stage: u32,
    /// `sample_id/query_id` of each case; `solved_before` marks the previously solved ones.
    pub cases: Vec<String>,
    pub solved_before: Vec<bool>,
    pub modes: Vec<EvalMode>,
    /// Candidate score minus the better of the other modes (NaN, JSON null, when unknown).
    #[serde(with = "crate::nan_json::float")]
    pub outcome_delta: f64,
    /// Cases solved in the reference mode (old version, else without) and failed with the candidate.
    pub regressions: usize,
    /// Candidate tokens over the reference mode's, minus 1.
    pub token_overhead: f64,
    /// Safety findings of the candidate (its text and the memories it wrote).
    pub safety_findings: u64,
    /// Candidate executor wall time per uncached call over the reference mode's, minus 1
    /// (latency overhead). `None` (JSON null): not measured, because one of the two modes
    /// had no uncached executor call (`notes` says so).
    #[serde(default)]
    pub latency_overhead: Option<f64>,
    /// Candidate LLM calls over the reference mode's, minus 1.
    #[serde(default)]
    pub call_overhead: f64,
    /// The candidate's activation against expected triggers (`None`: the cases had none,
    /// e.g. a real dataset; `notes` says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation: Option<crate::activation::ActivationStats>,
    /// What the evidence could not cover (e.g. no expected triggers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub passed: bool,
    /// Why it failed (empty when it passed).
    #[serde(default)]
    pub reasons: Vec<String>,
    /// The candidate's description and instructions (kept here when a refine failed the gate
    /// and so never entered the bank).
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub instructions: String,
}

impl Default for EvalRun {
    fn default() -> Self {
        EvalRun {
            id: String::new(),
            skill: String::new(),
            version: Version::INITIAL,
            old_version: None,
            stage: 0,
            cases: Vec::new(),
            solved_before: Vec::new(),
            modes: Vec::new(),
            outcome_delta: f64::NAN,
            regressions: 0,
            token_overhead: 0.0,
            safety_findings: 0,
            latency_overhead: None,
            call_overhead: 0.0,
            activation: None,
            notes: Vec::new(),
            passed: false,
            reasons: Vec::new(),
            description: String::new(),
            instructions: String::new(),
        }
    }
}

impl EvalRun {
    pub fn mode(&self, mode: CompareMode) -> Option<&EvalMode> {
        self.modes.iter().find(|m| m.mode == mode)
    }
}

impl Default for SkillBank {
    fn default() -> Self {
        Self::seed()
    }
}

impl SkillBank {
    /// An empty bank (tests and imports).
    pub fn empty() -> Self {
        Self {
            bank_version: 0,
            skills: Vec::new(),
            releases: Vec::new(),
            eval_runs: Vec::new(),
            guard: Vec::new(),
            bundles: Vec::new(),
        }
    }

    /// Build a bank from skills (sorted by name; duplicate names are an error).
    pub fn from_skills(skills: Vec<Skill>) -> Result<Self, CoreError> {
        let mut bank = Self::empty();
        for s in skills {
            bank.insert(s)?;
        }
        Ok(bank)
    }

    /// The four seed skills, after the MemSkill paper's primitive operations.
    pub fn seed() -> Self {
        let mk = |name: &str, action, description: &str, instructions: &str| {
            Skill::active(name, action, description, instructions, "seed")
        };
        let skills = vec![
            mk(
                "delete",
                ActionKind::Delete,
                "Remove a stored memory only when the span gives explicit evidence that it is wrong or no longer true.",
                "Use this when the new text clearly contradicts a retrieved memory, or states that it has been \
                 replaced, cancelled or was a mistake. Point at the memory by its index. Do not delete a memory \
                 just because the span does not mention it, because it is old, or because you are unsure: \
                 absence of evidence is not evidence of change. When a fact is only refined, prefer updating it.",
            ),
            mk(
                "insert",
                ActionKind::Insert,
                "Store a durable new fact from the span that the retrieved memories do not already hold.",
                "Read the span for facts worth remembering later: who did what, when and where; preferences, \
                 plans, relationships, possessions, events and their dates. Write each fact as one short, \
                 self-contained sentence that names the people involved (never 'he' or 'she' without a name) \
                 and turns relative dates ('last week', 'yesterday') into absolute ones using the span's date. \
                 Skip greetings, small talk and anything already stored in the retrieved memories.",
            ),
            mk(
                "noop",
                ActionKind::Noop,
                "Leave memory unchanged when the span adds nothing new, corrects nothing and contradicts nothing.",
                "Choose this when the span is small talk, repeats what memory already holds, or carries no fact \
                 that could answer a future question. Doing nothing is better than storing noise or duplicates.",
            ),
            mk(
                "update",
                ActionKind::Update,
                "Revise an existing memory when the span corrects it, adds detail to it or changes its status.",
                "Find the retrieved memory the span is about and rewrite it so it stays one self-contained \
                 sentence that now includes the new information (a new date, a changed place, a finished plan, \
                 an added detail). Keep every still-true detail of the old memory; do not merge unrelated facts. \
                 Point at the memory by its index.",
            ),
        ];
        let mut bank = Self::from_skills(skills).expect("seed skills are valid and distinct");
        let records: Vec<ReleaseRecord> = bank
            .skills
            .iter()
            .map(|s| ReleaseRecord {
                skill: s.name.clone(),
                kind: ReleaseKind::Seeded,
                from_version: None,
                to_version: s.version,
                diff: String::new(),
                hard_cases: vec![],
                reward_before: None,
                reward_after: None,
                stage: 0,
                note: "seed skill".into(),
                approved_by: None,
            })
            .collect();
        bank.releases = records;
        bank
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }
    /// All skills, ordered by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }
    /// Mutable access that cannot break the ordering (names are not editable through it).
    pub fn skills_mut(&mut self) -> impl Iterator<Item = &mut Skill> {
        self.skills.iter_mut()
    }
    /// Skills the controller may select (candidate or active), ordered by name.
    pub fn selectable(&self) -> Vec<&Skill> {
        self.skills
            .iter()
            .filter(|s| s.status.is_selectable())
            .collect()
    }
    pub fn names(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.name.as_str()).collect()
    }
    pub fn position(&self, name: &str) -> Option<usize> {
        self.skills
            .binary_search_by(|s| s.name.as_str().cmp(name))
            .ok()
    }
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.position(name).map(|i| &self.skills[i])
    }
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Skill> {
        self.position(name).map(move |i| &mut self.skills[i])
    }
    pub fn contains(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// Insert a new skill, keeping the bank ordered by name.
    pub fn insert(&mut self, skill: Skill) -> Result<(), CoreError> {
        validate_skill_name(&skill.name)?;
        match self.skills.binary_search_by(|s| s.name.cmp(&skill.name)) {
            Ok(_) => Err(CoreError::DuplicateSkill(skill.name)),
            Err(i) => {
                self.skills.insert(i, skill);
                Ok(())
            }
        }
    }

    /// Remove a skill entirely (prefer setting its status to keep history).
    pub fn remove(&mut self, name: &str) -> Result<Skill, CoreError> {
        let i = self
            .position(name)
            .ok_or_else(|| CoreError::UnknownSkill(name.to_string()))?;
        Ok(self.skills.remove(i))
    }

    /// Hash of the skills' content (names, texts, actions, versions, statuses, provenance),
    /// independent of usage statistics and release history.
    pub fn content_hash(&self) -> String {
        let parts: Vec<String> = self.skills.iter().map(|s| s.canonical_content()).collect();
        sha256_hex(parts.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banks_from_before_the_gate_read_candidates_as_canaries_and_nan_scores_survive() {
        let mut b = SkillBank::seed();
        let mut s = Skill::active("keep-dates", ActionKind::Insert, "d", "i", "t");
        s.status = SkillStatus::Candidate;
        b.insert(s).unwrap();
        let old: SkillBank = serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
        assert_eq!(old.get("keep-dates").unwrap().status, SkillStatus::Canary);
        // a bank with gate records keeps its candidates (held back by the gate)
        b.releases.push(ReleaseRecord {
            skill: "keep-dates".into(),
            kind: ReleaseKind::GateFailed,
            from_version: None,
            to_version: Version::INITIAL,
            diff: String::new(),
            hard_cases: Vec::new(),
            reward_before: None,
            reward_after: None,
            stage: 1,
            note: String::new(),
            approved_by: None,
        });
        b.eval_runs.push(EvalRun {
            id: "stage-1:keep-dates@1.0.0".into(),
            skill: "keep-dates".into(),
            version: Version::INITIAL,
            old_version: None,
            stage: 1,
            cases: vec!["s/q".into()],
            solved_before: vec![false],
            modes: vec![EvalMode {
                mode: CompareMode::Candidate,
                score: f64::NAN,
                case_scores: vec![f64::NAN],
                tokens: 0,
                calls: 0,
                activation: 0.0,
                safety_findings: 0,
                ..Default::default()
            }],
            outcome_delta: f64::NAN,
            passed: false,
            reasons: vec!["no case could be scored".into()],
            ..Default::default()
        });
        let json = serde_json::to_string(&b).unwrap();
        let back: SkillBank = serde_json::from_str(&json).unwrap();
        assert_eq!(
            back.get("keep-dates").unwrap().status,
            SkillStatus::Candidate
        );
        assert!(
            back.eval_runs[0].outcome_delta.is_nan() && back.eval_runs[0].modes[0].score.is_nan()
        );
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }

    #[test]
    fn a_bundle_adds_its_other_selectable_members_once_and_old_banks_read_without_bundles() {
        let b = |name: &str, m: &[&str]| Bundle {
            name: name.into(),
            members: m.iter().map(|x| x.to_string()).collect(),
            stage: 1,
            note: String::new(),
        };
        let bundles = [b("dates", &["a", "b", "c"]), b("places", &["c", "d"])];
        let avail = ["a", "b", "d", "e"]; // c is deprecated
        assert_eq!(with_bundled(&bundles, &["e"], &avail), vec!["e"]);
        assert_eq!(with_bundled(&bundles, &["b"], &avail), vec!["b", "a"]);
        assert_eq!(
            with_bundled(&bundles, &["d", "a"], &avail),
            vec!["d", "a", "b"]
        );
        // a bank without bundles writes no key (banks of the paper's path keep their bytes)
        let seed = serde_json::to_string(&SkillBank::seed()).unwrap();
        assert!(!seed.contains("bundles") && !seed.contains("risk"));
        let mut bank = SkillBank::seed();
        bank.bundles.push(bundles[0].clone());
        bank.get_mut("insert").unwrap().risk = Some(RiskLevel::High);
        let back: SkillBank = serde_json::from_str(&serde_json::to_string(&bank).unwrap()).unwrap();
        assert_eq!(back, bank);
        // a candidate held by the high-risk gate stays a candidate when read back (it is not
        // a bank from before the gate)
        let mut held = SkillBank::seed();
        let mut s = Skill::active("call-api", ActionKind::Insert, "d", "i", "t");
        s.status = SkillStatus::Candidate;
        held.insert(s).unwrap();
        held.releases.push(ReleaseRecord::status_change(
            "call-api",
            ReleaseKind::Held,
            Version::new(1, 0, 0),
            1,
            String::new(),
        ));
        let read: SkillBank = serde_json::from_str(&serde_json::to_string(&held).unwrap()).unwrap();
        assert_eq!(read.get("call-api").unwrap().status, SkillStatus::Candidate);
        assert_eq!(
            back.content_hash(),
            SkillBank::seed().content_hash(),
            "risk is not content"
        );
    }

    #[test]
    fn seed_bank_is_sorted_and_valid() {
        let b = SkillBank::seed();
        assert_eq!(b.names(), vec!["delete", "insert", "noop", "update"]);
        for s in b.skills() {
            validate_skill_name(&s.name).unwrap();
            assert_eq!(s.name, s.action.as_str());
            assert!(!s.description.is_empty() && s.instructions.len() > s.description.len() / 2);
        }
        assert_eq!(b.releases.len(), 4);
        assert_eq!(b.selectable().len(), 4);
    }

    #[test]
    fn content_hash_ignores_usage_but_not_text() {
        let a = SkillBank::seed();
        let mut b = a.clone();
        b.get_mut("insert").unwrap().usage.record(0.5);
        assert_eq!(a.content_hash(), b.content_hash());
        b.get_mut("insert").unwrap().instructions.push('!');
        assert_ne!(a.content_hash(), b.content_hash());
    }

    #[test]
    fn insert_keeps_order_and_rejects_duplicates_and_bad_names() {
        let mut b = SkillBank::seed();
        let mut s = b.get("insert").unwrap().clone();
        s.name = "capture-dates".into();
        b.insert(s.clone()).unwrap();
        assert_eq!(b.names()[0], "capture-dates");
        assert_eq!(
            b.insert(s.clone()),
            Err(CoreError::DuplicateSkill("capture-dates".into()))
        );
        for bad in ["", "Upper", "a_b", "-a", "a-", "a--b", &"x".repeat(65)] {
            s.name = bad.into();
            assert!(b.insert(s.clone()).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn version_round_trip() {
        let v: Version = "1.2.3".parse().unwrap();
        assert_eq!(v.to_string(), "1.2.3");
        assert_eq!(v.bump_patch(), Version::new(1, 2, 4));
        assert_eq!(v.bump_minor(), Version::new(1, 3, 0));
        for bad in ["1.2", "1.2.3.4", "a.b.c", "", "1..2", "-1.0.0"] {
            assert!(bad.parse::<Version>().is_err(), "{bad}");
        }
        let j = serde_json::to_string(&v).unwrap();
        assert_eq!(j, "\"1.2.3\"");
        assert_eq!(serde_json::from_str::<Version>(&j).unwrap(), v);
    }

    #[test]
    fn usage_stats_running_mean_and_window() {
        let mut u = UsageStats::default();
        for i in 0..60 {
            u.record(i as f64);
        }
        assert_eq!(u.count, 60);
        assert!((u.mean_reward - 29.5).abs() < 1e-9);
        assert_eq!(u.recent_rewards.len(), UsageStats::RECENT);
        assert_eq!(u.recent_rewards[0], 10.0);
    }

    #[test]
    fn bank_json_round_trip() {
        let b = SkillBank::seed();
        let j = serde_json::to_string_pretty(&b).unwrap();
        let c: SkillBank = serde_json::from_str(&j).unwrap();
        assert_eq!(b, c);
        assert_eq!(b.content_hash(), c.content_hash());
    }
}
