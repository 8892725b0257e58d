//! The actor-critic skill-selection network (burn) and its Adam optimiser.
//!
//! * `state_net`: MLP `2d -> H -> H` (ReLU) over the state `[span ; mean retrieved]`;
//! * `skill_net`: MLP `d -> H -> H` (ReLU) over each skill embedding;
//! * actor: MLP over `[h_state ; h_skill_i]` (`2H -> H -> 1`, ReLU), one logit per skill. The first
//!   layer's weight is stored as its two halves (`a1s`, `a1k`) so `h_state` is projected once per
//!   state instead of once per skill; this is the same function as the concatenated layer;
//! * critic: MLP `H -> H -> 1` on `h_state`.
//!
//! Parameters live on the host as `Vec<f32>` (the source of truth for Adam and checkpoints) and
//! are uploaded to the burn device for each forward pass. Adam and the *global* gradient-norm
//! clip are implemented here rather than with `burn::optim` because burn's `GradientClipping::Norm`
//! clips each parameter tensor separately (PPO's `clip_grad_norm_` bounds the global norm) and
//! because burn's optimiser record iterates a `HashMap`, which would make checkpoint bytes depend
//! on hashing order (the contract asks identical state => identical bytes).

use crate::error::ControllerError;
use crate::plackett_luce::MASKED_LOGIT;
use burn::tensor::{activation::relu, Bool, Device, FloatDType, Int, Tensor, TensorData};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Network and device configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PolicyConfig {
    /// Hidden width of every MLP (256).
    pub hidden: usize,
    /// `"cpu"` (burn flex backend) or `"cuda"` / `"cuda:N"` (needs the `cuda` cargo feature).
    pub device: PolicyDevice,
    /// Weight initialisation (reference: PyTorch's `nn.Linear` default, `torch-default`).
    pub init: PolicyInit,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self {
            hidden: 256,
            device: PolicyDevice::Cpu,
            init: PolicyInit::TorchDefault,
        }
    }
}

/// How the network's parameters are initialised (drawn from the controller's seeded generator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyInit {
    /// PyTorch's `nn.Linear` default, as the reference (MemSkill cda41f3 builds plain
    /// `nn.Linear` layers): weights and biases uniform in `±1/sqrt(fan_in)` (the actor's first
    /// layer has `fan_in = 2H`). The distribution is the reference's; the draws are ours.
    #[default]
    TorchDefault,
    /// Deviation (opt-in): orthogonal weights (gain sqrt 2 hidden, 0.01 actor output, 1 critic
    /// output) and zero biases, the SB3 / CleanRL PPO init.
    Orthogonal,
}

/// Where the policy network runs (`policy.device`): `"cpu"` (also `"flex"`, the burn flex
/// backend) | `"cuda"` | `"cuda:N"`, read case-insensitively; written back as `cpu`, `cuda`
/// or `cuda:N`. Whether this build has CUDA is checked when the device is opened
/// ([`open_device`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum PolicyDevice {
    Cpu,
    /// `cuda` (None, the first GPU) or `cuda:N`.
    Cuda(Option<usize>),
}

impl std::str::FromStr for PolicyDevice {
    type Err = String;
    fn from_str(spec: &str) -> Result<Self, String> {
        let s = spec.trim().to_ascii_lowercase();
        if s == "cpu" || s == "flex" {
            return Ok(PolicyDevice::Cpu);
        }
        match s.strip_prefix("cuda") {
            Some("") => Ok(PolicyDevice::Cuda(None)),
            Some(rest) => match rest.strip_prefix(':') {
                Some(n) => n
                    .parse()
                    .map(|i| PolicyDevice::Cuda(Some(i)))
                    .map_err(|_| format!("{spec:?}: expected cuda:N with N a GPU index")),
                None => Err(format!("{spec:?}: expected `cpu`, `cuda` or `cuda:N`")),
            },
            None => Err(format!("{spec:?}: expected `cpu`, `cuda` or `cuda:N`")),
        }
    }
}

impl std::fmt::Display for PolicyDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolicyDevice::Cpu => f.write_str("cpu"),
            PolicyDevice::Cuda(None) => f.write_str("cuda"),
            PolicyDevice::Cuda(Some(i)) => write!(f, "cuda:{i}"),
        }
    }
}

