//! How search ranks: reciprocal rank fusion of the signals, then the blend
//! of similarity, proven success, recency and specificity. Pure functions,
//! so the arithmetic is tested on its own.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A retrieval signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    /// PostgreSQL full-text search, stemmed, with synonyms.
    Keyword,
    /// Trigram word similarity (typos, partial words).
    Fuzzy,
    /// Embedding cosine similarity.
    Semantic,
    /// The query holds one of the entry's symptoms (an error message).
    Symptom,
}

/// One entry found by one signal.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub entry_id: Uuid,
    /// The signal's own score (ts_rank_cd, word similarity, cosine).
    pub score: f64,
    /// Query terms (after synonym expansion) that matched.
    pub matched_terms: Vec<String>,
}

/// Why an entry matched, per signal.
#[derive(Debug, Clone, PartialEq)]
pub struct Reason {
    pub signal: Signal,
    pub score: f64,
    /// 1-based rank in the signal's list.
    pub rank: u32,
    pub matched_terms: Vec<String>,
}

/// The ranking weights and constants (`[knowledge.search]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RankingConfig {
    pub similarity_weight: f64,
    pub success_weight: f64,
    pub recency_weight: f64,
    pub specificity_weight: f64,
    /// Weight of the category part (1 for the query's category, 0.5 for a
    /// related one), counted only when the query names a category.
    pub category_weight: f64,
    /// Recency is exp(-days / recency_days).
    pub recency_days: f64,
    /// The k of reciprocal rank fusion, weight / (k + rank). Small: the
    /// first few places of each signal decide (measured on CoSQA, see
    /// docs/EVALUATION.md, "Retrieval").
    pub rrf_k: f64,
    /// Weight of each signal in the fusion; the keyword signal's is scaled
    /// per query by how much of the query its best hit matched.
    pub keyword_signal_weight: f64,
    pub fuzzy_signal_weight: f64,
    pub semantic_signal_weight: f64,
    pub symptom_signal_weight: f64,
    /// Hits whose fused similarity is below this are dropped (a query may
    /// ask for more).
    pub min_similarity: f64,
}

impl Default for RankingConfig {
    fn default() -> Self {
        Self {
            similarity_weight: 0.4,
            success_weight: 0.3,
            recency_weight: 0.2,
            specificity_weight: 0.1,
            category_weight: 0.2,
            recency_days: 30.0,
            rrf_k: 5.0,
            keyword_signal_weight: 1.0,
            fuzzy_signal_weight: 0.25,
            semantic_signal_weight: 2.0,
            symptom_signal_weight: 2.0,
            min_similarity: 0.0,
        }
    }
}

/// The parts of a hit's score, each in 0..=1.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ScoreParts {
    pub similarity: f64,
    pub success_rate: f64,
    pub recency: f64,
    pub specificity: f64,
    /// `None` when the query names no category.
    pub category: Option<f64>,
}

impl ScoreParts {
    /// The weighted blend, with the weights normalized to sum to 1 so the
    /// score stays in 0..=1 whatever the configuration says.
    pub fn score(&self, config: &RankingConfig) -> f64 {
        let weighted = [
            (config.similarity_weight, Some(self.similarity)),
            (config.success_weight, Some(self.success_rate)),
            (config.recency_weight, Some(self.recency)),
            (config.specificity_weight, Some(self.specificity)),
            (config.category_weight, self.category),
        ];
        let counted = || weighted.iter().filter_map(|&(weight, part)| part.map(|part| (weight.max(0.0), part)));
        let total: f64 = counted().map(|(weight, _)| weight).sum();
        if total <= 0.0 {
            return self.similarity;
        }
        counted().map(|(weight, part)| weight * part).sum::<f64>() / total
    }
}

/// The category part of an entry: 1 for the query's category, 0.5 for one
/// related to it.
pub fn category_match(entry_category: &str, wanted: &str, related: &[String]) -> f64 {
    if entry_category == wanted {
        1.0
    } else if related.iter().any(|category| category == entry_category) {
        0.5
    } else {
        0.0
    }
}

