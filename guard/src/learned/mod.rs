//! The learned stage: a linear classifier over hashed n-grams, shipped as a weights file.
//!
//! `guard/model/guard.model` is written by `scripts/guard/train.sh` (the `guard-model train`
//! binary of this crate) from the `train` and `calibration` sets of `guard/data/sets.toml`,
//! deterministically, and embedded here: no process trains anything. The file records the
//! fingerprint of the data it was trained on; a test checks that it matches the data in the
//! tree (a set added without retraining fails it), and another retrains and compares bytes.
//!
//! The model: logistic regression unsafe-vs-ordinary with class-balanced weights (see
//! [`fit`]); a text is rejected when P(unsafe) of its plain view or a decoded view reaches
//! the model's threshold `tau`, chosen leave-one-author-out (`guard-model eval`, see
//! docs/safety.md). The category of a rejected text is that of the nearest of six class
//! centroids (the mean tf-idf vector of each category's unsafe training texts).

pub mod features;
pub mod fit;

use std::sync::LazyLock;

use features::{counted, feature_keys, Sparse, Vocab, BUCKETS};
use fit::{sigmoid, Linear};

use crate::data::Example;
use crate::normalise::{normalise_for_scan, scan_views};
use crate::{Category, Document, Finding, RuleId, Scanner, Stage};

/// Regularisation (scikit-learn's C).
pub const C: f64 = 10.0;
/// The gradient tolerance of training (largest component).
pub const TOL: f64 = 1e-5;
/// Texts (views) with fewer words are left to the rules: too few n-grams to judge.
pub const MIN_WORDS: usize = 8;
/// Entries kept per category centroid (the largest).
pub const CENTROID_TOP: usize = 4000;
/// The views the classifier reads (besides the plain one): the decodings authors use.
pub const VIEWS: &[&str] = &[
    "",
    "decoded text",
    "split words joined",
    "spaced-out letters",
    "digits read as letters",
];

/// The trained classifier.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub vocab: Vocab,
    pub w: Vec<f32>,
    pub b: f64,
    /// Reject at P(unsafe) >= tau.
    pub tau: f32,
    /// Per category (in [`Category::ALL`] order): (feature index, weight), indices ascending.
    pub centroids: Vec<Vec<(u32, f32)>>,
    /// sha256 of the training data ([`crate::data::fingerprint`]).
    pub data_fingerprint: String,
}

/// The normalised views of a text the classifier reads, with their names.
pub fn classifier_views(text: &str) -> Vec<(&'static str, String)> {
    scan_views(text)
        .into_iter()
        .filter(|v| VIEWS.contains(&v.how))
        .map(|v| (v.how, v.text))
        .collect()
}

/// The views a training example contributes: the plain one, or for an encoded text each
/// classifier view (with the same label).
fn training_views(e: &Example) -> Vec<String> {
    if matches!(e.enc.as_str(), "plain" | "fullwidth" | "zero-width") {
        vec![normalise_for_scan(&e.text)]
    } else {
        classifier_views(&e.text).into_iter().map(|v| v.1).collect()
    }
}

impl Model {
    /// Train on the `skill` examples of `examples` (memory items are the memory filter's).
    pub fn train(examples: &[Example], tau: f32, data_fingerprint: &str) -> Model {
        let mut docs = Vec::new();
        let mut ys = Vec::new();
        let mut cats = Vec::new();
        for e in examples.iter().filter(|e| e.kind == "skill") {
            for v in training_views(e) {
                docs.push(counted(feature_keys(&v)));
                ys.push(e.unsafe_);
                cats.push(e.category.filter(|_| e.unsafe_));
            }
        }
        let vocab = Vocab::fit(&docs, 2);
        let xs: Vec<Sparse> = docs.iter().map(|d| vocab.vector(d)).collect();
        let lin = Linear::train(&xs, &ys, vocab.len(), C, TOL);
        let centroids = Category::ALL
            .iter()
            .map(|&c| centroid(&xs, &cats, c, vocab.len()))
            .collect();
        Model {
            vocab,
            w: lin.w.iter().map(|&x| x as f32).collect(),
            b: lin.b,
            tau,
            centroids,
            data_fingerprint: data_fingerprint.into(),
        }
    }