impl TryFrom<String> for PolicyDevice {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<PolicyDevice> for String {
    fn from(d: PolicyDevice) -> String {
        d.to_string()
    }
}

/// The burn device of `d`; CUDA needs a build with the `cuda` feature.
pub fn open_device(d: PolicyDevice) -> Result<Device, ControllerError> {
    match d {
        PolicyDevice::Cpu => Ok(Device::flex()),
        #[cfg(feature = "cuda")]
        PolicyDevice::Cuda(idx) => Ok(Device::cuda(idx.unwrap_or(0))),
        #[cfg(not(feature = "cuda"))]
        PolicyDevice::Cuda(_) => Err(ControllerError::Device {
            device: d.to_string(),
            msg: "this build has no CUDA support; rebuild with `--features cuda` or set policy.device = \"cpu\"".into(),
        }),
    }
}

/// A named tensor in the reference's layout: name, shape, row-major values.
pub type NamedTensor = (String, Vec<usize>, Vec<f32>);

/// One parameter matrix (biases are `1 x cols`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Param {
    pub name: &'static str,
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<f32>,
}

/// All network parameters in a fixed order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Params {
    pub list: Vec<Param>,
}

// Indices into Params::list.
const S1W: usize = 0;
const S1B: usize = 1;
const S2W: usize = 2;
const S2B: usize = 3;
const K1W: usize = 4;
const K1B: usize = 5;
const K2W: usize = 6;
const K2B: usize = 7;
const A1S: usize = 8;
const A1K: usize = 9;
const A1B: usize = 10;
const A2W: usize = 11;
const A2B: usize = 12;
const C1W: usize = 13;
const C1B: usize = 14;
const C2W: usize = 15;
const C2B: usize = 16;

impl Params {
    /// Initialises every parameter as `init` says (see [`PolicyInit`]).
    pub fn init_with(
        init: PolicyInit,
        emb_dim: usize,
        hidden: usize,
        rng: &mut ChaCha8Rng,
    ) -> Self {
        match init {
            PolicyInit::Orthogonal => Self::init(emb_dim, hidden, rng),
            PolicyInit::TorchDefault => Self::init_torch_default(emb_dim, hidden, rng),
        }
    }

    /// PyTorch's `nn.Linear` default: weight and bias of each layer uniform in
    /// `±1/sqrt(fan_in)` (kaiming-uniform with `a = sqrt 5` gives that bound for the weight),
    /// drawn layer by layer, weight before bias. The actor's first layer (`fan_in = 2H`) is drawn
    /// as one `2H x H` matrix and split into its state / skill halves.
    pub fn init_torch_default(emb_dim: usize, hidden: usize, rng: &mut ChaCha8Rng) -> Self {
        let (d, h) = (emb_dim, hidden);
        let mut uni = |n: usize, fan_in: usize| -> Vec<f32> {
            let b = 1.0 / (fan_in as f64).sqrt();
            (0..n)
                .map(|_| rng.random_range(-b..b) as f32)
                .collect::<Vec<f32>>()
        };
        let p = |name, rows, cols, data| Param {
            name,
            rows,
            cols,
            data,
        };
        let s1 = p("state_net.0.weight", 2 * d, h, uni(2 * d * h, 2 * d));
        let s1b = p("state_net.0.bias", 1, h, uni(h, 2 * d));
        let s2 = p("state_net.1.weight", h, h, uni(h * h, h));
        let s2b = p("state_net.1.bias", 1, h, uni(h, h));
        let k1 = p("skill_net.0.weight", d, h, uni(d * h, d));
        let k1b = p("skill_net.0.bias", 1, h, uni(h, d));
        let k2 = p("skill_net.1.weight", h, h, uni(h * h, h));
        let k2b = p("skill_net.1.bias", 1, h, uni(h, h));
        let a1 = uni(2 * h * h, 2 * h);
        let a1b = p("actor.0.bias", 1, h, uni(h, 2 * h));
        let (a1s, a1k) = a1.split_at(h * h);
        let a2 = p("actor.1.weight", h, 1, uni(h, h));
        let a2b = p("actor.1.bias", 1, 1, uni(1, h));
        let c1 = p("critic.0.weight", h, h, uni(h * h, h));
        let c1b = p("critic.0.bias", 1, h, uni(h, h));
        let c2 = p("critic.1.weight", h, 1, uni(h, h));
        let c2b = p("critic.1.bias", 1, 1, uni(1, h));
        let list = vec![
            s1,
            s1b,
            s2,
            s2b,
            k1,
            k1b,
            k2,
            k2b,
            p("actor.0.weight_state", h, h, a1s.to_vec()),
            p("actor.0.weight_skill", h, h, a1k.to_vec()),
            a1b,
            a2,
            a2b,
            c1,
            c1b,
            c2,
            c2b,
        ];
        Self { list }
    }

