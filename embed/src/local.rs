//! The `local` provider: all-MiniLM-L6-v2 in process, from the model files
//! `make` fetches into the cache.
//!
//! Texts become windows of at most [`WINDOW_TOKENS`] tokens (a longer text
//! is embedded in chunks whose vectors are averaged). Windows are sorted by
//! length and cut into batches of at most `batch_tokens` padded tokens, so a
//! batch holds windows of about the same length and pads little; the
//! batches of one call run side by side on rayon's pool, one per core, and a
//! lone batch (a query) gets every core inside its matrix products.

use std::path::Path;
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use rayon::prelude::*;

use super::minilm::MiniLm;
use super::{EmbedError, Embedder, ProviderKind, normalize};

/// Tokens per model window, special tokens included (what the model was
/// trained with in sentence-transformers).
pub const WINDOW_TOKENS: usize = 256;

/// all-MiniLM-L6-v2 on the CPU.
pub struct LocalEmbedder {
    inner: Arc<LocalModel>,
    batch_tokens: usize,
}

/// Which implementation of the encoder runs.
enum Encoder {
    Fused(MiniLm),
    /// candle-transformers' BERT: what Lore ran before the fused encoder,
    /// kept as the benchmarks' baseline.
    Reference(candle_transformers::models::bert::BertModel),
}

struct LocalModel {
    encoder: Encoder,
    tokenizer: tokenizers::Tokenizer,
    cls: u32,
    sep: u32,
    device: Device,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("LocalEmbedder").field("batch_tokens", &self.batch_tokens).finish_non_exhaustive()
    }
}

impl LocalEmbedder {
    pub const MODEL: &'static str = "local/all-MiniLM-L6-v2";

    /// The model in `directory` (model.safetensors, config.json,
    /// tokenizer.json); batches of at most `batch_tokens` padded tokens.
    pub fn load(directory: &Path, batch_tokens: usize) -> Result<Self, EmbedError> {
        Self::load_with(directory, batch_tokens, false)
    }

    /// The same model run by candle-transformers' BERT, one window per
    /// forward pass: how Lore embedded before the fused encoder. For the
    /// benchmarks' baseline.
    pub fn load_reference(directory: &Path) -> Result<Self, EmbedError> {
        Self::load_with(directory, 0, true)
    }

    fn load_with(directory: &Path, batch_tokens: usize, reference: bool) -> Result<Self, EmbedError> {
        let load_error = |reason: String| EmbedError::Load { path: directory.display().to_string(), reason };
        let config: candle_transformers::models::bert::Config = serde_json::from_slice(
            &std::fs::read(directory.join("config.json")).map_err(|error| load_error(error.to_string()))?,
        )
        .map_err(|error| load_error(format!("config.json: {error}")))?;
        let weights =
            std::fs::read(directory.join("model.safetensors")).map_err(|error| load_error(error.to_string()))?;
        let device = Device::Cpu;
        let variables = candle_nn::VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|error| load_error(error.to_string()))?;
        let encoder = if reference {
            Encoder::Reference(
                candle_transformers::models::bert::BertModel::load(variables, &config)
                    .map_err(|error| load_error(error.to_string()))?,
            )
        } else {
            Encoder::Fused(MiniLm::load(variables, &config).map_err(|error| load_error(error.to_string()))?)
        };
        let mut tokenizer = tokenizers::Tokenizer::from_file(directory.join("tokenizer.json"))
            .map_err(|error| load_error(format!("tokenizer.json: {error}")))?;
        // Windows are cut and padded here, not by the tokenizer's defaults.
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|error| load_error(error.to_string()))?;
        let token = |name: &str| tokenizer.token_to_id(name).ok_or_else(|| load_error(format!("no {name} token")));
        let (cls, sep) = (token("[CLS]")?, token("[SEP]")?);
        Ok(Self {
            inner: Arc::new(LocalModel { encoder, tokenizer, cls, sep, device }),
            batch_tokens: if reference { WINDOW_TOKENS } else { batch_tokens.max(WINDOW_TOKENS) },
        })
    }

    /// The token windows of `text` (for tests).
    pub fn windows(&self, text: &str) -> Result<Vec<Vec<u32>>, EmbedError> {
        self.inner.windows(text)
    }
}