impl RankingConfig {
    /// The configured weight of a signal (the keyword signal's is scaled
    /// per query by [`keyword_confidence`]).
    pub fn signal_weight(&self, signal: Signal) -> f64 {
        match signal {
            Signal::Keyword => self.keyword_signal_weight,
            Signal::Fuzzy => self.fuzzy_signal_weight,
            Signal::Semantic => self.semantic_signal_weight,
            Signal::Symptom => self.symptom_signal_weight,
        }
        .max(0.0)
    }
}

/// One signal's candidates, best first, with the weight it has in the
/// fusion for this query.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalList {
    pub signal: Signal,
    pub weight: f64,
    pub candidates: Vec<Candidate>,
}

/// How far the keyword signal can be trusted for a query: the share of the
/// query's information (the summed IDF of its words, what a document
/// matching every word would score) that its best hit matched, in 0..=1.
/// An exact error message matches most of it; a loose description in other
/// words matches a little, and semantic similarity should lead.
pub fn keyword_confidence(top_score: f64, information: f64) -> f64 {
    if information > 0.0 && top_score.is_finite() { (top_score / information).clamp(0.0, 1.0) } else { 0.0 }
}

/// Weighted reciprocal rank fusion of the signals' lists (each best
/// first). The fused similarity is normalized by what rank 1 in every signal
/// that ran would give, so it is 1.0 only when all of them put the entry
/// first.
pub fn fuse(lists: &[SignalList], rrf_k: f64) -> Vec<(Uuid, f64, Vec<Reason>)> {
    let weight = |list: &SignalList| list.weight.max(0.0);
    let best: f64 = lists.iter().map(weight).sum::<f64>() / (rrf_k + 1.0);
    let mut fused: HashMap<Uuid, (f64, Vec<Reason>)> = HashMap::new();
    let mut order = Vec::new();
    for list in lists {
        for (index, candidate) in list.candidates.iter().enumerate() {
            let rank = index as u32 + 1;
            let slot = fused.entry(candidate.entry_id).or_insert_with(|| {
                order.push(candidate.entry_id);
                (0.0, Vec::new())
            });
            slot.0 += weight(list) / (rrf_k + f64::from(rank));
            slot.1.push(Reason {
                signal: list.signal,
                score: candidate.score,
                rank,
                matched_terms: candidate.matched_terms.clone(),
            });
        }
    }
    order
        .into_iter()
        .map(|entry_id| {
            let (rrf, reasons) = fused.remove(&entry_id).expect("inserted above");
            (entry_id, if best > 0.0 { (rrf / best).min(1.0) } else { 0.0 }, reasons)
        })
        .collect()
}

/// exp(-days / recency_days) since `at`.
pub fn recency(at: DateTime<Utc>, now: DateTime<Utc>, recency_days: f64) -> f64 {
    let days = (now - at).num_seconds().max(0) as f64 / 86_400.0;
    (-days / recency_days.max(f64::MIN_POSITIVE)).exp()
}

/// 1 / occurrences: a pattern that is everywhere says little about this
/// case. Never-seen entries count as one.
pub fn specificity(occurrences: i64) -> f64 {
    1.0 / occurrences.max(1) as f64
}

/// The relevance class of a fused similarity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relevance {
    High,
    Medium,
    Low,
    /// Under 0.5: one signal alone.
    Weak,
}

