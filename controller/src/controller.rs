//! [`Controller`]: skill selection (Gumbel-Top-K / greedy top-K) and PPO updates.

use crate::bias::{BiasReeval, BiasSpec, NewSkillBias};
use crate::error::ControllerError;
use crate::plackett_luce::{
    entropy_tensor, gumbel_top_k, pl_log_prob_clamped_tensor, pl_log_prob_form_f64,
    pl_log_prob_tensor, pl_remaining_mask, top_k, topk_stats_f64, PlForm,
};
use crate::policy::{
    clip_global_norm_flat, forward, open_device, Adam, FlatState, Params, PolicyBatch, PolicyConfig,
};
use crate::ppo::{gae, normalize, PpoConfig, PpoStats, Transition};
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How `select` chooses: sample with Gumbel-Top-K (training) or take the top-K (evaluation).
pub enum SelectMode<'a> {
    Sample(&'a mut ChaCha8Rng),
    Greedy,
}

/// The outcome of one selection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Ordered chosen indices into `skill_embs`.
    pub skills: Vec<usize>,
    /// Plackett-Luce log-probability of `skills` under the (biased, when sampling) policy.
    pub log_prob: f32,
    /// Critic value of the state.
    pub value: f32,
    /// The softmax the selection was drawn from (biased when sampling with a bias).
    pub probs: Vec<f32>,
    /// Logit bias applied (zeros when none); store it in `Transition::bias`.
    pub bias: Vec<f32>,
    /// The bias parameters, when the PPO update recomputes the bias from the current logits
    /// (`bias.reeval = "current"`, the reference); store it in `Transition::bias_spec`.
    #[serde(default)]
    pub bias_spec: Option<BiasSpec>,
}

impl Transition {
    /// The transition of a rollout decision: `state`, the selectable skills' embeddings, and
    /// what [`Controller::select`] returned (actions, bias, log-prob, value).
    pub fn from_selection(
        state: Vec<f32>,
        skill_embs: std::sync::Arc<Vec<Vec<f32>>>,
        sel: Selection,
        reward: f32,
    ) -> Self {
        Transition {
            state,
            skill_embs,
            bias: sel.bias,
            bias_spec: sel.bias_spec,
            actions: sel.skills,
            old_log_prob: sel.log_prob,
            old_value: sel.value,
            reward,
        }
    }
}

/// The learnable skill-selection policy with its critic and optimiser.
pub struct Controller {
    emb_dim: usize,
    policy: PolicyConfig,
    ppo: PpoConfig,
    params: Params,
    adam: Adam,
    updates: u64,
    rng: ChaCha8Rng,
    device: Device,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("emb_dim", &self.emb_dim)
            .field("policy", &self.policy)
            .field("ppo", &self.ppo)
            .field("updates", &self.updates)
            .field("parameters", &self.params.num_values())
            .finish()
    }
}

const MAGIC: &[u8; 8] = b"MSKCTRL1";

/// The embedding size a controller saved by [`Controller::save_bytes`] was built for (the
/// encoder dimension a run of that checkpoint needs), read from its header alone.
pub fn saved_emb_dim(bytes: &[u8]) -> Result<usize, ControllerError> {
    Ok(read_header(bytes)?.0.emb_dim)
}

/// The header of a saved controller and the offset where its tensors begin.
fn read_header(bytes: &[u8]) -> Result<(Header, usize), ControllerError> {
    let err = |m: String| ControllerError::Checkpoint(m);
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return Err(err(
            "not a memskill controller checkpoint (bad magic)".into()
        ));
    }
    let hlen = u64::from_le_bytes(
        bytes[8..16]
            .try_into()
            .map_err(|_| err("truncated".into()))?,
    ) as usize;
    let hend = 16usize
        .checked_add(hlen)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| err("truncated header".into()))?;
    let header: Header =
        serde_json::from_slice(&bytes[16..hend]).map_err(|e| err(format!("header: {e}")))?;
    Ok((header, hend))
}

#[derive(Serialize, Deserialize)]
struct Header {
    emb_dim: usize,
    hidden: usize,
    updates: u64,
    adam_t: u64,
    rng: ChaCha8Rng,
    shapes: Vec<(String, usize, usize)>,
}

fn check_vec(what: impl Fn() -> String, v: &[f32], expected: usize) -> Result<(), ControllerError> {
    if v.len() != expected {
        return Err(ControllerError::Dim {
            what: what(),
            expected,
            got: v.len(),
        });
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(ControllerError::NonFinite(what()));
    }
    Ok(())
}

fn softmax(logits: &[f32]) -> Vec<f32> {
    let m = logits.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f64> = logits.iter().map(|&l| ((l - m) as f64).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|x| (x / s) as f32).collect()
}

/// A tensor's values on the host.
fn to_host<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, ControllerError> {
    t.into_data()
        .try_to_vec::<f32>()
        .map_err(|e| ControllerError::Tensor(format!("{e:?}")))
}