    /// P(unsafe) of one normalised view.
    pub fn p_unsafe(&self, normalised: &str) -> f64 {
        let x = self.vocab.features(normalised);
        sigmoid(
            x.iter()
                .map(|&(i, v)| self.w[i as usize] as f64 * v)
                .sum::<f64>()
                + self.b,
        )
    }

    /// The nearest category centroid of a normalised view.
    pub fn category(&self, normalised: &str) -> Category {
        let x = self.vocab.features(normalised);
        let mut best = (Category::ALL[0], f64::NEG_INFINITY);
        for (&c, cen) in Category::ALL.iter().zip(&self.centroids) {
            let s = sparse_dot(cen, &x);
            if s > best.1 {
                best = (c, s);
            }
        }
        best.0
    }

    /// The highest P(unsafe) over the classifier's views of a text: (p, view name, view).
    /// Views of fewer than [`MIN_WORDS`] words are not scored.
    pub fn score_views<'a>(
        &self,
        views: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> (f64, &'a str, &'a str) {
        let mut best = (0.0, "", "");
        for (how, text) in views {
            if text.split_whitespace().count() < MIN_WORDS {
                continue;
            }
            let p = self.p_unsafe(text);
            if p > best.0 {
                best = (p, how, text);
            }
        }
        best
    }

    /// [`Model::score_views`] of a raw text.
    pub fn score(&self, text: &str) -> f64 {
        let views = classifier_views(text);
        self.score_views(views.iter().map(|(h, t)| (*h, t.as_str())))
            .0
    }

    /// sha256 of the encoded model: what [`crate::GUARD_VERSION`] names.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(Sha256::digest(self.encode()))
    }
}

fn sparse_dot(a: &[(u32, f32)], x: &Sparse) -> f64 {
    let (mut i, mut j, mut s) = (0, 0, 0.0);
    while i < a.len() && j < x.len() {
        match a[i].0.cmp(&x[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                s += a[i].1 as f64 * x[j].1;
                i += 1;
                j += 1;
            }
        }
    }
    s
}

/// The mean vector of the unsafe examples of category `c`, its [`CENTROID_TOP`] largest
/// entries kept.
fn centroid(xs: &[Sparse], cats: &[Option<Category>], c: Category, dim: usize) -> Vec<(u32, f32)> {
    let mut sum = vec![0.0f64; dim];
    let mut n = 0usize;
    for (x, k) in xs.iter().zip(cats) {
        if *k == Some(c) {
            n += 1;
            for &(i, v) in x {
                sum[i as usize] += v;
            }
        }
    }
    let mut top: Vec<(u32, f64)> = sum
        .into_iter()
        .enumerate()
        .filter(|(_, v)| *v > 0.0)
        .map(|(i, v)| (i as u32, v / n.max(1) as f64))
        .collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    top.truncate(CENTROID_TOP);
    top.sort_by_key(|e| e.0);
    top.into_iter().map(|(i, v)| (i, v as f32)).collect()
}

const MAGIC: &[u8; 8] = b"MSKGUARD";
const FORMAT: u32 = 1;

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| format!("model file truncated at byte {}", self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| "u32")?,
        ))
    }
    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| "f32")?,
        ))
    }
    fn f64(&mut self) -> Result<f64, String> {
        Ok(f64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| "f64")?,
        ))
    }
    fn varint(&mut self) -> Result<u32, String> {
        let mut v = 0u32;
        for shift in (0..35).step_by(7) {
            let b = self.take(1)?[0];
            v |= ((b & 0x7f) as u32) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(format!("bad varint at byte {}", self.at))
    }
    /// A count no larger than what the rest of the file can hold at `min_bytes` each.
    fn count(&mut self, min_bytes: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_bytes) > self.b.len() - self.at {
            return Err(format!(
                "model file claims {n} entries at byte {}, more than it holds",
                self.at
            ));
        }
        Ok(n)
    }
}