/// Groups window indexes, sorted by length, into batches whose padded size
/// (longest window x count) stays within `budget` tokens.
pub fn batches_by_length(lengths: &[usize], budget: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&index| lengths[index]);
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for index in order {
        // Sorted: the window joining is the batch's longest.
        if !current.is_empty() && (current.len() + 1) * lengths[index] > budget {
            batches.push(std::mem::take(&mut current));
        }
        current.push(index);
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

impl LocalModel {
    /// Token windows of each text: `[CLS] up to 254 tokens [SEP]`.
    fn windows(&self, text: &str) -> Result<Vec<Vec<u32>>, EmbedError> {
        let encoding = self.tokenizer.encode(text, false).map_err(|error| EmbedError::Inference(error.to_string()))?;
        let ids = encoding.get_ids();
        let content = WINDOW_TOKENS - 2;
        let chunks: Vec<&[u32]> = if ids.is_empty() { vec![&[]] } else { ids.chunks(content).collect() };
        Ok(chunks
            .into_iter()
            .map(|chunk| {
                let mut window = Vec::with_capacity(chunk.len() + 2);
                window.push(self.cls);
                window.extend_from_slice(chunk);
                window.push(self.sep);
                window
            })
            .collect())
    }

    /// Mean-pooled, normalized vectors of token windows, one forward pass.
    fn forward(&self, windows: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let longest = windows.iter().map(|window| window.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(windows.len() * longest);
        for window in windows {
            ids.extend(window.iter().copied().chain(std::iter::repeat_n(0, longest - window.len())));
        }
        let real: Vec<usize> = windows.iter().map(|window| window.len()).collect();
        let ids = Tensor::from_vec(ids, (windows.len(), longest), &self.device)?;
        let hidden = match &self.encoder {
            Encoder::Fused(encoder) => encoder.forward(&ids, &real, &self.device)?,
            Encoder::Reference(model) => {
                let mask: Vec<u32> = real
                    .iter()
                    .flat_map(|&real| (0..longest).map(move |position| u32::from(position < real)))
                    .collect();
                let mask = Tensor::from_vec(mask, (windows.len(), longest), &self.device)?;
                model.forward(&ids, &ids.zeros_like()?, Some(&mask))?
            }
        };
        // Mean over the real tokens only.
        let states: Vec<Vec<Vec<f32>>> = hidden.to_vec3()?;
        Ok(states
            .iter()
            .zip(&real)
            .map(|(tokens, &real)| {
                let mut pooled = vec![0.0f32; tokens.first().map_or(0, Vec::len)];
                for token in &tokens[..real] {
                    pooled.iter_mut().zip(token).for_each(|(sum, value)| *sum += value);
                }
                pooled.iter_mut().for_each(|value| *value /= real as f32);
                normalize(&mut pooled);
                pooled
            })
            .collect())
    }

    fn embed(&self, texts: &[String], batch_tokens: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut windows = Vec::new();
        let mut owner = Vec::new();
        for (index, text) in texts.iter().enumerate() {
            for window in self.windows(text)? {
                windows.push(window);
                owner.push(index);
            }
        }
        let lengths: Vec<usize> = windows.iter().map(Vec::len).collect();
        let mut batches = batches_by_length(&lengths, batch_tokens);
        // Longest first, one batch per task: the cores finish together.
        batches.reverse();
        let computed: Vec<Vec<Vec<f32>>> = batches
            .par_iter()
            .with_max_len(1)
            .map(|batch| {
                let batch_windows: Vec<&[u32]> = batch.iter().map(|&index| windows[index].as_slice()).collect();
                self.forward(&batch_windows)
            })
            .collect::<candle_core::Result<_>>()
            .map_err(|error| EmbedError::Inference(error.to_string()))?;
        let mut window_vectors = vec![Vec::new(); windows.len()];
        for (batch, vectors) in batches.iter().zip(computed) {
            for (&index, vector) in batch.iter().zip(vectors) {
                window_vectors[index] = vector;
            }
        }
        // A text of several windows: the average of its windows' vectors.
        let mut vectors = vec![vec![0.0f32; 0]; texts.len()];
        for (window, vector) in owner.into_iter().zip(window_vectors) {
            let sum = &mut vectors[window];
            if sum.is_empty() {
                *sum = vector;
            } else {
                sum.iter_mut().zip(vector).for_each(|(total, value)| *total += value);
            }
        }
        vectors.iter_mut().for_each(|vector| normalize(vector));
        Ok(vectors)
    }
}

#[async_trait::async_trait]
impl Embedder for LocalEmbedder {
    fn model(&self) -> &str {
        Self::MODEL
    }

    fn provider(&self) -> ProviderKind {
        ProviderKind::Local
    }

    fn dimensions(&self) -> usize {
        384
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let (model, texts, batch_tokens) = (Arc::clone(&self.inner), texts.to_vec(), self.batch_tokens);
        // CPU-bound: off the async workers.
        tokio::task::spawn_blocking(move || model.embed(&texts, batch_tokens))
            .await
            .map_err(|error| EmbedError::Inference(error.to_string()))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_hold_windows_of_about_one_length_within_the_budget() {
        let lengths = [200, 10, 12, 250, 11, 9, 130];
        let batches = batches_by_length(&lengths, 256);
        for batch in &batches {
            let longest = batch.iter().map(|&index| lengths[index]).max().unwrap();
            assert!(batch.len() == 1 || longest * batch.len() <= 256, "{batches:?}");
        }
        assert_eq!(batches[0], [5, 1, 4, 2], "the four short ones together");
        let mut every: Vec<usize> = batches.concat();
        every.sort();
        assert_eq!(every, (0..lengths.len()).collect::<Vec<_>>(), "each window once");
        assert!(batches_by_length(&[], 256).is_empty());
    }
}