/// The minibatch's chosen actions as tensors, padded to the longest action list `k`:
/// actions `[b, k]`, their mask `[b, k]`, and the Plackett-Luce remaining mask `[b, k, n]`.
fn action_tensors(
    chunk: &[usize],
    flat: &[&Transition],
    n: usize,
    ad: &Device,
) -> (Tensor<2, Int>, Tensor<2, Bool>, Tensor<3, Bool>) {
    let b = chunk.len();
    let k = chunk
        .iter()
        .map(|&i| flat[i].actions.len())
        .max()
        .unwrap_or(1);
    let mut actions = vec![0i64; b * k];
    let mut amask = vec![false; b * k];
    for (r, &i) in chunk.iter().enumerate() {
        for (j, &a) in flat[i].actions.iter().enumerate() {
            actions[r * k + j] = a as i64;
            amask[r * k + j] = true;
        }
    }
    let acts: Vec<Vec<usize>> = chunk.iter().map(|&i| flat[i].actions.clone()).collect();
    let n_real: Vec<usize> = chunk.iter().map(|&i| flat[i].skill_embs.len()).collect();
    let remaining = pl_remaining_mask(&acts, &n_real, k, n);
    let remaining_t = Tensor::<3, Bool>::from_data(TensorData::new(remaining, [b, k, n]), ad);
    let actions_t = Tensor::<2, Int>::from_data(TensorData::new(actions, [b, k]), ad);
    let amask_t = Tensor::<2, Bool>::from_data(TensorData::new(amask, [b, k]), ad);
    (actions_t, amask_t, remaining_t)
}

/// The reference's `_apply_new_action_bias` inside evaluate_actions: rows with a bias spec
/// get their bias from the current logits, without gradient, with the rollout's scale.
fn with_current_bias(
    logits: Tensor<2>,
    chunk: &[usize],
    flat: &[&Transition],
    n: usize,
    ad: &Device,
) -> Result<Tensor<2>, ControllerError> {
    if !chunk.iter().any(|&i| flat[i].bias_spec.is_some()) {
        return Ok(logits);
    }
    let raw = to_host(logits.clone().detach())?;
    let mut bias = vec![0.0f32; chunk.len() * n];
    for (r, &i) in chunk.iter().enumerate() {
        if let Some(spec) = &flat[i].bias_spec {
            let nr = flat[i].skill_embs.len();
            let row = spec.logit_bias(&raw[r * n..r * n + nr]);
            bias[r * n..r * n + nr].copy_from_slice(&row);
        }
    }
    Ok(logits + Tensor::<2>::from_data(TensorData::new(bias, [chunk.len(), n]), ad))
}

/// Sums over the minibatch's rows of the top-k statistics (entropy, mass, binary entropy)
/// of the final logits `[b, n]`, each row over its real skills.
fn topk_sums(
    final_logits: &[f32],
    chunk: &[usize],
    flat: &[&Transition],
    n: usize,
) -> (f64, f64, f64) {
    let (mut tk_ent, mut tk_mass, mut tk_bin) = (0.0f64, 0.0f64, 0.0f64);
    for (r, &i) in chunk.iter().enumerate() {
        let nr = flat[i].skill_embs.len();
        let row: Vec<f64> = final_logits[r * n..r * n + nr]
            .iter()
            .map(|&x| x as f64)
            .collect();
        let (e, m, bn) = topk_stats_f64(&row, &flat[i].actions);
        tk_ent += e;
        tk_mass += m;
        tk_bin += bn;
    }
    (tk_ent, tk_mass, tk_bin)
}

/// The reference's KL estimator summed over the rows (old log-prob - new log-prob) and the
/// number of rows whose ratio left [1 - clip, 1 + clip].
fn kl_and_clipped(old: &[f32], new: &[f32], clip: f32) -> (f64, usize) {
    let mut kl = 0.0f64;
    let mut clipped = 0usize;
    for (o, nv) in old.iter().zip(new) {
        let lr = (*nv - *o) as f64;
        kl -= lr;
        if (lr.exp() - 1.0).abs() > clip as f64 {
            clipped += 1;
        }
    }
    (kl, clipped)
}

/// One row of a policy batch: state, skill embeddings, new-skill bias.
type BatchItem<'a> = (&'a [f32], &'a [Vec<f32>], &'a [f32]);

/// A skill embedding as a hash key: equal when bitwise equal.
struct RowKey<'a>(&'a [f32]);

impl PartialEq for RowKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(other.0)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

impl Eq for RowKey<'_> {}

impl std::hash::Hash for RowKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // The length and a few leading values tell embeddings apart; equality checks them all.
        self.0.len().hash(state);
        for x in self.0.iter().take(8) {
            x.to_bits().hash(state);
        }
    }
}