    /// The parameters as the reference's `PPOController.state_dict()` names and lays them out
    /// (`nn.Linear` weights are `[out, in]`, i.e. the transpose of ours; the actor's first layer
    /// is the concatenation `[state half | skill half]` along `in`).
    pub fn to_reference_state_dict(&self) -> Vec<NamedTensor> {
        let l = &self.list;
        let tr = |p: &Param| -> Vec<f32> {
            let mut out = vec![0.0f32; p.data.len()];
            for r in 0..p.rows {
                for c in 0..p.cols {
                    out[c * p.rows + r] = p.data[r * p.cols + c];
                }
            }
            out
        };
        let w = |name: &str, p: &Param| (name.to_string(), vec![p.cols, p.rows], tr(p));
        let b = |name: &str, p: &Param| (name.to_string(), vec![p.cols], p.data.clone());
        let h = l[A1S].cols;
        let mut a1 = vec![0.0f32; h * 2 * h];
        for o in 0..h {
            for i in 0..h {
                a1[o * 2 * h + i] = l[A1S].data[i * h + o];
                a1[o * 2 * h + h + i] = l[A1K].data[i * h + o];
            }
        }
        vec![
            w("state_net.0.weight", &l[S1W]),
            b("state_net.0.bias", &l[S1B]),
            w("state_net.2.weight", &l[S2W]),
            b("state_net.2.bias", &l[S2B]),
            w("op_net.0.weight", &l[K1W]),
            b("op_net.0.bias", &l[K1B]),
            w("op_net.2.weight", &l[K2W]),
            b("op_net.2.bias", &l[K2B]),
            ("actor_head.0.weight".into(), vec![h, 2 * h], a1),
            b("actor_head.0.bias", &l[A1B]),
            w("actor_head.2.weight", &l[A2W]),
            b("actor_head.2.bias", &l[A2B]),
            w("critic_head.0.weight", &l[C1W]),
            b("critic_head.0.bias", &l[C1B]),
            w("critic_head.2.weight", &l[C2W]),
            b("critic_head.2.bias", &l[C2B]),
        ]
    }

    /// Replaces every parameter by the reference-layout tensors `dict` (as produced by
    /// [`to_reference_state_dict`](Self::to_reference_state_dict) or the reference's
    /// `state_dict()`); every name must be present with the shape this network has.
    pub fn load_reference_state_dict(
        &mut self,
        dict: &[NamedTensor],
    ) -> Result<(), ControllerError> {
        let mine = self.to_reference_state_dict();
        let mut by_name = std::collections::BTreeMap::new();
        for (n, shape, data) in dict {
            by_name.insert(n.as_str(), (shape, data));
        }
        let err = |m: String| ControllerError::Checkpoint(m);
        let mut loaded: Vec<Vec<f32>> = Vec::with_capacity(mine.len());
        for (name, shape, _) in &mine {
            let (s, d) = by_name
                .get(name.as_str())
                .ok_or_else(|| err(format!("reference weights: missing {name}")))?;
            if *s != shape || d.len() != shape.iter().product::<usize>() {
                return Err(err(format!(
                    "reference weights: {name} has shape {s:?} ({} values), expected {shape:?}",
                    d.len()
                )));
            }
            if d.iter().any(|x| !x.is_finite()) {
                return Err(ControllerError::NonFinite(format!(
                    "reference weights: {name}"
                )));
            }
            loaded.push(d.to_vec());
        }
        // Back from [out, in] to ours.
        let h = self.list[A1S].cols;
        let untr = |p: &mut Param, t: &[f32]| {
            for r in 0..p.rows {
                for c in 0..p.cols {
                    p.data[r * p.cols + c] = t[c * p.rows + r];
                }
            }
        };
        let order = [
            S1W,
            S1B,
            S2W,
            S2B,
            K1W,
            K1B,
            K2W,
            K2B,
            usize::MAX,
            A1B,
            A2W,
            A2B,
            C1W,
            C1B,
            C2W,
            C2B,
        ];
        for (slot, t) in order.iter().zip(&loaded) {
            match *slot {
                usize::MAX => {
                    for o in 0..h {
                        for i in 0..h {
                            self.list[A1S].data[i * h + o] = t[o * 2 * h + i];
                            self.list[A1K].data[i * h + o] = t[o * 2 * h + h + i];
                        }
                    }
                }
                i if self.list[i].rows == 1 => self.list[i].data.copy_from_slice(t),
                i => untr(&mut self.list[i], t),
            }
        }
        Ok(())
    }

