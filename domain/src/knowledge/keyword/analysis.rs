//! How text becomes terms, the same for entries and for queries.
//!
//! Words are runs of letters and digits, with identifiers split where their
//! case changes (`readFileLines` -> read, file, lines; `HTTPServer` -> http,
//! server; `os.path.isfile` -> os, path, isfile), lowercased. The text
//! fields then drop English stop words and keep stems (`inserting` ->
//! `insert`); the plain-words field keeps words as written, for typo
//! matching; symptom tokens are taken as given (already normalized, see
//! [`crate::knowledge::symptoms`]).

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, StopWordFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
    WhitespaceTokenizer,
};

/// Stemmed words without stop words: titles, summaries, bodies.
pub const TEXT: &str = "lore_text";
/// Lowercased words as written: typo matching.
pub const WORDS: &str = "lore_words";
/// Space-separated tokens as given: symptoms.
pub const TOKENS: &str = "lore_tokens";

/// Longer "words" are data (hashes, base64), never a query term.
const LONGEST_WORD: usize = 64;

/// Byte ranges of the words of `text`: runs of letters and digits, split
/// where an identifier's case changes.
pub fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut index = 0;
    while index < chars.len() {
        if !chars[index].1.is_alphanumeric() {
            index += 1;
            continue;
        }
        let mut start = index;
        let mut end = index + 1;
        while end < chars.len() && chars[end].1.is_alphanumeric() {
            let (before, here) = (chars[end - 1].1, chars[end].1);
            let next_is_lower = chars.get(end + 1).is_some_and(|(_, next)| next.is_lowercase());
            let boundary = here.is_uppercase()
                && ((before.is_lowercase() || before.is_ascii_digit()) || (before.is_uppercase() && next_is_lower));
            if boundary {
                spans.push((chars[start].0, chars[end].0));
                start = end;
            }
            end += 1;
        }
        let stop = chars.get(end).map_or(text.len(), |(offset, _)| *offset);
        spans.push((chars[start].0, stop));
        index = end;
    }
    spans
}

/// The words of `text`, lowercased, in order.
pub fn words(text: &str) -> Vec<String> {
    word_spans(text).into_iter().map(|(start, end)| text[start..end].to_lowercase()).collect()
}

/// [`word_spans`] as a tantivy tokenizer.
#[derive(Debug, Clone, Default)]
pub struct CodeWords {
    tokens: Vec<Token>,
}

pub struct CodeWordsStream<'a> {
    tokens: &'a mut [Token],
    next: usize,
}

impl Tokenizer for CodeWords {
    type TokenStream<'a> = CodeWordsStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        self.tokens.clear();
        for (position, (start, end)) in word_spans(text).into_iter().enumerate() {
            self.tokens.push(Token {
                offset_from: start,
                offset_to: end,
                position,
                text: text[start..end].to_owned(),
                position_length: 1,
            });
        }
        CodeWordsStream { tokens: &mut self.tokens, next: 0 }
    }
}

impl TokenStream for CodeWordsStream<'_> {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

/// The query's words and the synonym phrases they bring in.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Expansion {
    /// Lowercased alphanumeric words of the query, deduplicated.
    pub words: Vec<String>,
    /// Synonyms and expansions added (each a phrase of such words).
    pub phrases: Vec<String>,
    /// For each phrase, the words of the query it stands for: an
    /// alternative to them, which must not count more than they do.
    pub sources: Vec<String>,
}

/// Expands the query with synonyms both ways: a term brings its expansion
/// ("rls" -> "row level security") and an expansion its term.
pub fn expand(text: &str, synonyms: &[(String, String)]) -> Expansion {
    let all_words = words(text);
    let mut expansion = Expansion::default();
    for word in &all_words {
        if !expansion.words.contains(word) && expansion.words.len() < 64 {
            expansion.words.push(word.clone());
        }
    }
    for (term, meaning) in synonyms {
        let (term, meaning) = (words(term), words(meaning));
        let contains =
            |needle: &[String]| !needle.is_empty() && all_words.windows(needle.len()).any(|window| window == needle);
        for (found, alternative) in [(&term, &meaning), (&meaning, &term)] {
            let phrase = alternative.join(" ");
            if contains(found)
                && !phrase.is_empty()
                && !expansion.words.contains(&phrase)
                && !expansion.phrases.contains(&phrase)
            {
                expansion.phrases.push(phrase);
                expansion.sources.push(found.join(" "));
            }
        }
    }
    expansion
}