impl Controller {
    /// A freshly initialised controller for embeddings of size `emb_dim` (state = `2 * emb_dim`).
    pub fn new(
        emb_dim: usize,
        policy: &PolicyConfig,
        ppo: &PpoConfig,
        seed: u64,
    ) -> Result<Self, ControllerError> {
        if emb_dim == 0 {
            return Err(ControllerError::Config {
                field: "emb_dim".into(),
                msg: "must be > 0".into(),
            });
        }
        if policy.hidden == 0 {
            return Err(ControllerError::Config {
                field: "policy.hidden".into(),
                msg: "must be > 0".into(),
            });
        }
        ppo.validate()?;
        let device = open_device(policy.device)?;
        let mut init_rng = ChaCha8Rng::seed_from_u64(seed);
        let params = Params::init_with(policy.init, emb_dim, policy.hidden, &mut init_rng);
        let adam = Adam::new(&params);
        Ok(Self {
            emb_dim,
            policy: policy.clone(),
            ppo: ppo.clone(),
            params,
            adam,
            updates: 0,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x9E37_79B9_7F4A_7C15),
            device,
        })
    }

    /// Embedding size the controller was built for.
    pub fn emb_dim(&self) -> usize {
        self.emb_dim
    }

    /// Number of PPO updates performed so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The PPO configuration in use.
    pub fn ppo_config(&self) -> &PpoConfig {
        &self.ppo
    }

    /// Replaces the PPO configuration (e.g. after a `--set` override on resume).
    pub fn set_ppo_config(&mut self, ppo: &PpoConfig) -> Result<(), ControllerError> {
        ppo.validate()?;
        self.ppo = ppo.clone();
        Ok(())
    }

    /// The network's parameters named and laid out as the reference's
    /// `PPOController.state_dict()` (name, shape, row-major values).
    pub fn reference_state_dict(&self) -> Vec<crate::policy::NamedTensor> {
        self.params.to_reference_state_dict()
    }

    /// Replaces the network's parameters by reference-layout tensors (see
    /// [`reference_state_dict`](Self::reference_state_dict)); the optimiser state is kept.
    pub fn load_reference_state_dict(
        &mut self,
        dict: &[crate::policy::NamedTensor],
    ) -> Result<(), ControllerError> {
        self.params.load_reference_state_dict(dict)
    }

    fn validate_inputs(
        &self,
        state: &[f32],
        skill_embs: &[Vec<f32>],
    ) -> Result<(), ControllerError> {
        check_vec(|| "state".into(), state, 2 * self.emb_dim)?;
        if skill_embs.is_empty() {
            return Err(ControllerError::NoSkills);
        }
        for (i, e) in skill_embs.iter().enumerate() {
            check_vec(|| format!("skill_embs[{i}]"), e, self.emb_dim)?;
        }
        Ok(())
    }

    fn batch(&self, items: &[BatchItem<'_>], device: &Device) -> PolicyBatch {
        let b = items.len();
        let n = items.iter().map(|x| x.1.len()).max().unwrap_or(0);
        let d = self.emb_dim;
        let mut states = Vec::with_capacity(b * 2 * d);
        let mut mask = vec![false; b * n];
        let mut bias = vec![0.0f32; b * n];
        // The distinct skill embeddings (bitwise) and, per (row, skill), which one it is. Rows
        // whose skill list is the very same slice (transitions share the bank's embeddings) reuse
        // the first such row's indices without looking at the values.
        let mut rows: Vec<&[f32]> = Vec::new();
        let mut index = vec![0i64; b * n];
        let mut by_value: HashMap<RowKey<'_>, i64> = HashMap::new();
        let mut by_slice: HashMap<(usize, usize), usize> = HashMap::new();
        for (i, (s, e, bi)) in items.iter().enumerate() {
            states.extend_from_slice(s);
            mask[i * n..i * n + e.len()].fill(true);
            let nb = bi.len().min(e.len());
            bias[i * n..i * n + nb].copy_from_slice(&bi[..nb]);
            match by_slice.entry((e.as_ptr() as usize, e.len())) {
                std::collections::hash_map::Entry::Occupied(first) => {
                    let j = *first.get();
                    index.copy_within(j * n..j * n + e.len(), i * n);
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(i);
                    for (j, emb) in e.iter().enumerate() {
                        let next = rows.len() as i64;
                        let at = *by_value.entry(RowKey(emb.as_slice())).or_insert(next);
                        if at == next {
                            rows.push(emb.as_slice());
                        }
                        index[i * n + j] = at;
                    }
                }
            }
        }
        let (skills, skill_index) = if rows.len() == b * n {
            // Nothing shared and nothing padded: the rows in order are the batch.
            let mut flat = Vec::with_capacity(b * n * d);
            for r in &rows {
                flat.extend_from_slice(r);
            }
            (flat, None)
        } else {
            let mut flat = Vec::with_capacity(rows.len() * d);
            for r in &rows {
                flat.extend_from_slice(r);
            }
            let idx = Tensor::<1, Int>::from_data(TensorData::new(index, [b * n]), device);
            (flat, Some(idx))
        };
        let m = skills.len() / d.max(1);
        PolicyBatch {
            states: Tensor::<2>::from_data(TensorData::new(states, [b, 2 * d]), device),
            skills: Tensor::<2>::from_data(TensorData::new(skills, [m, d]), device),
            skill_index,
            skill_mask: Tensor::<2, Bool>::from_data(TensorData::new(mask, [b, n]), device),
            bias: Tensor::<2>::from_data(TensorData::new(bias, [b, n]), device),
            b,
            n,
        }
    }

    /// Raw (unbiased) logits and value for one state.
    fn logits_value(
        &self,
        state: &[f32],
        skill_embs: &[Vec<f32>],
    ) -> Result<(Vec<f32>, f32), ControllerError> {
        let p = self.params.to_tensors(&self.device, false);
        let batch = self.batch(&[(state, skill_embs, &[])], &self.device);
        let (logits, value) = forward(&p, &batch);
        let logits = to_host(logits)?;
        let value = to_host(value)?;
        Ok((logits, value.first().copied().unwrap_or(0.0)))
    }

    /// Selects `min(k, n)` ordered skills for `state`. `Sample` draws with Gumbel-Top-K under
    /// the biased logits (bias from `bias`, if any); `Greedy` takes the deterministic top-K of the
    /// unbiased logits and never applies the bias.
    pub fn select(
        &self,
        state: &[f32],
        skill_embs: &[Vec<f32>],
        k: usize,
        bias: Option<&NewSkillBias>,
        mode: SelectMode,
    ) -> Result<Selection, ControllerError> {
        self.validate_inputs(state, skill_embs)?;
        let n = skill_embs.len();
        let k = k.min(n);
        let (logits, value) = self.logits_value(state, skill_embs)?;
        let (skills, used_logits, bias_vec, bias_spec) = match mode {
            SelectMode::Greedy => (top_k(&logits, k), logits.clone(), vec![0.0; n], None),
            SelectMode::Sample(rng) => {
                let spec = bias.and_then(|b| b.spec(n, self.updates).map(|s| (s, b.reeval)));
                let b = spec
                    .as_ref()
                    .map(|(s, _)| s.logit_bias(&logits))
                    .unwrap_or_else(|| vec![0.0; n]);
                let biased: Vec<f32> = logits.iter().zip(&b).map(|(l, x)| l + x).collect();
                let keep = spec.and_then(|(s, r)| (r == BiasReeval::Current).then_some(s));
                (gumbel_top_k(&biased, k, rng), biased, b, keep)
            }
        };
        let l64: Vec<f64> = used_logits.iter().map(|&x| x as f64).collect();
        let log_prob = pl_log_prob_form_f64(self.ppo.plackett_luce, &l64, &skills) as f32;
        Ok(Selection {
            skills,
            log_prob,
            value,
            probs: softmax(&used_logits),
            bias: bias_vec,
            bias_spec,
        })
    }

    /// The unbiased logits over the skills for `state` (one per skill embedding).
    pub fn logits(
        &self,
        state: &[f32],
        skill_embs: &[Vec<f32>],
    ) -> Result<Vec<f32>, ControllerError> {
        self.validate_inputs(state, skill_embs)?;
        Ok(self.logits_value(state, skill_embs)?.0)
    }

    /// Sets the PPO update counter (a checkpoint imported from elsewhere carries its own).
    pub fn set_updates(&mut self, updates: u64) {
        self.updates = updates;
    }

    /// The unbiased single-step softmax over the skills for `state`.
    pub fn skill_probs(
        &self,
        state: &[f32],
        skill_embs: &[Vec<f32>],
    ) -> Result<Vec<f32>, ControllerError> {
        Ok(softmax(&self.logits(state, skill_embs)?))
    }

    fn validate_transition(
        &self,
        e: usize,
        t: usize,
        tr: &Transition,
        checked: &mut std::collections::HashSet<usize>,
    ) -> Result<(), ControllerError> {
        let at = |what: &str| format!("episodes[{e}][{t}].{what}");
        check_vec(|| at("state"), &tr.state, 2 * self.emb_dim)?;
        let n = tr.skill_embs.len();
        if n == 0 {
            return Err(ControllerError::BadAction(format!(
                "{}: no skills",
                at("skill_embs")
            )));
        }
        // Transitions usually share one skill list (one Arc): check its values once.
        if checked.insert(std::sync::Arc::as_ptr(&tr.skill_embs) as usize) {
            for (i, s) in tr.skill_embs.iter().enumerate() {
                check_vec(|| at(&format!("skill_embs[{i}]")), s, self.emb_dim)?;
            }
        }
        if !tr.bias.is_empty() {
            check_vec(|| at("bias"), &tr.bias, n)?;
        }
        if let Some(spec) = &tr.bias_spec {
            if spec.new_mask.len() != n {
                return Err(ControllerError::Dim {
                    what: at("bias_spec.new_mask"),
                    expected: n,
                    got: spec.new_mask.len(),
                });
            }
            if !(spec.p_min.is_finite() && spec.delta_max.is_finite() && spec.scale.is_finite()) {
                return Err(ControllerError::NonFinite(at("bias_spec")));
            }
        }
        if tr.actions.is_empty() {
            return Err(ControllerError::BadAction(format!(
                "{}: empty",
                at("actions")
            )));
        }
        for (j, &a) in tr.actions.iter().enumerate() {
            if a >= n || tr.actions[..j].contains(&a) {
                return Err(ControllerError::BadAction(format!(
                    "{}: index {a} out of range (n = {n}) or repeated",
                    at("actions")
                )));
            }
        }
        if !tr.old_log_prob.is_finite() || !tr.old_value.is_finite() || !tr.reward.is_finite() {
            return Err(ControllerError::NonFinite(at(
                "old_log_prob/old_value/reward",
            )));
        }
        Ok(())
    }

    /// One PPO update over `episodes` (each a terminal episode of transitions in order): GAE per
    /// episode, advantages normalised over the batch, `ppo_epochs` epochs of shuffled
    /// minibatches (`minibatch_size = 0`: the whole batch), early stop when an epoch's mean
    /// approximate KL exceeds `target_kl` (> 0).
    /// Increments [`updates`](Self::updates) when at least one transition was given.
    pub fn update(&mut self, episodes: &[Vec<Transition>]) -> Result<PpoStats, ControllerError> {
        let mut flat: Vec<&Transition> = Vec::new();
        let mut advs: Vec<f32> = Vec::new();
        let mut rets: Vec<f32> = Vec::new();
        let mut checked = std::collections::HashSet::new();
        for (e, ep) in episodes.iter().enumerate() {
            for (t, tr) in ep.iter().enumerate() {
                self.validate_transition(e, t, tr, &mut checked)?;
            }
            let rewards: Vec<f32> = ep.iter().map(|t| t.reward).collect();
            let values: Vec<f32> = ep.iter().map(|t| t.old_value).collect();
            let (a, r) = gae(&rewards, &values, self.ppo.gamma, self.ppo.gae_lambda);
            flat.extend(ep.iter());
            advs.extend(a);
            rets.extend(r);
        }
        let total = flat.len();
        if total == 0 {
            return Ok(PpoStats::default());
        }
        if self.ppo.normalize_advantages {
            normalize(&mut advs);
        }
        let mut flat_state = FlatState::upload(&self.params, &self.adam, &self.device);
        let res = self.epochs(&flat, &advs, &rets, &mut flat_state);
        // Also after an error: the steps taken so far stay taken, as they always have.
        flat_state.write_back(&mut self.params, &mut self.adam);
        let mut stats = res?;
        let m = stats.minibatches.max(1) as f32;
        stats.policy_loss /= m;
        stats.value_loss /= m;
        stats.entropy /= m;
        stats.approx_kl /= m;
        stats.clip_frac /= m;
        stats.grad_norm /= m;
        stats.topk_entropy /= m;
        stats.topk_mass /= m;
        stats.topk_bin_entropy /= m;
        self.updates += 1;
        Ok(stats)
    }

    /// The epochs of one update (sums of the minibatch statistics).
    fn epochs(
        &mut self,
        flat: &[&Transition],
        advs: &[f32],
        rets: &[f32],
        st: &mut FlatState,
    ) -> Result<PpoStats, ControllerError> {
        let total = flat.len();
        let ad = self.device.clone().autodiff();
        let mut stats = PpoStats::default();
        let mut idx: Vec<usize> = (0..total).collect();
        let mb = if self.ppo.minibatch_size == 0 {
            total
        } else {
            self.ppo.minibatch_size
        };
        for _epoch in 0..self.ppo.ppo_epochs {
            idx.shuffle(&mut self.rng);
            let mut epoch_kl = 0.0f64;
            let mut epoch_mbs = 0usize;
            for chunk in idx.chunks(mb) {
                let s = self.minibatch_step(chunk, flat, advs, rets, &ad, st)?;
                stats.policy_loss += s.policy_loss;
                stats.value_loss += s.value_loss;
                stats.entropy += s.entropy;
                stats.approx_kl += s.approx_kl;
                stats.clip_frac += s.clip_frac;
                stats.grad_norm += s.grad_norm;
                stats.topk_entropy += s.topk_entropy;
                stats.topk_mass += s.topk_mass;
                stats.topk_bin_entropy += s.topk_bin_entropy;
                stats.minibatches += 1;
                epoch_kl += s.approx_kl as f64;
                epoch_mbs += 1;
            }
            stats.epochs_run += 1;
            if self.ppo.target_kl > 0.0
                && epoch_mbs > 0
                && epoch_kl / epoch_mbs as f64 > self.ppo.target_kl as f64
            {
                stats.early_stopped = true;
                break;
            }
        }
        Ok(stats)
    }

    fn minibatch_step(
        &mut self,
        chunk: &[usize],
        flat: &[&Transition],
        advs: &[f32],
        rets: &[f32],
        ad: &Device,
        st: &mut FlatState,
    ) -> Result<PpoStats, ControllerError> {
        // Rows with a bias spec get their bias from the current logits below; the others re-apply
        // the stored rollout bias (if any).
        let items: Vec<BatchItem<'_>> = chunk
            .iter()
            .map(|&i| {
                let t = flat[i];
                let stored: &[f32] = if t.bias_spec.is_some() { &[] } else { &t.bias };
                (t.state.as_slice(), t.skill_embs.as_slice(), stored)
            })
            .collect();
        let batch = self.batch(&items, ad);
        let b = chunk.len();
        let (actions_t, amask_t, remaining_t) = action_tensors(chunk, flat, batch.n, ad);
        let old: Vec<f32> = chunk.iter().map(|&i| flat[i].old_log_prob).collect();
        let adv: Vec<f32> = chunk.iter().map(|&i| advs[i]).collect();
        let ret: Vec<f32> = chunk.iter().map(|&i| rets[i]).collect();
        let old_t = Tensor::<1>::from_data(TensorData::new(old.clone(), [b]), ad);
        let adv_t = Tensor::<1>::from_data(TensorData::new(adv, [b]), ad);
        let ret_t = Tensor::<1>::from_data(TensorData::new(ret, [b]), ad);

        let params = st.leaves(&self.params);
        let (logits, values) = forward(&params, &batch);
        let logits = with_current_bias(logits, chunk, flat, batch.n, ad)?;
        let (tk_ent, tk_mass, tk_bin) =
            topk_sums(&to_host(logits.clone().detach())?, chunk, flat, batch.n);
        let new_lp = match self.ppo.plackett_luce {
            PlForm::Clamped => pl_log_prob_clamped_tensor(logits.clone(), actions_t, amask_t),
            PlForm::Exact => pl_log_prob_tensor(logits.clone(), actions_t, amask_t, remaining_t),
        };
        let ent = entropy_tensor(logits, batch.skill_mask.clone()).mean();
        let ratio = (new_lp.clone() - old_t).exp();
        let c = self.ppo.clip;
        let s1 = ratio.clone() * adv_t.clone();
        let s2 = ratio.clamp(1.0 - c, 1.0 + c) * adv_t;
        let policy_loss = s1.min_pair(s2).mean().neg();
        // 0.5 * MSE, as the reference's compute_ppo_loss (issue 11, fix 1).
        let value_loss = (values - ret_t).square().mean().mul_scalar(0.5);
        let loss = policy_loss.clone() + value_loss.clone().mul_scalar(self.ppo.value_coef)
            - ent.clone().mul_scalar(self.ppo.entropy_coef);
        let grad_norm = self.descend(&params, loss, st)?;

        let (kl, clipped) = kl_and_clipped(&old, &to_host(new_lp)?, c);
        let scalar = |t: Tensor<1>| -> Result<f32, ControllerError> {
            Ok(to_host(t)?.first().copied().unwrap_or(0.0))
        };
        Ok(PpoStats {
            policy_loss: scalar(policy_loss)?,
            value_loss: scalar(value_loss)?,
            entropy: scalar(ent)?,
            approx_kl: (kl / b as f64) as f32,
            clip_frac: clipped as f32 / b as f32,
            grad_norm,
            topk_entropy: (tk_ent / b as f64) as f32,
            topk_mass: (tk_mass / b as f64) as f32,
            topk_bin_entropy: (tk_bin / b as f64) as f32,
            ..PpoStats::default()
        })
    }

    /// One gradient step on `loss`: all gradients of `params` as one flat tensor (norm, clip
    /// and Adam are a few tensor operations over it, no per-element host loop), clipped to
    /// `max_grad_norm`, then Adam. Returns the norm before clipping.
    fn descend(
        &mut self,
        params: &[Tensor<2>],
        loss: Tensor<1>,
        st: &mut FlatState,
    ) -> Result<f32, ControllerError> {
        let grads = loss.backward();
        let flat: Vec<Tensor<1>> = params
            .iter()
            .zip(&self.params.list)
            .map(|(p, meta)| match p.grad(&grads) {
                Some(t) => t.reshape([meta.data.len()]),
                None => Tensor::<1>::zeros([meta.data.len()], &self.device),
            })
            .collect();
        let (g, grad_norm) = clip_global_norm_flat(Tensor::cat(flat, 0), self.ppo.max_grad_norm);
        if !grad_norm.is_finite() {
            return Err(ControllerError::NonFinite("PPO gradient".into()));
        }
        self.adam.step_flat(st, g, self.ppo.lr);
        Ok(grad_norm)
    }

    /// Serialises weights, Adam state, the update counter and the shuffling RNG. The encoding is
    /// deterministic: identical state gives identical bytes.
    pub fn save_bytes(&self) -> Result<Vec<u8>, ControllerError> {
        let header = Header {
            emb_dim: self.emb_dim,
            hidden: self.policy.hidden,
            updates: self.updates,
            adam_t: self.adam.t,
            rng: self.rng.clone(),
            shapes: self
                .params
                .list
                .iter()
                .map(|p| (p.name.to_string(), p.rows, p.cols))
                .collect(),
        };
        let hjson =
            serde_json::to_vec(&header).map_err(|e| ControllerError::Checkpoint(e.to_string()))?;
        let nvals = self.params.num_values();
        let mut out = Vec::with_capacity(16 + hjson.len() + 12 * nvals);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(hjson.len() as u64).to_le_bytes());
        out.extend_from_slice(&hjson);
        for block in [
            self.params.list.iter().map(|p| &p.data).collect::<Vec<_>>(),
            self.adam.m.iter().collect(),
            self.adam.v.iter().collect(),
        ] {
            for v in block {
                for x in v {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        Ok(out)
    }

    /// Restores state written by [`save_bytes`](Self::save_bytes). The embedding size and hidden
    /// width must match this controller's.
    pub fn load_bytes(&mut self, bytes: &[u8]) -> Result<(), ControllerError> {
        let err = |m: String| ControllerError::Checkpoint(m);
        let (header, hend) = read_header(bytes)?;
        if header.emb_dim != self.emb_dim || header.hidden != self.policy.hidden {
            return Err(err(format!(
                "checkpoint has emb_dim {} / hidden {}, this controller {} / {}",
                header.emb_dim, header.hidden, self.emb_dim, self.policy.hidden
            )));
        }
        let expected: Vec<(String, usize, usize)> = self
            .params
            .list
            .iter()
            .map(|p| (p.name.to_string(), p.rows, p.cols))
            .collect();
        if header.shapes != expected {
            return Err(err("parameter layout differs from this build".into()));
        }
        let nvals = self.params.num_values();
        let body = &bytes[hend..];
        if body.len() != 12 * nvals {
            return Err(err(format!(
                "body has {} bytes, expected {}",
                body.len(),
                12 * nvals
            )));
        }
        let mut floats = body
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let mut params = self.params.clone();
        let mut adam = self.adam.clone();
        for p in params.list.iter_mut() {
            for x in p.data.iter_mut() {
                *x = floats.next().unwrap_or(0.0);
            }
        }
        for m in adam.m.iter_mut().chain(adam.v.iter_mut()) {
            for x in m.iter_mut() {
                *x = floats.next().unwrap_or(0.0);
            }
        }
        adam.t = header.adam_t;
        self.params = params;
        self.adam = adam;
        self.updates = header.updates;
        self.rng = header.rng;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bias::BiasConfig;
    use std::sync::Arc;

    fn small() -> Controller {
        Controller::new(
            4,
            &PolicyConfig {
                hidden: 16,
                device: crate::PolicyDevice::Cpu,
                ..PolicyConfig::default()
            },
            &PpoConfig::default(),
            7,
        )
        .unwrap()
    }

    fn embs(n: usize) -> Vec<Vec<f32>> {
        (0..n)
            .map(|i| (0..4).map(|j| ((i * 4 + j) as f32 * 0.37).sin()).collect())
            .collect()
    }

    #[test]
    fn select_shapes_greedy_and_validation() {
        let c = small();
        let state = vec![0.1f32; 8];
        let e = embs(5);
        let g = c.select(&state, &e, 3, None, SelectMode::Greedy).unwrap();
        assert_eq!(g.skills.len(), 3);
        assert_eq!(g.probs.len(), 5);
        assert!((g.probs.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        // greedy = top-3 of the probabilities, in order
        assert_eq!(g.skills, top_k(&g.probs, 3));
        let k_big = c.select(&state, &e, 9, None, SelectMode::Greedy).unwrap();
        assert_eq!(k_big.skills.len(), 5);
        assert!(k_big.log_prob < 0.0 && k_big.log_prob.is_finite());
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let s = c
            .select(&state, &e, 2, None, SelectMode::Sample(&mut rng))
            .unwrap();
        assert_eq!(s.skills.len(), 2);
        assert!(s.log_prob < 0.0);
        assert!(c
            .select(&state[..7], &e, 2, None, SelectMode::Greedy)
            .is_err());
        assert!(matches!(
            c.select(&state, &[], 2, None, SelectMode::Greedy),
            Err(ControllerError::NoSkills)
        ));
        let mut bad = e.clone();
        bad[2][1] = f32::NAN;
        let err = c
            .select(&state, &bad, 2, None, SelectMode::Greedy)
            .unwrap_err();
        assert!(err.to_string().contains("skill_embs[2]"), "{err}");
    }

    #[test]
    fn bias_applies_when_sampling_never_greedy() {
        let c = small();
        let state = vec![0.2f32; 8];
        let e = embs(6);
        let cfg = BiasConfig {
            p_min: 0.9,
            ..BiasConfig::default()
        };
        let b = NewSkillBias::new(vec![false, false, false, false, false, true], 0, &cfg);
        let g = c
            .select(&state, &e, 2, Some(&b), SelectMode::Greedy)
            .unwrap();
        assert!(g.bias.iter().all(|&x| x == 0.0));
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let s = c
            .select(&state, &e, 2, Some(&b), SelectMode::Sample(&mut rng))
            .unwrap();
        assert!(s.bias[5] > 0.0);
        assert!(s.probs[5] > g.probs[5]);
    }

    #[test]
    fn first_reevaluation_reproduces_rollout_log_probs() {
        // With lr tiny, the first minibatch's ratio must be 1 (approx_kl ~ 0): rollout and PPO
        // re-evaluation compute the same biased distribution, in both re-evaluation modes.
        for reeval in [BiasReeval::Current, BiasReeval::Rollout] {
            for form in [PlForm::Clamped, PlForm::Exact] {
                let mut c = Controller::new(
                    4,
                    &PolicyConfig {
                        hidden: 16,
                        device: crate::PolicyDevice::Cpu,
                        ..PolicyConfig::default()
                    },
                    &PpoConfig {
                        lr: 1e-12,
                        ppo_epochs: 1,
                        minibatch_size: 64,
                        plackett_luce: form,
                        ..PpoConfig::default()
                    },
                    11,
                )
                .unwrap();
                let e = Arc::new(embs(5));
                let b = NewSkillBias::new(
                    vec![false, true, false, false, true],
                    0,
                    &BiasConfig {
                        p_min: 0.8,
                        reeval,
                        ..BiasConfig::default()
                    },
                );
                let mut rng = ChaCha8Rng::seed_from_u64(5);
                let mut ep = Vec::new();
                for i in 0..6 {
                    let state: Vec<f32> = (0..8).map(|j| ((i * 8 + j) as f32).cos()).collect();
                    let s = c
                        .select(&state, &e, 3, Some(&b), SelectMode::Sample(&mut rng))
                        .unwrap();
                    assert!(s.bias.iter().any(|&x| x > 0.0));
                    assert_eq!(s.bias_spec.is_some(), reeval == BiasReeval::Current);
                    ep.push(Transition::from_selection(
                        state,
                        e.clone(),
                        s,
                        i as f32 * 0.1,
                    ));
                }
                let st = c.update(&[ep.clone()]).unwrap();
                assert!(st.approx_kl.abs() < 1e-6, "approx_kl {}", st.approx_kl);
                assert_eq!(st.clip_frac, 0.0);
                assert_eq!(c.updates(), 1);
                // Dropping the bias changes the re-evaluated distribution: KL no longer ~0.
                let mut nob = ep.clone();
                for t in nob.iter_mut() {
                    t.bias.clear();
                    t.bias_spec = None;
                }
                let st2 = c.update(&[nob]).unwrap();
                assert!(
                    st2.approx_kl.abs() > 1e-4,
                    "approx_kl without bias {}",
                    st2.approx_kl
                );
            }
        }
    }

    /// Issue 11, fix 1: the value loss is 0.5 * MSE (the old code reported and optimised MSE).
    /// With a zero-initialised critic output the value is 0 everywhere, so the first minibatch's
    /// value loss is 0.5 * mean(return^2) exactly.
    #[test]
    fn value_loss_is_half_the_mse() {
        let mut c = small();
        let mut dict = c.reference_state_dict();
        for t in dict.iter_mut() {
            if t.0.starts_with("critic_head.2") {
                t.2.iter_mut().for_each(|x| *x = 0.0);
            }
        }
        c.load_reference_state_dict(&dict).unwrap();
        c.set_ppo_config(&PpoConfig {
            ppo_epochs: 1,
            minibatch_size: 0,
            ..PpoConfig::default()
        })
        .unwrap();
        let e = Arc::new(embs(3));
        let tr = |r: f32| Transition {
            state: vec![0.3; 8],
            skill_embs: e.clone(),
            bias: vec![],
            bias_spec: None,
            actions: vec![1, 0],
            old_log_prob: -1.5,
            old_value: 0.0,
            reward: r,
        };
        // Two one-step episodes: returns = rewards (V = 0).
        let st = c.update(&[vec![tr(1.0)], vec![tr(3.0)]]).unwrap();
        let want = 0.5 * (1.0 + 9.0) / 2.0;
        assert!((st.value_loss - want).abs() < 1e-5, "{}", st.value_loss);
        assert_eq!(st.minibatches, 1);
    }

    /// The reference's approx_kl is mean(old - new) (it can be negative), and target_kl = 0
    /// disables the early stop.
    #[test]
    fn approx_kl_is_the_mean_log_ratio_and_zero_target_never_stops() {
        let mut c = small();
        c.set_ppo_config(&PpoConfig {
            ppo_epochs: 3,
            target_kl: 0.0,
            lr: 1e-12,
            ..PpoConfig::default()
        })
        .unwrap();
        let e = Arc::new(embs(3));
        let state = vec![0.3; 8];
        let sel = c.select(&state, &e, 2, None, SelectMode::Greedy).unwrap();
        let mut tr = Transition::from_selection(state, e, sel, 1.0);
        tr.old_log_prob += 0.25; // old - new = 0.25 on the only sample
        let st = c.update(&[vec![tr]]).unwrap();
        assert!((st.approx_kl - 0.25).abs() < 1e-5, "{}", st.approx_kl);
        assert_eq!(st.epochs_run, 3);
        assert!(!st.early_stopped);
    }

    #[test]
    fn save_load_roundtrip_is_byte_identical() {
        let mut a = small();
        let e = Arc::new(embs(3));
        let tr = Transition {
            state: vec![0.3; 8],
            skill_embs: e,
            bias: vec![],
            bias_spec: None,
            actions: vec![1, 0],
            old_log_prob: -1.5,
            old_value: 0.0,
            reward: 1.0,
        };
        a.update(&[vec![tr.clone(), tr]]).unwrap();
        let bytes = a.save_bytes().unwrap();
        assert_eq!(bytes, a.save_bytes().unwrap());
        let mut b = small();
        assert_ne!(b.save_bytes().unwrap(), bytes);
        b.load_bytes(&bytes).unwrap();
        assert_eq!(b.save_bytes().unwrap(), bytes);
        assert_eq!(b.updates(), 1);
        assert!(b.load_bytes(&bytes[..bytes.len() - 4]).is_err());
        assert!(b.load_bytes(b"garbage").is_err());
        assert_eq!(saved_emb_dim(&bytes).unwrap(), a.emb_dim());
        assert!(saved_emb_dim(b"garbage").is_err());
        let mut other = Controller::new(
            5,
            &PolicyConfig {
                hidden: 16,
                device: crate::PolicyDevice::Cpu,
                ..PolicyConfig::default()
            },
            &PpoConfig::default(),
            1,
        )
        .unwrap();
        assert!(other.load_bytes(&bytes).is_err());
    }

    /// The shared-skill batch (distinct rows + index) computes the same logits, values and
    /// gradients as the expanded `[B * N, d]` batch, with padding.
    #[test]
    fn deduplicated_skill_rows_match_the_expanded_batch() {
        let c = small();
        let ad = Device::flex().autodiff();
        let shared = embs(5);
        let copy = shared.clone();
        let short = embs(3); // same first three rows as `shared`, one row padded twice
        let states: Vec<Vec<f32>> = (0..3)
            .map(|i| (0..8).map(|j| ((i * 8 + j) as f32 * 0.3).cos()).collect())
            .collect();
        let bias = [0.0f32, 0.5, 0.0, 0.0, 0.0];
        let none: &[f32] = &[];
        let items: Vec<BatchItem<'_>> = vec![
            (states[0].as_slice(), shared.as_slice(), &bias[..]),
            (states[1].as_slice(), copy.as_slice(), none),
            (states[2].as_slice(), short.as_slice(), none),
        ];
        let dedup = c.batch(&items, &ad);
        assert!(dedup.skill_index.is_some());
        assert_eq!(dedup.skills.dims(), [5, 4]);
        let (b, n, d) = (3, 5, 4);
        let mut full = vec![0.0f32; b * n * d];
        for (i, it) in items.iter().enumerate() {
            for (j, e) in it.1.iter().enumerate() {
                full[(i * n + j) * d..(i * n + j + 1) * d].copy_from_slice(e);
            }
        }
        let expanded = PolicyBatch {
            skills: Tensor::<2>::from_data(TensorData::new(full, [b * n, d]), &ad),
            skill_index: None,
            states: dedup.states.clone(),
            skill_mask: dedup.skill_mask.clone(),
            bias: dedup.bias.clone(),
            b,
            n,
        };
        let run = |batch: &PolicyBatch| {
            let p = c.params.to_tensors(&ad, true);
            let (logits, values) = forward(&p, batch);
            let w = Tensor::<2>::from_data(
                TensorData::new((0..b * n).map(|i| (i as f32).sin()).collect(), [b, n]),
                &ad,
            );
            let loss = (logits.clone() * w)
                .mask_fill(batch.skill_mask.clone().bool_not(), 0.0)
                .sum()
                + values.clone().square().sum();
            let g = loss.backward();
            let mut out: Vec<f32> = logits.inner().into_data().try_to_vec().unwrap();
            out.extend(values.inner().into_data().try_to_vec::<f32>().unwrap());
            for t in &p {
                out.extend(t.grad(&g).unwrap().into_data().try_to_vec::<f32>().unwrap());
            }
            out
        };
        let (x, y) = (run(&dedup), run(&expanded));
        assert_eq!(x.len(), y.len());
        for (i, (a, e)) in x.iter().zip(&y).enumerate() {
            assert!((a - e).abs() <= 1e-5 * (1.0 + e.abs()), "[{i}] {a} vs {e}");
        }
    }

    #[test]
    fn update_rejects_bad_transitions() {
        let mut c = small();
        let tr = Transition {
            state: vec![0.3; 8],
            skill_embs: Arc::new(embs(3)),
            bias: vec![],
            bias_spec: None,
            actions: vec![1, 1],
            old_log_prob: -1.5,
            old_value: 0.0,
            reward: 1.0,
        };
        let err = c.update(&[vec![tr]]).unwrap_err();
        assert!(err.to_string().contains("episodes[0][0].actions"), "{err}");
        assert_eq!(c.updates(), 0);
        assert_eq!(c.update(&[]).unwrap(), PpoStats::default());
    }
}
