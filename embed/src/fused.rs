//! The element-wise steps of a BERT layer, each fused into one in-place pass
//! over the output of the matrix product before it. Done as separate tensor
//! operations (candle-transformers' BERT), every bias, residual, activation
//! and normalization allocates a fresh tensor and walks it again: on 2 cores
//! that was half the time of a forward pass (docs/BENCHMARKS.md).
//!
//! Every op works on contiguous row-major f32 tensors, the only ones the
//! encoder hands it; anything else is an error, not a panic.

use candle_core::{CpuStorage, InplaceOp1, InplaceOp2, Layout};

fn unsupported(op: &str) -> candle_core::Error {
    candle_core::Error::Msg(format!("{op}: expects a contiguous f32 tensor"))
}

fn rows_mut<'a>(op: &str, storage: &'a mut CpuStorage, layout: &Layout) -> candle_core::Result<&'a mut [f32]> {
    match (storage, layout.contiguous_offsets()) {
        (CpuStorage::F32(values), Some((start, end))) => Ok(&mut values[start..end]),
        _ => Err(unsupported(op)),
    }
}

fn rows<'a>(op: &str, storage: &'a CpuStorage, layout: &Layout) -> candle_core::Result<&'a [f32]> {
    match (storage, layout.contiguous_offsets()) {
        (CpuStorage::F32(values), Some((start, end))) => Ok(&values[start..end]),
        _ => Err(unsupported(op)),
    }
}

/// erf(x) as x·P(x²)/Q(x²) on [-4, 4] (beyond, erf is 1 to within f32's
/// precision). No exp and no branch, so the loop over a row vectorizes.
/// The coefficients are a minimax fit made for this file (iteratively
/// reweighted least squares against scipy's erf on 20,001 points of
/// [0, 4]): absolute error under 6e-8 in f64, 4e-7 evaluated in f32.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    const P: [f32; 7] =
        [1.128_378_7, 0.212_842_01, 0.052_285_73, 0.004_245_588, 0.000_154_357_32, -1.985_445_9e-6, 1.923_716_4e-8];
    const Q: [f32; 5] = [1.0, 0.521_954_37, 0.120_341_91, 0.015_455_793, 0.001_086_383_6];
    let x = x.clamp(-4.0, 4.0);
    let square = x * x;
    let numerator = P.iter().rev().fold(0.0, |sum, coefficient| sum * square + coefficient);
    let denominator = Q.iter().rev().fold(0.0, |sum, coefficient| sum * square + coefficient);
    x * numerator / denominator
}

/// GELU as BERT defines it (the erf form, not the tanh approximation).
#[inline(always)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// `y = y + bias`, the bias broadcast over rows.
#[derive(Debug, Clone)]
pub struct AddBias(pub Vec<f32>);

impl InplaceOp1 for AddBias {
    fn name(&self) -> &'static str {
        "add-bias"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        for row in rows_mut(self.name(), storage, layout)?.chunks_exact_mut(self.0.len()) {
            row.iter_mut().zip(&self.0).for_each(|(value, bias)| *value += bias);
        }
        Ok(())
    }
}

/// `y = gelu(y + bias)`: the feed-forward's first half.
#[derive(Debug, Clone)]
pub struct AddBiasGelu(pub Vec<f32>);

impl InplaceOp1 for AddBiasGelu {
    fn name(&self) -> &'static str {
        "add-bias-gelu"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        for row in rows_mut(self.name(), storage, layout)?.chunks_exact_mut(self.0.len()) {
            row.iter_mut().zip(&self.0).for_each(|(value, bias)| *value = gelu(*value + bias));
        }
        Ok(())
    }
}

/// `y = LayerNorm(y + bias + residual)`: how each sub-layer of BERT ends.
#[derive(Debug, Clone)]
pub struct AddBiasResidualNorm {
    pub bias: Vec<f32>,
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
    pub epsilon: f32,
}

impl InplaceOp2 for AddBiasResidualNorm {
    fn name(&self) -> &'static str {
        "add-bias-residual-norm"
    }

    fn cpu_fwd(
        &self,
        storage: &mut CpuStorage,
        layout: &Layout,
        residual: &CpuStorage,
        residual_layout: &Layout,
    ) -> candle_core::Result<()> {
        let width = self.bias.len();
        let values = rows_mut(self.name(), storage, layout)?;
        let residual = rows(self.name(), residual, residual_layout)?;
        if values.len() != residual.len() {
            return Err(candle_core::Error::Msg(format!("{}: the residual has another shape", self.name())));
        }
        for (row, residual) in values.chunks_exact_mut(width).zip(residual.chunks_exact(width)) {
            let mut sum = 0.0;
            for ((value, bias), residual) in row.iter_mut().zip(&self.bias).zip(residual) {
                *value += bias + residual;
                sum += *value;
            }
            let mean = sum / width as f32;
            let mut variance = 0.0;
            for value in row.iter_mut() {
                *value -= mean;
                variance += *value * *value;
            }
            let scale = 1.0 / (variance / width as f32 + self.epsilon).sqrt();
            for ((value, gamma), beta) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *value = *value * scale * gamma + beta;
            }
        }
        Ok(())
    }
}

