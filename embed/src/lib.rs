//! lore-embed: text embeddings for knowledge search, behind one trait, with
//! three providers:
//! - `local`: all-MiniLM-L6-v2 in process on candle, from the model files
//!   `make` fetches into the cache (384 dimensions; CPU; [`local`]: batches
//!   of windows of similar length on every core; [`minilm`]: the encoder,
//!   [`fused`]: its element-wise steps);
//! - `openai`: any OpenAI-compatible `/v1/embeddings` endpoint, with retries
//!   and exponential backoff;
//! - `hash`: deterministic feature hashing of words, for tests only (it
//!   knows no meaning, only shared words).
//!
//! Every provider returns L2-normalized vectors, so cosine distance is what
//! pgvector's `<=>` computes.

mod fused;
pub mod local;
mod minilm;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use local::LocalEmbedder;

/// Which provider to use, with its settings (`[knowledge.embedding]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmbeddingConfig {
    /// `local` (default), `openai` or `hash`.
    pub provider: ProviderKind,
    /// `local`: the directory with model.safetensors, config.json and
    /// tokenizer.json; default `<cache_dir>/models/all-MiniLM-L6-v2`.
    pub model_dir: Option<PathBuf>,
    /// `openai`: the API base URL (the request goes to `<url>/embeddings`).
    pub url: String,
    /// `openai`: the model name.
    pub model: String,
    /// `openai` and `hash`: vector dimensions.
    pub dimensions: usize,
    /// `openai`: the API key (also read from `LORE_KNOWLEDGE__EMBEDDING__API_KEY`).
    pub api_key: Option<String>,
    /// `openai`: per-request timeout.
    pub timeout_ms: u64,
    /// `openai`: attempts after the first one fails with a retriable error.
    pub max_retries: u32,
    /// Texts per provider call (and claimed from the embedding queue at
    /// once).
    pub batch_size: usize,
    /// `local`: padded tokens per forward pass; windows of similar length
    /// share one.
    pub batch_tokens: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Local,
    Openai,
    Hash,
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        Self {
            provider: ProviderKind::Local,
            model_dir: None,
            url: "https://api.openai.com/v1".into(),
            model: "text-embedding-3-small".into(),
            dimensions: 384,
            api_key: None,
            timeout_ms: 10_000,
            max_retries: 3,
            batch_size: 256,
            batch_tokens: 1024,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("cannot load the embedding model from {path}: {reason}")]
    Load { path: String, reason: String },
    #[error("embedding failed: {0}")]
    Inference(String),
    #[error("embedding provider unavailable: {0}")]
    Unavailable(String),
}

/// A text embedding model.
#[async_trait::async_trait]
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// The name embeddings are stored under, e.g. `local/all-MiniLM-L6-v2`.
    fn model(&self) -> &str;
    fn provider(&self) -> ProviderKind;
    fn dimensions(&self) -> usize;
    /// One L2-normalized vector per text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Builds the configured provider.
pub fn from_config(config: &EmbeddingConfig, cache_dir: &Path) -> Result<Arc<dyn Embedder>, EmbedError> {
    Ok(match config.provider {
        ProviderKind::Local => {
            let directory =
                config.model_dir.clone().unwrap_or_else(|| cache_dir.join("models").join("all-MiniLM-L6-v2"));
            shared_local_model(&directory, config.batch_tokens)?
        }
        ProviderKind::Openai => Arc::new(OpenAiEmbedder::new(config)?),
        ProviderKind::Hash => Arc::new(HashEmbedder::new(config.dimensions)),
    })
}

/// One copy of the local model per directory and process: it is 90 MB of
/// weights, and tests start many servers.
fn shared_local_model(directory: &Path, batch_tokens: usize) -> Result<Arc<dyn Embedder>, EmbedError> {
    static LOADED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<PathBuf, Arc<LocalEmbedder>>>> =
        std::sync::OnceLock::new();
    let mut loaded = LOADED.get_or_init(Default::default).lock().expect("model cache lock");
    if let Some(model) = loaded.get(directory) {
        return Ok(Arc::clone(model) as Arc<dyn Embedder>);
    }
    let model = Arc::new(LocalEmbedder::load(directory, batch_tokens)?);
    loaded.insert(directory.to_owned(), Arc::clone(&model));
    Ok(model)
}

pub(crate) fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|value| value * value).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|value| *value /= norm);
    }
}

/// Deterministic feature hashing: each lowercased word adds 1 to the
/// dimension its BLAKE3 hash picks (with a sign, to spread collisions).
#[derive(Debug)]
pub struct HashEmbedder {
    dimensions: usize,
    model: String,
}

impl HashEmbedder {
    pub fn new(dimensions: usize) -> Self {
        Self { dimensions: dimensions.max(1), model: format!("hash/{}", dimensions.max(1)) }
    }

    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0.0; self.dimensions];
        for word in text.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()) {
            let hash = blake3::hash(word.to_lowercase().as_bytes());
            let bytes = hash.as_bytes();
            let index = u64::from_le_bytes(bytes[0..8].try_into().expect("8 bytes")) as usize % self.dimensions;
            vector[index] += if bytes[8] & 1 == 0 { 1.0 } else { -1.0 };
        }
        normalize(&mut vector);
        vector
    }
}

#[async_trait::async_trait]
impl Embedder for HashEmbedder {
    fn model(&self) -> &str {
        &self.model
    }

    fn provider(&self) -> ProviderKind {
        ProviderKind::Hash
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|text| self.embed_one(text)).collect())
    }
}

