//! The weights that turn a text's features into a score: logistic
//! regression, fitted by [`crate::training`] on the development set and
//! shipped as `classifier.json`.

use serde::{Deserialize, Serialize};

use crate::cues::{Feature, Features};

/// A fitted model: P(instruction) = σ(bias + Σ weight · feature); a text
/// at or above `threshold` is held.
#[derive(Debug, Clone, PartialEq)]
pub struct Classifier {
    pub bias: f64,
    pub weights: [f64; Feature::COUNT],
    pub threshold: f64,
}

/// `classifier.json`: the weights by feature name, so a reader sees what counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassifierFile {
    pub bias: f64,
    pub threshold: f64,
    pub weights: std::collections::BTreeMap<String, f64>,
    /// How many samples of each class it was fitted on, for the record.
    pub payloads: usize,
    pub benign: usize,
}

impl Classifier {
    pub fn score(&self, features: &Features) -> f64 {
        let z = self.bias + self.weights.iter().zip(features).map(|(weight, value)| weight * value).sum::<f64>();
        sigmoid(z)
    }

    /// The features that pushed the score up, largest share first.
    pub fn contributions(&self, features: &Features) -> Vec<(Feature, f64)> {
        let mut parts: Vec<(Feature, f64)> = Feature::ALL
            .into_iter()
            .map(|feature| (feature, self.weights[feature.index()] * features[feature.index()]))
            .filter(|(_, part)| *part > 0.0)
            .collect();
        parts.sort_by(|a, b| b.1.total_cmp(&a.1));
        parts
    }

    pub fn to_file(&self, payloads: usize, benign: usize) -> ClassifierFile {
        ClassifierFile {
            bias: self.bias,
            threshold: self.threshold,
            weights: Feature::ALL
                .iter()
                .map(|feature| (feature.name().to_owned(), self.weights[feature.index()]))
                .collect(),
            payloads,
            benign,
        }
    }

    pub fn from_file(file: &ClassifierFile) -> Result<Self, String> {
        let mut weights = [0.0; Feature::COUNT];
        for (name, weight) in &file.weights {
            let feature = Feature::from_name(name).ok_or_else(|| format!("unknown feature {name:?}"))?;
            weights[feature.index()] = *weight;
        }
        if let Some(missing) = Feature::ALL.iter().find(|feature| !file.weights.contains_key(feature.name())) {
            return Err(format!("no weight for feature {:?}", missing.name()));
        }
        if !(0.0..1.0).contains(&file.threshold) {
            return Err(format!("threshold {} is not between 0 and 1", file.threshold));
        }
        Ok(Self { bias: file.bias, weights, threshold: file.threshold })
    }
}

pub fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}