pub fn relevance(similarity: f64) -> Relevance {
    match similarity {
        s if s >= 0.8 => Relevance::High,
        s if s >= 0.6 => Relevance::Medium,
        s if s >= 0.5 => Relevance::Low,
        _ => Relevance::Weak,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(entry_id: Uuid) -> Candidate {
        Candidate { entry_id, score: 0.5, matched_terms: Vec::new() }
    }

    #[test]
    fn the_blend_is_point_four_three_two_one() {
        let parts = ScoreParts { similarity: 0.9, success_rate: 0.5, recency: 0.25, specificity: 1.0, category: None };
        let expected = 0.4 * 0.9 + 0.3 * 0.5 + 0.2 * 0.25 + 0.1 * 1.0;
        assert!((parts.score(&RankingConfig::default()) - expected).abs() < 1e-12);
        // Weights that do not sum to one are normalized.
        let doubled = RankingConfig {
            similarity_weight: 0.8,
            success_weight: 0.6,
            recency_weight: 0.4,
            specificity_weight: 0.2,
            ..RankingConfig::default()
        };
        assert!((parts.score(&doubled) - expected).abs() < 1e-12);
        // A query category adds its part, weighted 0.2.
        let related = ScoreParts { category: Some(0.5), ..parts };
        let expected = (0.4 * 0.9 + 0.3 * 0.5 + 0.2 * 0.25 + 0.1 * 1.0 + 0.2 * 0.5) / 1.2;
        assert!((related.score(&RankingConfig::default()) - expected).abs() < 1e-12);
        let related_categories = ["ci".to_owned(), "build".to_owned()];
        assert_eq!(category_match("database", "database", &related_categories), 1.0);
        assert_eq!(category_match("ci", "database", &related_categories), 0.5);
        assert_eq!(category_match("frontend", "database", &related_categories), 0.0);
    }

    fn list(signal: Signal, weight: f64, ids: &[Uuid]) -> SignalList {
        SignalList { signal, weight, candidates: ids.iter().copied().map(candidate).collect() }
    }

    #[test]
    fn fusion_rewards_agreement_and_rank() {
        let (a, b, c) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
        let lists = vec![
            list(Signal::Keyword, 1.0, &[a, b]),
            list(Signal::Fuzzy, 1.0, &[a]),
            list(Signal::Semantic, 1.0, &[a, c, b]),
        ];
        let fused: HashMap<Uuid, f64> =
            fuse(&lists, 60.0).into_iter().map(|(id, similarity, _)| (id, similarity)).collect();
        assert!((fused[&a] - 1.0).abs() < 1e-12, "first everywhere is 1.0");
        let expected_b = (1.0 / 62.0 + 1.0 / 63.0) / (3.0 / 61.0);
        assert!((fused[&b] - expected_b).abs() < 1e-12);
        assert!(fused[&b] > fused[&c], "two signals beat one");
        assert_eq!(relevance(fused[&a]), Relevance::High);
        assert_eq!(relevance(fused[&b]), Relevance::Medium, "two signals near the top");
        assert_eq!(relevance(fused[&c]), Relevance::Weak);
    }

    #[test]
    fn a_weighted_signal_counts_by_its_weight() {
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        // Semantic twice the keyword weight: semantic's first wins even
        // though keyword put it second.
        let lists = vec![list(Signal::Keyword, 1.0, &[b, a]), list(Signal::Semantic, 2.0, &[a, b])];
        let fused = fuse(&lists, 5.0);
        let similarity = |id: Uuid| fused.iter().find(|(entry, _, _)| *entry == id).unwrap().1;
        assert!((similarity(a) - (1.0 / 7.0 + 2.0 / 6.0) / (3.0 / 6.0)).abs() < 1e-12);
        assert!((similarity(b) - (1.0 / 6.0 + 2.0 / 7.0) / (3.0 / 6.0)).abs() < 1e-12);
        assert!(similarity(a) > similarity(b));
    }

    #[test]
    fn keyword_confidence_is_the_share_of_the_query_the_best_hit_matched() {
        assert_eq!(keyword_confidence(3.0, 4.0), 0.75);
        assert_eq!(keyword_confidence(5.0, 4.0), 1.0, "synonym phrases can add more than the words hold");
        assert_eq!(keyword_confidence(1.0, 0.0), 0.0);
        assert_eq!(keyword_confidence(f64::NAN, 1.0), 0.0);
    }

    #[test]
    fn recency_halves_in_about_three_weeks_and_specificity_is_one_over_occurrences() {
        let now = Utc::now();
        assert!((recency(now, now, 30.0) - 1.0).abs() < 1e-9);
        let month = recency(now - chrono::Duration::days(30), now, 30.0);
        assert!((month - (-1.0f64).exp()).abs() < 1e-6);
        assert_eq!(specificity(0), 1.0);
        assert_eq!(specificity(4), 0.25);
    }
}
