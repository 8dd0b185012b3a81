//! Shell lines read as a shell reads them, tolerantly: text that holds a
//! command is mostly prose around it, with apostrophes that open no
//! quote, sentences that end in a dot and code spans in backticks. The
//! shell-splitting crates (shlex, shell-words) split one well-formed line
//! into words and fail on the rest; here a line of prose must still give
//! the commands in it, with where each starts, its pipes and its `$(…)`.

/// A word of a command line, quotes removed, where it starts in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub start: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Word(Word),
    /// `|`: the next command reads this one's output.
    Pipe,
    /// `;`, `&&`, `||`, `&`, a backtick, a line's or a sentence's end:
    /// what follows is another command, or prose.
    End,
}

/// The tokens of `text`; `offset` is where `text` starts in the text the
/// positions refer to.
pub fn tokens(text: &str, offset: usize) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut start = 0;
    let mut at = 0;
    let flush = |word: &mut String, start: usize, tokens: &mut Vec<Token>| {
        if word.is_empty() {
            return;
        }
        // A sentence's punctuation closes the word and the command.
        let trimmed = word.trim_end_matches(['.', ',', ':', '!', '?']);
        if !trimmed.is_empty() {
            tokens.push(Token::Word(Word { text: trimmed.to_owned(), start: offset + start }));
        }
        if trimmed.len() < word.len() {
            tokens.push(Token::End);
        }
        word.clear();
    };
    while at < bytes.len() {
        let character = text[at..].chars().next().unwrap_or(' ');
        let width = character.len_utf8();
        match character {
            ' ' | '\t' | '\r' => {
                flush(&mut word, start, &mut tokens);
                at += width;
            }
            '\n' | '`' | ';' | '(' | ')' | '{' | '}' if !(character == '(' && word.ends_with(['$', '<'])) => {
                flush(&mut word, start, &mut tokens);
                tokens.push(Token::End);
                at += width;
            }
            '|' | '&' => {
                flush(&mut word, start, &mut tokens);
                let doubled = text[at + 1..].starts_with(character);
                tokens.push(if character == '|' && !doubled { Token::Pipe } else { Token::End });
                at += if doubled { 2 } else { 1 };
            }
            '(' => {
                // `$(…)` and `<(…)`: one word holding the inner command,
                // read again by the rules that care what it runs.
                let close = matching_paren(text, at);
                if word.is_empty() {
                    start = at;
                }
                word.push_str(&text[at..close]);
                at = close;
            }
            '\'' | '"' if word.is_empty() || word.ends_with('=') => {
                // A quote opens only where a word starts or a value does:
                // the apostrophe of "don't" opens nothing.
                match text[at + 1..].find(character).filter(|&end| !text[at + 1..at + 1 + end].contains('\n')) {
                    Some(end) => {
                        if word.is_empty() {
                            start = at;
                        }
                        word.push_str(&text[at + 1..at + 1 + end]);
                        at += end + 2;
                    }
                    None => {
                        if word.is_empty() {
                            start = at;
                        }
                        at += width;
                    }
                }
            }
            _ => {
                if word.is_empty() {
                    start = at;
                }
                word.push(character);
                at += width;
            }
        }
    }
    flush(&mut word, start, &mut tokens);
    tokens
}

/// The byte after the `)` that closes the `(` at `open`, or the line's end.
fn matching_paren(text: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (index, character) in text[open..].char_indices() {
        match character {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return open + index + 1;
                }
            }
            '\n' => return open + index,
            _ => {}
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        tokens(text, 0)
            .into_iter()
            .map(|token| match token {
                Token::Word(word) => word.text,
                Token::Pipe => "|".to_owned(),
                Token::End => "⏎".to_owned(),
            })
            .collect()
    }

    #[test]
    fn a_line_splits_as_a_shell_splits_it_and_prose_around_it_does_not_break_it() {
        assert_eq!(words("curl -fsSL https://x.sh|bash"), ["curl", "-fsSL", "https://x.sh", "|", "bash"]);
        assert_eq!(
            words("git commit -m \"fix: a | b\" && git push"),
            ["git", "commit", "-m", "fix: a | b", "⏎", "git", "push"]
        );
        assert_eq!(words("bash -c \"$(curl -fsSL x)\""), ["bash", "-c", "$(curl -fsSL x)"]);
        assert_eq!(words("don't run `chmod 777 x`."), ["don't", "run", "⏎", "chmod", "777", "x", "⏎", "⏎"]);
        assert_eq!(words("set X=\"a b\" now."), ["set", "X=a b", "now", "⏎"]);
    }
}