/// An OpenAI-compatible `/embeddings` endpoint.
#[derive(Debug)]
pub struct OpenAiEmbedder {
    client: reqwest::Client,
    url: String,
    /// The provider's model name, sent in requests.
    remote_model: String,
    stored_as: String,
    dimensions: usize,
    api_key: Option<String>,
    max_retries: u32,
}

#[derive(Serialize)]
struct EmbeddingsRequest<'a> {
    model: &'a str,
    input: &'a [String],
    dimensions: usize,
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingData>,
}

#[derive(Deserialize)]
struct EmbeddingData {
    index: usize,
    embedding: Vec<f32>,
}

impl OpenAiEmbedder {
    pub fn new(config: &EmbeddingConfig) -> Result<Self, EmbedError> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(config.timeout_ms))
            .build()
            .map_err(|error| EmbedError::Load { path: config.url.clone(), reason: error.to_string() })?;
        Ok(Self {
            client,
            url: format!("{}/embeddings", config.url.trim_end_matches('/')),
            remote_model: config.model.clone(),
            stored_as: format!("openai/{}/{}", config.model, config.dimensions),
            dimensions: config.dimensions,
            api_key: config.api_key.clone(),
            max_retries: config.max_retries,
        })
    }

    async fn call(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, (bool, String)> {
        let mut request = self.client.post(&self.url).json(&EmbeddingsRequest {
            model: &self.remote_model,
            input: texts,
            dimensions: self.dimensions,
        });
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|error| (true, error.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            let retriable = status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS;
            return Err((retriable, format!("{} answered {status}", self.url)));
        }
        let mut body: EmbeddingsResponse = response.json().await.map_err(|error| (false, error.to_string()))?;
        body.data.sort_by_key(|data| data.index);
        if body.data.len() != texts.len() || body.data.iter().any(|data| data.embedding.len() != self.dimensions) {
            return Err((false, "the answer does not match the request (count or dimensions)".into()));
        }
        Ok(body
            .data
            .into_iter()
            .map(|data| {
                let mut vector = data.embedding;
                normalize(&mut vector);
                vector
            })
            .collect())
    }
}

#[async_trait::async_trait]
impl Embedder for OpenAiEmbedder {
    fn model(&self) -> &str {
        &self.stored_as
    }

    fn provider(&self) -> ProviderKind {
        ProviderKind::Openai
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut backoff = Duration::from_millis(200);
        let mut attempt = 0;
        loop {
            match self.call(texts).await {
                Ok(vectors) => return Ok(vectors),
                Err((true, reason)) if attempt < self.max_retries => {
                    tracing::warn!(attempt, reason, "embedding call failed; retrying");
                    tokio::time::sleep(backoff + Duration::from_millis(fastrand::u64(0..100))).await;
                    backoff *= 2;
                    attempt += 1;
                }
                Err((_, reason)) => return Err(EmbedError::Unavailable(reason)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// The real model, from the files `make` fetches into the cache.
    pub(crate) fn local_model() -> LocalEmbedder {
        let directory = lore_pgtest::default_cache_dir().join("models/all-MiniLM-L6-v2");
        LocalEmbedder::load(&directory, 1024)
            .unwrap_or_else(|error| panic!("{error} (run `make tools` or `bash scripts/setup/fetch_tools.sh` first)"))
    }

    #[tokio::test]
    async fn the_local_model_places_related_texts_near_and_unrelated_ones_far() {
        let model = local_model();
        let texts: Vec<String> = [
            "authentication fails with an expired token",
            "login error: the auth token has expired",
            "the CSS grid collapses on small screens",
        ]
        .map(String::from)
        .to_vec();
        let vectors = model.embed(&texts).await.unwrap();
        assert_eq!(vectors[0].len(), 384);
        let norm: f32 = vectors[0].iter().map(|value| value * value).sum();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
        let related = cosine(&vectors[0], &vectors[1]);
        let unrelated = cosine(&vectors[0], &vectors[2]);
        assert!(related > 0.5 && unrelated < 0.2, "related {related}, unrelated {unrelated}");
        // Batching and padding do not change a text's vector.
        let alone = model.embed(&texts[2..]).await.unwrap();
        assert!(cosine(&alone[0], &vectors[2]) > 0.9999);
    }

    #[tokio::test]
    async fn a_text_longer_than_one_window_is_embedded_in_chunks() {
        let model = local_model();
        let long = "PostgreSQL row level security policies need a WITH CHECK clause for inserts. ".repeat(60);
        let vectors = model.embed(&[long.clone(), "row level security blocks inserts".to_owned()]).await.unwrap();
        let windows = model.windows(&long).unwrap();
        assert!(windows.len() > 2, "{} windows", windows.len());
        assert!(windows.iter().all(|window| window.len() <= local::WINDOW_TOKENS));
        assert!(cosine(&vectors[0], &vectors[1]) > 0.5);
    }

    #[tokio::test]
    async fn hash_vectors_are_deterministic_normalized_and_share_words() {
        let embedder = HashEmbedder::new(64);
        let texts = vec!["RLS blocks INSERT".to_owned(), "rls blocks insert".to_owned(), "cache miss".to_owned()];
        let vectors = embedder.embed(&texts).await.unwrap();
        assert_eq!(vectors[0], vectors[1], "case does not matter");
        let norm: f32 = vectors[0].iter().map(|value| value * value).sum();
        assert!((norm - 1.0).abs() < 1e-5);
        let cosine: f32 = vectors[0].iter().zip(&vectors[2]).map(|(a, b)| a * b).sum();
        assert!(cosine.abs() < 0.5, "different words are far apart: {cosine}");
    }
}