/// The analyzers, by name, as the index registers them.
pub fn analyzers() -> [(&'static str, TextAnalyzer); 3] {
    let stop_words = StopWordFilter::new(Language::English).expect("tantivy ships English stop words");
    [
        (
            TEXT,
            TextAnalyzer::builder(CodeWords::default())
                .filter(RemoveLongFilter::limit(LONGEST_WORD))
                .filter(LowerCaser)
                .filter(stop_words)
                .filter(Stemmer::new(Language::English))
                .build(),
        ),
        (
            WORDS,
            TextAnalyzer::builder(CodeWords::default())
                .filter(RemoveLongFilter::limit(LONGEST_WORD))
                .filter(LowerCaser)
                .build(),
        ),
        (TOKENS, TextAnalyzer::builder(WhitespaceTokenizer::default()).build()),
    ]
}

/// The terms `analyzer` makes of `text`, in order.
pub fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        terms.push(stream.token().text.clone());
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyzed(name: &str, text: &str) -> Vec<String> {
        let mut analyzer = analyzers().into_iter().find(|(known, _)| *known == name).unwrap().1;
        terms(&mut analyzer, text)
    }

    fn synonyms() -> Vec<(String, String)> {
        [("rls", "row level security"), ("auth", "authentication"), ("db", "database")]
            .map(|(term, expansion)| (term.to_owned(), expansion.to_owned()))
            .to_vec()
    }

    #[test]
    fn synonyms_expand_both_ways_and_remember_what_they_stand_for() {
        let expansion = expand("Row level security blocks INSERT", &synonyms());
        assert_eq!(expansion.words, ["row", "level", "security", "blocks", "insert"]);
        assert_eq!(
            (expansion.phrases, expansion.sources),
            (vec!["rls".to_owned()], vec!["row level security".to_owned()])
        );
        let expansion = expand("RLS policy; auth fails", &synonyms());
        assert_eq!(expansion.phrases, ["row level security", "authentication"]);
        assert_eq!(expansion.sources, ["rls", "auth"]);
    }

    #[test]
    fn query_words_are_plain_lowercase_alphanumerics_once_each() {
        let expansion = expand("a & b | !C <-> (d):* 'e' a", &[]);
        assert_eq!(expansion.words, ["a", "b", "c", "d", "e"]);
        assert!(expand("   ", &[]).words.is_empty());
    }

    #[test]
    fn identifiers_split_where_their_case_changes() {
        assert_eq!(
            words("os.path.isfile readFileLines HTTPServer snake_case v2Beta"),
            ["os", "path", "isfile", "read", "file", "lines", "http", "server", "snake", "case", "v2", "beta"]
        );
        assert_eq!(words("a & b | !C <-> (d):* 'e' a"), ["a", "b", "c", "d", "e", "a"]);
        assert_eq!(words("Ünïcode wörds"), ["ünïcode", "wörds"]);
        assert!(words("   ").is_empty());
    }

    #[test]
    fn text_is_stemmed_without_stop_words_and_words_stay_as_written() {
        assert_eq!(analyzed(TEXT, "Inserting rows is DENIED by the policies"), ["insert", "row", "deni", "polici"]);
        assert_eq!(analyzed(WORDS, "Authentication failed"), ["authentication", "failed"]);
        assert_eq!(analyzed(TOKENS, "ts2307 cannot find module"), ["ts2307", "cannot", "find", "module"]);
        assert!(analyzed(TEXT, &"x".repeat(100)).is_empty(), "a data blob is not a word");
    }
}
