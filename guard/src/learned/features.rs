//! The classifier's features: character 2-5-grams inside word boundaries (as scikit-learn's
//! `char_wb`) and word 1-2-grams of a normalised text, each hashed by FNV-1a (64 bit) into
//! [`BUCKETS`] buckets per block; sublinear tf times the smoothed idf of the training texts,
//! each block L2-normalised.

/// Buckets per feature block (character n-grams, word n-grams).
pub const BUCKETS: u32 = 1 << 20;

/// FNV-1a, 64 bit, over `bytes` after a one-byte block tag.
pub fn fnv1a(tag: u8, bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for &b in std::iter::once(&tag).chain(bytes) {
        h ^= b as u64;
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// The feature keys of a normalised text, with repeats: block 0 (character n-grams) keys
/// are `bucket`, block 1 (word n-grams) keys are `BUCKETS + bucket`.
pub fn feature_keys(normalised: &str) -> Vec<u32> {
    let mut keys = Vec::new();
    let mut buf = String::new();
    for word in normalised.split_whitespace() {
        let padded: Vec<char> = std::iter::once(' ')
            .chain(word.chars())
            .chain(std::iter::once(' '))
            .collect();
        for n in 2..=5usize {
            // as scikit-learn's char_wb: a word shorter than n gives itself once
            let mut offset = 0;
            loop {
                let end = (offset + n).min(padded.len());
                buf.clear();
                buf.extend(&padded[offset..end]);
                keys.push((fnv1a(b'c', buf.as_bytes()) % BUCKETS as u64) as u32);
                if offset + n >= padded.len() {
                    break;
                }
                offset += 1;
            }
        }
    }
    let words: Vec<&str> = normalised
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 2)
        .collect();
    for (i, w) in words.iter().enumerate() {
        keys.push(BUCKETS + (fnv1a(b'w', w.as_bytes()) % BUCKETS as u64) as u32);
        if let Some(next) = words.get(i + 1) {
            buf.clear();
            buf.push_str(w);
            buf.push(' ');
            buf.push_str(next);
            keys.push(BUCKETS + (fnv1a(b'w', buf.as_bytes()) % BUCKETS as u64) as u32);
        }
    }
    keys
}

/// Distinct keys with their counts, sorted by key.
pub fn counted(mut keys: Vec<u32>) -> Vec<(u32, u32)> {
    keys.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(keys.len());
    for k in keys {
        match out.last_mut() {
            Some((last, n)) if *last == k => *n += 1,
            _ => out.push((k, 1)),
        }
    }
    out
}

/// A sparse vector: (feature index, value), indices ascending.
pub type Sparse = Vec<(u32, f64)>;

/// The vocabulary: the kept keys (sorted) and their idf.
#[derive(Debug, Clone, PartialEq)]
pub struct Vocab {
    pub keys: Vec<u32>,
    pub idf: Vec<f64>,
}

impl Vocab {
    /// Keys in at least `min_df` of `docs` (each a counted key list), smoothed idf
    /// `ln((1 + n) / (1 + df)) + 1`.
    pub fn fit(docs: &[Vec<(u32, u32)>], min_df: u32) -> Vocab {
        let mut all: Vec<u32> = docs
            .iter()
            .flat_map(|d| d.iter().map(|&(k, _)| k))
            .collect();
        let df = counted(std::mem::take(&mut all));
        let n = docs.len() as f64;
        let (keys, idf) = df
            .into_iter()
            .filter(|&(_, d)| d >= min_df)
            .map(|(k, d)| (k, ((1.0 + n) / (1.0 + d as f64)).ln() + 1.0))
            .unzip();
        Vocab { keys, idf }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The tf-idf vector of counted keys: sublinear tf, idf, each block L2-normalised.
    pub fn vector(&self, counts: &[(u32, u32)]) -> Sparse {
        let mut v: Sparse = counts
            .iter()
            .filter_map(|&(k, tf)| {
                let i = self.keys.binary_search(&k).ok()?;
                Some((i as u32, (1.0 + (tf as f64).ln()) * self.idf[i]))
            })
            .collect();
        // keys of block 0 sort before block 1, and so do their indices
        let split = self.keys.partition_point(|&k| k < BUCKETS) as u32;
        for block in [0, 1] {
            let in_block = |i: u32| (i < split) == (block == 0);
            let norm = v
                .iter()
                .filter(|(i, _)| in_block(*i))
                .map(|(_, x)| x * x)
                .sum::<f64>()
                .sqrt();
            if norm > 0.0 {
                for (i, x) in v.iter_mut() {
                    if in_block(*i) {
                        *x /= norm;
                    }
                }
            }
        }
        v
    }

    /// The tf-idf vector of a normalised text.
    pub fn features(&self, normalised: &str) -> Sparse {
        self.vector(&counted(feature_keys(normalised)))
    }
}
