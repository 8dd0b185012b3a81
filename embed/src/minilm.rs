//! all-MiniLM-L6-v2's encoder (a BERT: 6 layers, 12 heads, 384 wide) on
//! candle's CPU tensors, written for throughput on a few cores:
//! - the query, key and value projections are one matrix product, with the
//!   attention's 1/sqrt(head size) folded into the query's weights;
//! - every weight is stored transposed and contiguous, so the products run
//!   on row-major operands;
//! - what follows each product (bias, GELU, residual, layer norm, the
//!   padding mask and softmax) is one in-place pass ([`super::fused`]).
//!
//! It computes what candle-transformers' `BertModel` computes (the test
//! below holds the two to 1e-4 on every hidden state), faster for one text
//! and more so with two workers on batches of similar length (figures in
//! docs/BENCHMARKS.md).

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::Config;

use super::fused::{AddBias, AddBiasGelu, AddBiasResidualNorm, MaskedSoftmax};

/// What padding adds to an attention score: softmax turns it into 0.
const MASKED: f32 = -1e9;

struct Layer {
    /// `(hidden, 3 * hidden)`: query (scaled), key, value.
    attention_in: Tensor,
    attention_in_bias: AddBias,
    /// `(hidden, hidden)`.
    attention_out: Tensor,
    attention_norm: AddBiasResidualNorm,
    /// `(hidden, intermediate)`.
    up: Tensor,
    up_activation: AddBiasGelu,
    /// `(intermediate, hidden)`.
    down: Tensor,
    output_norm: AddBiasResidualNorm,
}

pub struct MiniLm {
    word: Tensor,
    position: Tensor,
    /// Row 0 of the token type embeddings: every token is of type 0.
    token_type: Tensor,
    norm: (Tensor, Tensor),
    epsilon: f32,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
    max_positions: usize,
}

fn vector(tensor: &Tensor) -> candle_core::Result<Vec<f32>> {
    tensor.to_dtype(DType::F32)?.to_vec1()
}

/// `weight` of a linear layer `(out, in)` as the right-hand operand of
/// `x · W` (`(in, out)`, contiguous).
fn operand(weight: &Tensor) -> candle_core::Result<Tensor> {
    weight.t()?.contiguous()
}

impl MiniLm {
    /// The weights under `variables` (with or without a `bert.` prefix).
    pub fn load(variables: VarBuilder, config: &Config) -> candle_core::Result<Self> {
        let variables = if variables.contains_tensor("embeddings.word_embeddings.weight") {
            variables
        } else {
            variables.pp("bert")
        };
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        let epsilon = config.layer_norm_eps as f32;
        let scale = 1.0 / ((hidden / heads) as f64).sqrt();
        let norm = |prefix: VarBuilder, bias: &Tensor| -> candle_core::Result<AddBiasResidualNorm> {
            Ok(AddBiasResidualNorm {
                bias: vector(bias)?,
                gamma: vector(&prefix.get(hidden, "weight")?)?,
                beta: vector(&prefix.get(hidden, "bias")?)?,
                epsilon,
            })
        };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for index in 0..config.num_hidden_layers {
            let layer = variables.pp(format!("encoder.layer.{index}"));
            let attention = layer.pp("attention.self");
            let projection = |name: &str| -> candle_core::Result<(Tensor, Tensor)> {
                let part = attention.pp(name);
                Ok((part.get((hidden, hidden), "weight")?, part.get(hidden, "bias")?))
            };
            let (query, query_bias) = projection("query")?;
            let (key, key_bias) = projection("key")?;
            let (value, value_bias) = projection("value")?;
            let attention_in = Tensor::cat(&[(query * scale)?, key, value], 0)?;
            let attention_in_bias = Tensor::cat(&[(query_bias * scale)?, key_bias, value_bias], 0)?;
            let output = layer.pp("attention.output");
            let intermediate = layer.pp("intermediate.dense");
            let down = layer.pp("output");
            layers.push(Layer {
                attention_in: operand(&attention_in)?,
                attention_in_bias: AddBias(vector(&attention_in_bias)?),
                attention_out: operand(&output.pp("dense").get((hidden, hidden), "weight")?)?,
                attention_norm: norm(output.pp("LayerNorm"), &output.pp("dense").get(hidden, "bias")?)?,
                up: operand(&intermediate.get((config.intermediate_size, hidden), "weight")?)?,
                up_activation: AddBiasGelu(vector(&intermediate.get(config.intermediate_size, "bias")?)?),
                down: operand(&down.pp("dense").get((hidden, config.intermediate_size), "weight")?)?,
                output_norm: norm(down.pp("LayerNorm"), &down.pp("dense").get(hidden, "bias")?)?,
            });
        }
        let embeddings = variables.pp("embeddings");
        Ok(Self {
            word: embeddings.pp("word_embeddings").get((config.vocab_size, hidden), "weight")?,
            position: embeddings.pp("position_embeddings").get((config.max_position_embeddings, hidden), "weight")?,
            token_type: embeddings
                .pp("token_type_embeddings")
                .get((config.type_vocab_size, hidden), "weight")?
                .narrow(0, 0, 1)?,
            norm: (embeddings.pp("LayerNorm").get(hidden, "weight")?, embeddings.pp("LayerNorm").get(hidden, "bias")?),
            epsilon,
            layers,
            heads,
            hidden,
            max_positions: config.max_position_embeddings,
        })
    }