    /// Standard PPO init (SB3 / CleanRL): orthogonal weights with gain `sqrt(2)` for hidden
    /// layers, `0.01` for the actor's output layer (near-uniform initial policy) and `1.0` for the
    /// critic's output layer; all biases zero. The actor's first layer is drawn as one
    /// `2H x H` orthogonal matrix and split into its state / skill halves.
    pub fn init(emb_dim: usize, hidden: usize, rng: &mut ChaCha8Rng) -> Self {
        let d = emb_dim;
        let h = hidden;
        let g = std::f32::consts::SQRT_2;
        let w = |name, rows, cols, gain, rng: &mut ChaCha8Rng| Param {
            name,
            rows,
            cols,
            data: orthogonal(rows, cols, gain, rng),
        };
        let z = |name, cols| Param {
            name,
            rows: 1,
            cols,
            data: vec![0.0; cols],
        };
        let s1 = w("state_net.0.weight", 2 * d, h, g, rng);
        let s2 = w("state_net.1.weight", h, h, g, rng);
        let k1 = w("skill_net.0.weight", d, h, g, rng);
        let k2 = w("skill_net.1.weight", h, h, g, rng);
        let a1 = orthogonal(2 * h, h, g, rng);
        let (a1s, a1k) = a1.split_at(h * h);
        let a2 = w("actor.1.weight", h, 1, 0.01, rng);
        let c1 = w("critic.0.weight", h, h, g, rng);
        let c2 = w("critic.1.weight", h, 1, 1.0, rng);
        let list = vec![
            s1,
            z("state_net.0.bias", h),
            s2,
            z("state_net.1.bias", h),
            k1,
            z("skill_net.0.bias", h),
            k2,
            z("skill_net.1.bias", h),
            Param {
                name: "actor.0.weight_state",
                rows: h,
                cols: h,
                data: a1s.to_vec(),
            },
            Param {
                name: "actor.0.weight_skill",
                rows: h,
                cols: h,
                data: a1k.to_vec(),
            },
            z("actor.0.bias", h),
            a2,
            z("actor.1.bias", 1),
            c1,
            z("critic.0.bias", h),
            c2,
            z("critic.1.bias", 1),
        ];
        Self { list }
    }

    pub fn num_values(&self) -> usize {
        self.list.iter().map(|p| p.data.len()).sum()
    }

    /// Uploads every parameter to `device` (call `.require_grad()` on the result for training).
    pub fn to_tensors(&self, device: &Device, require_grad: bool) -> Vec<Tensor<2>> {
        self.list
            .iter()
            .map(|p| {
                let t = Tensor::<2>::from_data(
                    TensorData::new(p.data.clone(), [p.rows, p.cols]),
                    device,
                );
                if require_grad {
                    t.require_grad()
                } else {
                    t
                }
            })
            .collect()
    }
}

/// Standard normal sample (Box-Muller) from the seeded generator.
fn gaussian(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = rng.random_range(f64::EPSILON..1.0);
    let u2: f64 = rng.random_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A `rows x cols` (row-major) matrix with orthonormal columns when `rows >= cols`, orthonormal
/// rows otherwise, times `gain` (as `torch.nn.init.orthogonal_`): modified Gram-Schmidt on a
/// Gaussian matrix, deterministic for a given generator state.
pub(crate) fn orthogonal(rows: usize, cols: usize, gain: f32, rng: &mut ChaCha8Rng) -> Vec<f32> {
    // Orthonormalise the `k` vectors of length `len` (the shorter side), each stored contiguously.
    let (k, len, transpose) = if rows >= cols {
        (cols, rows, true)
    } else {
        (rows, cols, false)
    };
    let mut v: Vec<Vec<f64>> = Vec::with_capacity(k);
    while v.len() < k {
        let mut x: Vec<f64> = (0..len).map(|_| gaussian(rng)).collect();
        for _ in 0..2 {
            for q in &v {
                let dot: f64 = x.iter().zip(q).map(|(a, b)| a * b).sum();
                for (xi, qi) in x.iter_mut().zip(q) {
                    *xi -= dot * qi;
                }
            }
        }
        let norm = x.iter().map(|a| a * a).sum::<f64>().sqrt();
        if norm > 1e-6 {
            v.push(x.into_iter().map(|a| a / norm).collect());
        }
    }
    let mut out = vec![0.0f32; rows * cols];
    for (i, q) in v.iter().enumerate() {
        for (j, &x) in q.iter().enumerate() {
            let (r, c) = if transpose { (j, i) } else { (i, j) };
            out[r * cols + c] = (x as f32) * gain;
        }
    }
    out
}

/// A padded batch of policy inputs on one device.
pub(crate) struct PolicyBatch {
    /// `[B, 2d]`
    pub states: Tensor<2>,
    /// `[M, d]`: the distinct skill embeddings of the batch (with `skill_index`), or `[B * N, d]`
    /// with zero rows for padded skills (without).
    pub skills: Tensor<2>,
    /// `[B * N]`: the row of `skills` for skill `n` of row `b` (padded skills point anywhere:
    /// their logits are masked). `None`: `skills` is already `[B * N, d]`. Transitions of one
    /// batch usually share the bank's embeddings, so the skill net and the skill half of the
    /// actor's first layer run on the `M` distinct rows once instead of on `B * N` copies; the
    /// gradient of a shared row is the sum over its uses, as before.
    pub skill_index: Option<Tensor<1, Int>>,
    /// `[B, N]`, true for real skills.
    pub skill_mask: Tensor<2, Bool>,
    /// `[B, N]` additive logit bias (0 for padded skills).
    pub bias: Tensor<2>,
    pub b: usize,
    pub n: usize,
}

/// Forward pass: masked, biased logits `[B, N]` and values `[B]`.
pub(crate) fn forward(p: &[Tensor<2>], x: &PolicyBatch) -> (Tensor<2>, Tensor<1>) {
    let lin = |x: Tensor<2>, w: usize, b: usize| x.matmul(p[w].clone()) + p[b].clone();
    let h_state = relu(lin(relu(lin(x.states.clone(), S1W, S1B)), S2W, S2B)); // [B, H]
    let h_skill = relu(lin(relu(lin(x.skills.clone(), K1W, K1B)), K2W, K2B)); // [B*N, H]
    let hidden = p[A1S].dims()[1];
    let a_state = h_state
        .clone()
        .matmul(p[A1S].clone())
        .reshape([x.b, 1, hidden])
        .expand([x.b, x.n, hidden]);
    let a_skill = h_skill.matmul(p[A1K].clone()) + p[A1B].clone(); // [M, H]
    let a_skill = match &x.skill_index {
        Some(idx) => a_skill.select(0, idx.clone()),
        None => a_skill,
    }
    .reshape([x.b, x.n, hidden]);
    let a = relu(a_state + a_skill).reshape([x.b * x.n, hidden]);
    let logits = lin(a, A2W, A2B).reshape([x.b, x.n]);
    let logits = (logits + x.bias.clone()).mask_fill(x.skill_mask.clone().bool_not(), MASKED_LOGIT);
    let value = lin(relu(lin(h_state, C1W, C1B)), C2W, C2B).reshape([x.b]);
    (logits, value)
}

/// Adam (Kingma & Ba) with bias correction, as `torch.optim.Adam` (eps 1e-8, no weight decay).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Adam {
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    pub t: u64,
    pub m: Vec<Vec<f32>>,
    pub v: Vec<Vec<f32>>,
}

