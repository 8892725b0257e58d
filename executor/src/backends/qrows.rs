//! Quantized weight rows on plain slices, for the local model's one-token decode steps
//! ([`super::llama::FastLlama::step`]).
//!
//! A decode step multiplies one activation row by every weight matrix. Through candle tensors
//! each product, and each of the ~20 small element-wise operations around it, is an allocated
//! tensor and a parallel dispatch of its own. Here a matrix is its GGUF blocks in a `Vec`, the
//! product is candle's own quantized kernel (`k_quants::matmul`, the same `vec_dot` as
//! `QMatMul`) writing into a caller's buffer, and matrices that read the same input (query, key
//! and value; gate and up) are stored as one, so a layer is four parallel regions.

use candle_core::quantized::k_quants::{
    self, BlockQ4K, BlockQ4_0, BlockQ5K, BlockQ6K, BlockQ8_0, GgmlType,
};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::Result;

enum Blocks {
    Q4_0(Vec<BlockQ4_0>),
    Q8_0(Vec<BlockQ8_0>),
    Q4K(Vec<BlockQ4K>),
    Q5K(Vec<BlockQ5K>),
    Q6K(Vec<BlockQ6K>),
}

/// `n` rows of `k` weights, quantized.
pub struct QRows {
    n: usize,
    k: usize,
    blocks: Blocks,
}

/// The block-typed copy of `bytes` (whole blocks of `T`).
fn typed<T: GgmlType>(bytes: &[u8]) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    if bytes.len() % size != 0 {
        candle_core::bail!("{} bytes are not whole {:?} blocks", bytes.len(), T::DTYPE);
    }
    let n = bytes.len() / size;
    let mut v = vec![T::zeros(); n];
    // SAFETY: `v` holds exactly `bytes.len()` bytes of plain-data blocks (`repr(C)` structs of
    // scales and integer quants, valid for any bit pattern), written here from GGUF bytes of
    // the same dtype.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr() as *mut u8, bytes.len());
    }
    Ok(v)
}

impl QRows {
    /// The matrices' rows stacked in order (`[sum n, k]`); `None` when they do not share one
    /// dtype this module runs (Q4_0, Q8_0, Q4K, Q5K, Q6K) and one row length.
    pub fn stack(ts: &[&QTensor]) -> Result<Option<Self>> {
        let Some(first) = ts.first() else {
            return Ok(None);
        };
        let dtype = first.dtype();
        let k = first.shape().dims2()?.1;
        let mut n = 0;
        let mut bytes = Vec::new();
        for t in ts {
            let (rows, cols) = t.shape().dims2()?;
            if t.dtype() != dtype || cols != k || k % dtype.block_size() != 0 {
                return Ok(None);
            }
            n += rows;
            bytes.extend_from_slice(&t.data()?);
        }
        let blocks = match dtype {
            GgmlDType::Q4_0 => Blocks::Q4_0(typed(&bytes)?),
            GgmlDType::Q8_0 => Blocks::Q8_0(typed(&bytes)?),
            GgmlDType::Q4K => Blocks::Q4K(typed(&bytes)?),
            GgmlDType::Q5K => Blocks::Q5K(typed(&bytes)?),
            GgmlDType::Q6K => Blocks::Q6K(typed(&bytes)?),
            _ => return Ok(None),
        };
        let me = Self { n, k, blocks };
        if me.len_blocks() != n * k / dtype.block_size() {
            candle_core::bail!("{dtype:?} data of {n} x {k} has the wrong size");
        }
        Ok(Some(me))
    }

    fn len_blocks(&self) -> usize {
        match &self.blocks {
            Blocks::Q4_0(b) => b.len(),
            Blocks::Q8_0(b) => b.len(),
            Blocks::Q4K(b) => b.len(),
            Blocks::Q5K(b) => b.len(),
            Blocks::Q6K(b) => b.len(),
        }
    }

    /// Rows.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `y[n] = W x` for one input row `x[k]`.
    pub fn matvec(&self, x: &[f32], y: &mut [f32]) -> Result<()> {
        if x.len() != self.k || y.len() != self.n {
            candle_core::bail!(
                "matvec of {} x {} with input {} into {}",
                self.n,
                self.k,
                x.len(),
                y.len()
            );
        }
        let mkn = (1, self.k, self.n);
        match &self.blocks {
            Blocks::Q4_0(b) => k_quants::matmul(mkn, x, b, y),
            Blocks::Q8_0(b) => k_quants::matmul(mkn, x, b, y),
            Blocks::Q4K(b) => k_quants::matmul(mkn, x, b, y),
            Blocks::Q5K(b) => k_quants::matmul(mkn, x, b, y),
            Blocks::Q6K(b) => k_quants::matmul(mkn, x, b, y),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::quantized::QMatMul;
    use candle_core::{Device, Module, Tensor};

    #[test]
    fn stacked_rows_multiply_as_candle_does_each_matrix() {
        let dev = Device::Cpu;
        let k = 64;
        let w = |n: usize, seed: f32| {
            let v: Vec<f32> = (0..n * k)
                .map(|i| (i as f32 * 0.37 + seed).sin() * 1.3)
                .collect();
            Tensor::from_vec(v, (n, k), &dev).unwrap()
        };
        let (a, b) = (w(8, 0.1), w(4, 2.0));
        let qa = QTensor::quantize(&a, GgmlDType::Q8_0).unwrap();
        let qb = QTensor::quantize(&b, GgmlDType::Q8_0).unwrap();
        let stacked = QRows::stack(&[&qa, &qb]).unwrap().expect("same dtype");
        assert_eq!(stacked.n(), 12);
        let x: Vec<f32> = (0..k).map(|i| (i as f32 * 0.11).cos()).collect();
        let mut y = vec![0f32; 12];
        stacked.matvec(&x, &mut y).unwrap();
        let xt = Tensor::from_vec(x.clone(), (1, k), &dev).unwrap();
        let want_a = QMatMul::from_qtensor(qa).unwrap().forward(&xt).unwrap();
        let want_b = QMatMul::from_qtensor(qb).unwrap().forward(&xt).unwrap();
        let want: Vec<f32> = [want_a, want_b]
            .iter()
            .flat_map(|t| t.flatten_all().unwrap().to_vec1::<f32>().unwrap())
            .collect();
        for (g, w) in y.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{g} vs {w}");
        }
        assert!(
            stacked.matvec(&x[..10], &mut y).is_err(),
            "bad shape is an error"
        );
        // Mixed dtypes do not stack.
        let q4 = QTensor::quantize(&w(4, 1.0), GgmlDType::Q4_0).unwrap();
        let q8 = QTensor::quantize(&w(4, 1.0), GgmlDType::Q8_0).unwrap();
        assert!(QRows::stack(&[&q8, &q4]).unwrap().is_none());
    }
}