impl Model {
    /// The model file: magic, format, data fingerprint, tau, bias, the vocabulary (keys as
    /// delta varints, idf and weights as f32), the centroids. Little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT.to_le_bytes());
        out.extend_from_slice(&BUCKETS.to_le_bytes());
        let fp = hex::decode(&self.data_fingerprint).unwrap_or_default();
        out.extend_from_slice(&(fp.len() as u32).to_le_bytes());
        out.extend_from_slice(&fp);
        out.extend_from_slice(&self.tau.to_le_bytes());
        out.extend_from_slice(&self.b.to_le_bytes());
        out.extend_from_slice(&(self.vocab.keys.len() as u32).to_le_bytes());
        let mut prev = 0;
        for &k in &self.vocab.keys {
            put_varint(&mut out, k - prev);
            prev = k;
        }
        for &x in &self.vocab.idf {
            out.extend_from_slice(&(x as f32).to_le_bytes());
        }
        for &x in &self.w {
            out.extend_from_slice(&x.to_le_bytes());
        }
        for c in &self.centroids {
            out.extend_from_slice(&(c.len() as u32).to_le_bytes());
            let mut prev = 0;
            for &(i, v) in c {
                put_varint(&mut out, i - prev);
                prev = i;
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    /// Read a model file; every count is checked against the bytes present.
    pub fn decode(bytes: &[u8]) -> Result<Model, String> {
        let mut r = Reader { b: bytes, at: 0 };
        if r.take(8)? != MAGIC {
            return Err("not a memskill guard model (bad magic)".into());
        }
        let format = r.u32()?;
        if format != FORMAT {
            return Err(format!("model format {format}, this guard reads {FORMAT}"));
        }
        let buckets = r.u32()?;
        if buckets != BUCKETS {
            return Err(format!(
                "model hashed into {buckets} buckets, this guard uses {BUCKETS}"
            ));
        }
        let n = r.count(1)?;
        let data_fingerprint = hex::encode(r.take(n)?);
        let tau = r.f32()?;
        let b = r.f64()?;
        let n = r.count(9)?;
        let mut keys = Vec::with_capacity(n);
        let mut prev = 0u32;
        for _ in 0..n {
            prev = prev.checked_add(r.varint()?).ok_or("key overflow")?;
            keys.push(prev);
        }
        let idf = (0..n)
            .map(|_| r.f32().map(|x| x as f64))
            .collect::<Result<_, _>>()?;
        let w = (0..n).map(|_| r.f32()).collect::<Result<_, _>>()?;
        let mut centroids = Vec::new();
        for _ in Category::ALL {
            let m = r.count(5)?;
            let mut c = Vec::with_capacity(m);
            let mut prev = 0u32;
            for _ in 0..m {
                prev = prev.checked_add(r.varint()?).ok_or("index overflow")?;
                if prev as usize >= n {
                    return Err(format!("centroid index {prev} past the vocabulary ({n})"));
                }
                c.push((prev, r.f32()?));
            }
            centroids.push(c);
        }
        if r.at != bytes.len() {
            return Err(format!(
                "{} trailing bytes in the model file",
                bytes.len() - r.at
            ));
        }
        Ok(Model {
            vocab: Vocab { keys, idf },
            w,
            b,
            tau,
            centroids,
            data_fingerprint,
        })
    }
}

/// The shipped model file.
pub const SHIPPED_BYTES: &[u8] = include_bytes!("../../model/guard.model");

static SHIPPED: LazyLock<Model> = LazyLock::new(|| {
    Model::decode(SHIPPED_BYTES).unwrap_or_else(|e| panic!("the shipped guard model: {e}"))
});

/// The model embedded in this build (decoded on first use).
pub fn shipped() -> &'static Model {
    &SHIPPED
}

/// The learned stage.
pub struct LearnedScanner {
    model: &'static Model,
}

impl LearnedScanner {
    pub fn shipped() -> LearnedScanner {
        LearnedScanner { model: shipped() }
    }

    pub fn with(model: &'static Model) -> LearnedScanner {
        LearnedScanner { model }
    }
}

impl Scanner for LearnedScanner {
    fn stage(&self) -> Stage {
        Stage::Learned
    }

    fn scan(&self, doc: &Document) -> Option<Finding> {
        let views = doc
            .views
            .iter()
            .filter(|v| VIEWS.contains(&v.how))
            .map(|v| (v.how, v.text.as_str()));
        let (p, how, text) = self.model.score_views(views);
        (p >= self.model.tau as f64).then(|| Finding {
            rule: RuleId::Learned,
            category: self.model.category(text),
            stage: Stage::Learned,
            view: if how.is_empty() {
                "plain".into()
            } else {
                how.into()
            },
            evidence: format!("p(unsafe) = {p:.3} >= {:.2}", self.model.tau),
        })
    }
}
