//! Markdown shown in the console (reports, lessons, drafts, promotions) is
//! written by agents and so is attacker-controlled: raw HTML in it is shown
//! as text, and links may only point to http(s), mail or this site.

use pulldown_cmark::{Alignment, CowStr, Event, Options, Parser, Tag};

pub fn to_html(markdown: &str) -> String {
    let parser =
        Parser::new_ext(markdown, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(|event| match event {
            Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
            // Column alignment would become a style attribute, which the
            // console's policy refuses.
            Event::Start(Tag::Table(alignments)) => Event::Start(Tag::Table(vec![Alignment::None; alignments.len()])),
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                Event::Start(Tag::Link { link_type, dest_url: safe_url(dest_url), title, id })
            }
            Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                Event::Start(Tag::Image { link_type, dest_url: safe_url(dest_url), title, id })
            }
            other => other,
        });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, parser);
    html
}

fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lower = url.trim().to_ascii_lowercase();
    let allowed = ["http://", "https://", "mailto:", "/", "#"].iter().any(|prefix| lower.starts_with(prefix))
        || !lower.contains(':');
    if allowed { url } else { CowStr::Borrowed("#") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_text_and_script_links_go_nowhere() {
        let html =
            to_html("# T\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1))");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains(r##"href="#""##), "{html}");
        assert!(to_html("[ok](https://example.com)").contains("https://example.com"));
        assert!(!to_html("| a | b |\n|--:|:-:|\n| 1 | 2 |").contains("style="));
    }
}