/// Attention scores `(batch, heads, length, length)` become probabilities:
/// each row gets its sequence's key mask (0 for a token, a large negative
/// number for padding, shape `(batch, length)`) and a softmax.
#[derive(Debug, Clone, Copy)]
pub struct MaskedSoftmax {
    pub heads: usize,
}

impl InplaceOp2 for MaskedSoftmax {
    fn name(&self) -> &'static str {
        "masked-softmax"
    }

    fn cpu_fwd(
        &self,
        storage: &mut CpuStorage,
        layout: &Layout,
        mask: &CpuStorage,
        mask_layout: &Layout,
    ) -> candle_core::Result<()> {
        let length = layout.dims().last().copied().unwrap_or(0);
        let scores = rows_mut(self.name(), storage, layout)?;
        let mask = rows(self.name(), mask, mask_layout)?;
        if length == 0 || scores.len() != mask.len() * self.heads * length {
            return Err(candle_core::Error::Msg(format!("{}: the mask does not fit the scores", self.name())));
        }
        for (block, mask) in scores.chunks_exact_mut(self.heads * length * length).zip(mask.chunks_exact(length)) {
            for row in block.chunks_exact_mut(length) {
                let mut max = f32::NEG_INFINITY;
                for (value, mask) in row.iter_mut().zip(mask) {
                    *value += mask;
                    max = max.max(*value);
                }
                let mut sum = 0.0;
                for value in row.iter_mut() {
                    *value = (*value - max).exp();
                    sum += *value;
                }
                let scale = 1.0 / sum;
                row.iter_mut().for_each(|value| *value *= scale);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_is_within_half_a_millionth_everywhere() {
        let mut worst: f64 = 0.0;
        for step in -60_000..=60_000 {
            let x = step as f64 / 10_000.0;
            worst = worst.max((f64::from(erf(x as f32)) - statrs::function::erf::erf(x)).abs());
        }
        assert!(worst < 5e-7, "worst error {worst}");
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(-1.5), -erf(1.5), "odd");
    }

    #[test]
    fn the_fused_ops_compute_what_their_names_say() {
        use candle_core::{Device, Tensor};
        let device = Device::Cpu;
        let y = Tensor::new(&[[1.0f32, -2.0, 3.0], [0.5, 0.0, -1.0]], &device).unwrap();
        y.inplace_op1(&AddBias(vec![1.0, 1.0, -1.0])).unwrap();
        assert_eq!(y.to_vec2::<f32>().unwrap(), [[2.0, -1.0, 2.0], [1.5, 1.0, -2.0]]);

        let residual = Tensor::new(&[[1.0f32, 1.0, 1.0], [0.0, 0.0, 0.0]], &device).unwrap();
        let norm = AddBiasResidualNorm { bias: vec![0.0; 3], gamma: vec![1.0; 3], beta: vec![0.0; 3], epsilon: 1e-12 };
        y.inplace_op2(&residual, &norm).unwrap();
        for row in y.to_vec2::<f32>().unwrap() {
            let mean: f32 = row.iter().sum::<f32>() / 3.0;
            let variance: f32 = row.iter().map(|value| (value - mean).powi(2)).sum::<f32>() / 3.0;
            assert!(mean.abs() < 1e-6 && (variance - 1.0).abs() < 1e-4, "{row:?}");
        }

        // One sequence of two tokens, one head: the padded key gets nothing.
        let scores = Tensor::new(&[[[[1.0f32, 5.0], [2.0, 2.0]]]], &device).unwrap();
        let mask = Tensor::new(&[[0.0f32, -1e9]], &device).unwrap();
        scores.inplace_op2(&mask, &MaskedSoftmax { heads: 1 }).unwrap();
        assert_eq!(scores.flatten_all().unwrap().to_vec1::<f32>().unwrap(), [1.0, 0.0, 1.0, 0.0]);

        let hidden = Tensor::new(&[[0.0f32, 1.0, -1.0]], &device).unwrap();
        hidden.inplace_op1(&AddBiasGelu(vec![0.0; 3])).unwrap();
        let gelu = hidden.to_vec2::<f32>().unwrap();
        assert!((gelu[0][1] - 0.841_344_7).abs() < 1e-6 && (gelu[0][2] + 0.158_655_3).abs() < 1e-6, "{gelu:?}");
    }
}