impl Adam {
    pub fn new(params: &Params) -> Self {
        Self {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            t: 0,
            m: params
                .list
                .iter()
                .map(|p| vec![0.0; p.data.len()])
                .collect(),
            v: params
                .list
                .iter()
                .map(|p| vec![0.0; p.data.len()])
                .collect(),
        }
    }

    /// One step from the flat gradient `grad` (all parameters in [`Params::list`] order,
    /// `[P]`) on the flat parameters and moments of `st`, as tensor operations: the same
    /// element-wise formula, in the same order, as the scalar [`step`](Self::step)
    /// (bit-identical results), without a per-element host loop.
    pub fn step_flat(&mut self, st: &mut FlatState, grad: Tensor<1>, lr: f32) {
        self.t += 1;
        let bc1 = 1.0 - self.beta1.powi(self.t.min(i32::MAX as u64) as i32);
        let bc2 = 1.0 - self.beta2.powi(self.t.min(i32::MAX as u64) as i32);
        let m = st.m.clone().mul_scalar(self.beta1) + grad.clone().mul_scalar(1.0 - self.beta1);
        let v =
            st.v.clone().mul_scalar(self.beta2) + grad.clone().mul_scalar(1.0 - self.beta2) * grad;
        let step = m.clone().div_scalar(bc1).mul_scalar(lr)
            / v.clone().div_scalar(bc2).sqrt().add_scalar(self.eps);
        st.p = st.p.clone() - step;
        st.m = m;
        st.v = v;
    }

    /// The scalar reference of [`step_flat`](Self::step_flat).
    #[cfg(test)]
    pub fn step(&mut self, params: &mut Params, grads: &[Vec<f32>], lr: f32) {
        self.t += 1;
        let bc1 = 1.0 - self.beta1.powi(self.t.min(i32::MAX as u64) as i32);
        let bc2 = 1.0 - self.beta2.powi(self.t.min(i32::MAX as u64) as i32);
        for (i, p) in params.list.iter_mut().enumerate() {
            let (m, v, g) = (&mut self.m[i], &mut self.v[i], &grads[i]);
            for j in 0..p.data.len() {
                m[j] = self.beta1 * m[j] + (1.0 - self.beta1) * g[j];
                v[j] = self.beta2 * v[j] + (1.0 - self.beta2) * g[j] * g[j];
                let mhat = m[j] / bc1;
                let vhat = v[j] / bc2;
                p.data[j] -= lr * mhat / (vhat.sqrt() + self.eps);
            }
        }
    }
}

/// The parameters and Adam's moments as flat tensors (`[P]`, [`Params::list`] order) on the
/// training device, for the length of one PPO update: the minibatch steps read their parameter
/// leaves from here and Adam updates it in place, with no host round trip; [`write_back`]
/// (Self::write_back) copies the result to the host copies (the source of truth between
/// updates, and what checkpoints hold).
pub(crate) struct FlatState {
    pub p: Tensor<1>,
    pub m: Tensor<1>,
    pub v: Tensor<1>,
}