    /// The last hidden state of every token, `(batch, length, hidden)`, of
    /// `ids` `(batch, length)`, where `real` holds how many tokens of each
    /// sequence are not padding.
    pub fn forward(&self, ids: &Tensor, real: &[usize], device: &Device) -> candle_core::Result<Tensor> {
        let (batch, length) = ids.dims2()?;
        if real.len() != batch || length > self.max_positions {
            return Err(candle_core::Error::Msg(format!(
                "{batch} sequences of {length} tokens (at most {}) with {} lengths",
                self.max_positions,
                real.len()
            )));
        }
        let hidden = self.hidden;
        let head_size = hidden / self.heads;
        let embedded = self.word.index_select(&ids.flatten_all()?, 0)?.reshape((batch, length, hidden))?;
        let embedded = embedded.broadcast_add(&self.position.narrow(0, 0, length)?)?.broadcast_add(&self.token_type)?;
        let mut states = candle_nn::ops::layer_norm(&embedded, &self.norm.0, &self.norm.1, self.epsilon)?
            .reshape((batch * length, hidden))?;
        let mask: Vec<f32> = real
            .iter()
            .flat_map(|&real| (0..length).map(move |position| if position < real { 0.0 } else { MASKED }))
            .collect();
        let mask = Tensor::from_vec(mask, (batch, length), device)?;
        for layer in &self.layers {
            let projected = states.matmul(&layer.attention_in)?;
            projected.inplace_op1(&layer.attention_in_bias)?;
            let projected = projected.reshape((batch, length, 3, self.heads, head_size))?;
            let part = |index: usize| projected.narrow(2, index, 1)?.squeeze(2)?.transpose(1, 2)?.contiguous();
            let (query, key, value) = (part(0)?, part(1)?, part(2)?);
            let scores = query.matmul(&key.t()?)?;
            scores.inplace_op2(&mask, &MaskedSoftmax { heads: self.heads })?;
            let context = scores.matmul(&value)?.transpose(1, 2)?.reshape((batch * length, hidden))?;
            let attended = context.matmul(&layer.attention_out)?;
            attended.inplace_op2(&states, &layer.attention_norm)?;
            let expanded = attended.matmul(&layer.up)?;
            expanded.inplace_op1(&layer.up_activation)?;
            let output = expanded.matmul(&layer.down)?;
            output.inplace_op2(&attended, &layer.output_norm)?;
            states = output;
        }
        states.reshape((batch, length, hidden))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: candle-transformers' BERT on the same weights.
    #[test]
    fn the_fused_encoder_computes_what_candle_transformers_bert_computes() {
        let directory = lore_pgtest::default_cache_dir().join("models/all-MiniLM-L6-v2");
        let config: Config = serde_json::from_slice(
            &std::fs::read(directory.join("config.json")).expect("`make tools` fetches the model"),
        )
        .unwrap();
        let weights = std::fs::read(directory.join("model.safetensors")).unwrap();
        let device = Device::Cpu;
        let variables =
            VarBuilder::from_buffered_safetensors(weights, candle_transformers::models::bert::DTYPE, &device).unwrap();
        let reference = candle_transformers::models::bert::BertModel::load(variables.clone(), &config).unwrap();
        let fused = MiniLm::load(variables, &config).unwrap();
        // Two sequences, the second padded after 5 of its 9 positions.
        let ids: Vec<u32> = (0..18).map(|index| 101 + (index * 797) % 20_000).collect();
        let ids = Tensor::from_vec(ids, (2, 9), &device).unwrap();
        let real = [9, 5];
        let mask: Vec<u32> =
            real.iter().flat_map(|&real| (0..9).map(move |position| u32::from(position < real))).collect();
        let mask = Tensor::from_vec(mask, (2, 9), &device).unwrap();
        let expected = reference.forward(&ids, &ids.zeros_like().unwrap(), Some(&mask)).unwrap();
        let actual = fused.forward(&ids, &real, &device).unwrap();
        for (sequence, &real) in real.iter().enumerate() {
            let difference = (expected.get(sequence).unwrap().narrow(0, 0, real).unwrap()
                - actual.get(sequence).unwrap().narrow(0, 0, real).unwrap())
            .unwrap()
            .abs()
            .unwrap()
            .flatten_all()
            .unwrap()
            .max(0)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
            assert!(difference < 1e-4, "sequence {sequence}: largest difference {difference}");
        }
    }
}