fn upload_flat<'a>(
    parts: impl Iterator<Item = &'a Vec<f32>>,
    n: usize,
    device: &Device,
) -> Tensor<1> {
    let mut flat = Vec::with_capacity(n);
    for v in parts {
        flat.extend_from_slice(v);
    }
    Tensor::<1>::from_data(TensorData::new(flat, [n]), device)
}

/// A float tensor's values on the host. A plain byte copy when the data is f32 (burn's generic
/// conversion checks every element, which costs more than the arithmetic in a debug build).
pub(crate) fn host_f32<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    let data = t.into_data();
    if data.dtype() == burn::tensor::DType::F32 {
        if let Ok(s) = bytemuck::try_cast_slice::<u8, f32>(data.as_bytes()) {
            return s.to_vec();
        }
    }
    data.convert::<f32>()
        .try_into_vec::<f32>()
        .unwrap_or_default()
}

impl FlatState {
    pub fn upload(params: &Params, adam: &Adam, device: &Device) -> Self {
        let n = params.num_values();
        Self {
            p: upload_flat(params.list.iter().map(|p| &p.data), n, device),
            m: upload_flat(adam.m.iter(), n, device),
            v: upload_flat(adam.v.iter(), n, device),
        }
    }

    /// The parameters as trainable autodiff leaves, shaped as `params` says.
    pub fn leaves(&self, params: &Params) -> Vec<Tensor<2>> {
        let mut at = 0;
        params
            .list
            .iter()
            .map(|p| {
                let len = p.data.len();
                let t = self
                    .p
                    .clone()
                    .narrow(0, at, len)
                    .reshape([p.rows, p.cols])
                    .autodiff()
                    .require_grad();
                at += len;
                t
            })
            .collect()
    }

    /// Copies parameters and moments back to the host.
    pub fn write_back(self, params: &mut Params, adam: &mut Adam) {
        let split = |flat: Vec<f32>, parts: Vec<&mut Vec<f32>>| {
            let mut at = 0;
            for part in parts {
                let len = part.len();
                if let Some(src) = flat.get(at..at + len) {
                    part.copy_from_slice(src);
                }
                at += len;
            }
        };
        split(
            host_f32(self.p),
            params.list.iter_mut().map(|p| &mut p.data).collect(),
        );
        split(host_f32(self.m), adam.m.iter_mut().collect());
        split(host_f32(self.v), adam.v.iter_mut().collect());
    }
}

/// [`clip_global_norm`] on a flat gradient tensor: the norm (accumulated in f64) and the
/// scaled gradient; the norm is not finite when an element is not.
pub(crate) fn clip_global_norm_flat(grad: Tensor<1>, max_norm: f32) -> (Tensor<1>, f32) {
    let sq = grad
        .clone()
        .cast(FloatDType::F64)
        .square()
        .sum()
        .into_data()
        .convert::<f64>()
        .try_to_vec::<f64>()
        .ok()
        .and_then(|v| v.first().copied())
        .unwrap_or(f64::NAN);
    let norm = sq.sqrt() as f32;
    if max_norm > 0.0 && norm > max_norm {
        let s = max_norm / (norm + 1e-6);
        (grad.mul_scalar(s), norm)
    } else {
        (grad, norm)
    }
}

/// Scales all gradients so their global L2 norm is at most `max_norm` (as
/// `torch.nn.utils.clip_grad_norm_`: factor `max_norm / (norm + 1e-6)` when `norm > max_norm`).
/// Returns the norm before clipping.
pub fn clip_global_norm(grads: &mut [Vec<f32>], max_norm: f32) -> f32 {
    let norm = grads
        .iter()
        .flat_map(|g| g.iter())
        .map(|&x| (x as f64) * (x as f64))
        .sum::<f64>()
        .sqrt() as f32;
    if max_norm > 0.0 && norm > max_norm {
        let s = max_norm / (norm + 1e-6);
        for g in grads.iter_mut() {
            for x in g.iter_mut() {
                *x *= s;
            }
        }
    }
    norm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_clip_bounds_the_total_norm() {
        let mut g = vec![vec![3.0f32, 0.0], vec![0.0, 4.0]];
        let n = clip_global_norm(&mut g, 0.5);
        assert!((n - 5.0).abs() < 1e-6);
        let after: f32 = g.iter().flatten().map(|x| x * x).sum::<f32>().sqrt();
        assert!((after - 0.5).abs() < 1e-4);
        // direction preserved: ratio 3:4
        assert!((g[0][0] / g[1][1] - 0.75).abs() < 1e-6);
        let mut small = vec![vec![0.1f32]];
        clip_global_norm(&mut small, 0.5);
        assert_eq!(small[0][0], 0.1);
    }

    #[test]
    fn adam_first_step_moves_by_lr_against_gradient_sign() {
        let mut p = Params {
            list: vec![Param {
                name: "w",
                rows: 1,
                cols: 3,
                data: vec![1.0, 1.0, 1.0],
            }],
        };
        let mut a = Adam::new(&p);
        a.step(&mut p, &[vec![2.0, -0.5, 0.0]], 0.1);
        assert!((p.list[0].data[0] - 0.9).abs() < 1e-5);
        assert!((p.list[0].data[1] - 1.1).abs() < 1e-5);
        assert!((p.list[0].data[2] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn flat_adam_and_clip_equal_the_scalar_ones_bit_for_bit() {
        use rand::SeedableRng;
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut a = Params::init_torch_default(3, 4, &mut rng);
        let mut b = a.clone();
        let (mut oa, mut ob) = (Adam::new(&a), Adam::new(&a));
        let dev = Device::flex();
        for step in 0..3 {
            let g: Vec<Vec<f32>> = a
                .list
                .iter()
                .map(|p| {
                    (0..p.data.len())
                        .map(|i| ((i + step) as f32 * 0.37).sin() * (step as f32 + 1.0))
                        .collect()
                })
                .collect();
            let flat: Vec<f32> = g.iter().flatten().copied().collect();
            let n = flat.len();
            let upload = |v: Vec<f32>| Tensor::<1>::from_data(TensorData::new(v, [n]), &dev);
            let (clipped_t, norm_t) = clip_global_norm_flat(upload(flat.clone()), 0.5);
            let mut clipped = g.clone();
            let norm = clip_global_norm(&mut clipped, 0.5);
            assert!((norm - norm_t).abs() <= 1e-6 * norm, "{norm} vs {norm_t}");
            let ct: Vec<f32> = clipped_t.into_data().try_to_vec().unwrap();
            let c: Vec<f32> = clipped.iter().flatten().copied().collect();
            for (x, y) in c.iter().zip(&ct) {
                assert!((x - y).abs() <= 1e-6 * x.abs(), "{x} vs {y}");
            }
            // The Adam step itself is bit-identical.
            oa.step(&mut a, &g, 1e-3);
            let mut st = FlatState::upload(&b, &ob, &dev);
            ob.step_flat(&mut st, upload(flat), 1e-3);
            st.write_back(&mut b, &mut ob);
            assert_eq!(a, b, "step {step}");
            assert_eq!((&oa.m, &oa.v, oa.t), (&ob.m, &ob.v, ob.t));
        }
        let bad = Tensor::<1>::from_data(TensorData::new(vec![1.0f32, f32::NAN], [2]), &dev);
        assert!(!clip_global_norm_flat(bad, 0.5).1.is_finite());
    }

    #[test]
    fn orthogonal_init_is_orthonormal_times_gain() {
        use rand::SeedableRng;
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for &(r, c) in &[(6usize, 4usize), (4, 6), (5, 5), (3, 1)] {
            let m = orthogonal(r, c, 2.0, &mut rng);
            // Gram matrix of the shorter side must be 4 * I.
            let (k, tall) = if r >= c { (c, true) } else { (r, false) };
            for a in 0..k {
                for b in 0..k {
                    let dot: f32 = if tall {
                        (0..r).map(|i| m[i * c + a] * m[i * c + b]).sum()
                    } else {
                        (0..c).map(|j| m[a * c + j] * m[b * c + j]).sum()
                    };
                    let want = if a == b { 4.0 } else { 0.0 };
                    assert!((dot - want).abs() < 1e-4, "{r}x{c} [{a},{b}] {dot}");
                }
            }
        }
        let mut r1 = ChaCha8Rng::seed_from_u64(9);
        let mut r2 = ChaCha8Rng::seed_from_u64(9);
        assert_eq!(
            orthogonal(8, 3, 1.0, &mut r1),
            orthogonal(8, 3, 1.0, &mut r2)
        );
    }

    #[test]
    fn torch_default_init_bounds_and_reference_layout_round_trip() {
        use rand::SeedableRng;
        let (d, h) = (3usize, 5usize);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let p = Params::init_torch_default(d, h, &mut rng);
        let fan_in = [
            2 * d,
            2 * d,
            h,
            h,
            d,
            d,
            h,
            h,
            2 * h,
            2 * h,
            2 * h,
            h,
            h,
            h,
            h,
            h,
            h,
        ];
        for (param, f) in p.list.iter().zip(fan_in) {
            let b = 1.0 / (f as f32).sqrt();
            assert!(param.data.iter().all(|x| x.abs() <= b), "{}", param.name);
            assert!(param.data.iter().any(|&x| x != 0.0), "{}", param.name);
        }
        let dict = p.to_reference_state_dict();
        let a1 = dict.iter().find(|t| t.0 == "actor_head.0.weight").unwrap();
        assert_eq!(a1.1, vec![h, 2 * h]);
        // torch W[o][i] for i < H is our state half [i][o]; for i >= H the skill half.
        assert_eq!(a1.2[2 * 2 * h + 1], p.list[A1S].data[h + 2]);
        assert_eq!(a1.2[2 * 2 * h + h + 1], p.list[A1K].data[h + 2]);
        let s1 = dict.iter().find(|t| t.0 == "state_net.0.weight").unwrap();
        assert_eq!(s1.1, vec![h, 2 * d]);
        assert_eq!(s1.2[2 * d + 4], p.list[S1W].data[4 * h + 1]);
        let mut q = Params::init(d, h, &mut rng);
        assert_ne!(q, p);
        q.load_reference_state_dict(&dict).unwrap();
        assert_eq!(q, p);
        let mut bad = dict.clone();
        bad[0].1 = vec![2 * d, h];
        let e = q.load_reference_state_dict(&bad).unwrap_err().to_string();
        assert!(e.contains("state_net.0.weight"), "{e}");
    }

    /// A device string as a config gives it, opened.
    fn parse_device(spec: &str) -> Result<Device, ControllerError> {
        let d = spec.parse().map_err(|msg| ControllerError::Device {
            device: spec.into(),
            msg,
        })?;
        open_device(d)
    }

    #[test]
    fn device_parsing() {
        assert!(parse_device("cpu").is_ok());
        assert!(parse_device("tpu").is_err());
        #[cfg(not(feature = "cuda"))]
        {
            let e = parse_device("cuda:0").expect_err("no cuda in this build");
            assert!(e.to_string().contains("--features cuda"), "{e}");
        }
    }
}

#[cfg(test)]
mod grad_tests {
    use super::*;
    use rand::SeedableRng;

    /// Autodiff gradients of the whole network (through expand, reshape, mask and ReLU) match
    /// central finite differences on a few coordinates of every parameter.
    #[test]
    fn network_gradients_match_finite_differences() {
        let (d, h, b, n) = (3usize, 5usize, 2usize, 4usize);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let params = Params::init(d, h, &mut rng);
        let states: Vec<f32> = (0..b * 2 * d).map(|i| ((i as f32) * 0.7).sin()).collect();
        let skills: Vec<f32> = (0..b * n * d).map(|i| ((i as f32) * 1.3).cos()).collect();
        let mask = vec![true, true, true, true, true, true, false, false];
        let wl: Vec<f32> = (0..b * n).map(|i| ((i as f32) * 0.9).sin()).collect();
        let loss_of = |p: &Params, dev: &Device, grad: bool| {
            let t = p.to_tensors(dev, grad);
            let batch = PolicyBatch {
                states: Tensor::<2>::from_data(TensorData::new(states.clone(), [b, 2 * d]), dev),
                skills: Tensor::<2>::from_data(TensorData::new(skills.clone(), [b * n, d]), dev),
                skill_index: None,
                skill_mask: Tensor::<2, Bool>::from_data(
                    TensorData::new(mask.clone(), [b, n]),
                    dev,
                ),
                bias: Tensor::<2>::zeros([b, n], dev),
                b,
                n,
            };
            let (logits, value) = forward(&t, &batch);
            let w = Tensor::<2>::from_data(TensorData::new(wl.clone(), [b, n]), dev);
            let masked = Tensor::<2, Bool>::from_data(TensorData::new(mask.clone(), [b, n]), dev);
            let l = (logits * w).mask_fill(masked.bool_not(), 0.0).sum() + value.square().sum();
            (t, l)
        };
        let ad = Device::flex().autodiff();
        let (t, l) = loss_of(&params, &ad, true);
        let grads = l.backward();
        let cpu = Device::flex();
        let eval = |p: &Params| -> f64 {
            let (_, l) = loss_of(p, &cpu, false);
            l.into_data().try_to_vec::<f32>().unwrap()[0] as f64
        };
        for (pi, pt) in t.iter().enumerate() {
            let g = pt
                .grad(&grads)
                .unwrap()
                .into_data()
                .try_to_vec::<f32>()
                .unwrap();
            let len = params.list[pi].data.len();
            for j in [0, len / 2, len - 1] {
                let eps = 1e-2f32;
                let mut plus = params.clone();
                plus.list[pi].data[j] += eps;
                let mut minus = params.clone();
                minus.list[pi].data[j] -= eps;
                let fd = (eval(&plus) - eval(&minus)) / (2.0 * eps as f64);
                assert!(
                    (g[j] as f64 - fd).abs() < 2e-2 * (1.0 + fd.abs()),
                    "{}[{j}]: autodiff {} vs fd {fd}",
                    params.list[pi].name,
                    g[j]
                );
            }
        }
    }
}
