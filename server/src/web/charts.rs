//! SVG charts drawn on the server: no script, no inline style (colours come
//! from classes in the stylesheet), and every mark carries a `<title>` so a
//! pointer or a screen reader gets the exact figure.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

const WIDTH: f64 = 720.0;
const PLOT_LEFT: f64 = 44.0;
const PLOT_RIGHT: f64 = 8.0;
const PLOT_TOP: f64 = 10.0;
const AXIS_HEIGHT: f64 = 22.0;

/// One stacked layer of a bar chart.
pub struct Series<'a> {
    pub name: &'a str,
    /// A stylesheet class that colours the layer.
    pub class: &'a str,
    pub values: Vec<f64>,
}

fn round_up(value: f64) -> f64 {
    if value <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|step| step * magnitude).find(|top| *top >= value).unwrap_or(value)
}

fn legend(series: &[Series<'_>]) -> Markup {
    html! {
        ul.legend {
            @for layer in series { li { span class={ "swatch " (layer.class) } {} (layer.name) } }
        }
    }
}

/// Vertical bars, one per label, stacked from the series.
pub fn stacked_bars(title: &str, labels: &[String], series: &[Series<'_>], height: f64) -> Markup {
    let totals: Vec<f64> =
        (0..labels.len()).map(|index| series.iter().map(|layer| layer.values[index]).sum()).collect();
    let top = round_up(totals.iter().copied().fold(0.0, f64::max));
    let plot_height = height - PLOT_TOP - AXIS_HEIGHT;
    let plot_width = WIDTH - PLOT_LEFT - PLOT_RIGHT;
    let slot = plot_width / labels.len().max(1) as f64;
    let bar = (slot * 0.72).max(1.0);
    let every = (labels.len() / 12).max(1);
    let scale = |value: f64| value / top * plot_height;
    html! {
        figure.chart {
            svg viewBox={ "0 0 " (WIDTH) " " (height) } role="img" aria-label=(title) {
                title { (title) }
                @for fraction in [0.0, 0.5, 1.0] {
                    @let y = PLOT_TOP + plot_height - fraction * plot_height;
                    line.grid x1=(PLOT_LEFT) x2=(WIDTH - PLOT_RIGHT) y1=(y) y2=(y) {}
                    text.axis x=(PLOT_LEFT - 6.0) y=(y + 4.0) text-anchor="end" { (short_number(top * fraction)) }
                }
                @for (index, label) in labels.iter().enumerate() {
                    @let x = PLOT_LEFT + index as f64 * slot + (slot - bar) / 2.0;
                    g {
                        title { (label) ": " (series_summary(series, index)) }
                        @for (class, y, size) in stack(series, index, PLOT_TOP + plot_height, scale) {
                            rect class=(class) x=(x) y=(y) width=(bar) height=(size) {}
                        }
                    }
                    @if index % every == 0 {
                        text.axis x=(x + bar / 2.0) y=(height - 6.0) text-anchor="middle" { (label) }
                    }
                }
            }
            (legend(series))
        }
    }
}

/// The rectangles of one bar, bottom layer first: (class, top, height).
fn stack<'a>(
    series: &'a [Series<'a>],
    index: usize,
    bottom: f64,
    scale: impl Fn(f64) -> f64,
) -> Vec<(&'a str, f64, f64)> {
    let mut base = bottom;
    let mut rectangles = Vec::new();
    for layer in series {
        let size = scale(layer.values[index]);
        if size > 0.0 {
            base -= size;
            rectangles.push((layer.class, base, size));
        }
    }
    rectangles
}

fn series_summary(series: &[Series<'_>], index: usize) -> String {
    series
        .iter()
        .map(|layer| format!("{} {}", short_number(layer.values[index]), layer.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Horizontal bars, one row each: (label, value, link).
pub fn horizontal_bars(title: &str, rows: &[(String, f64, Option<String>)], class: &str) -> Markup {
    let top = rows.iter().map(|(_, value, _)| *value).fold(0.0, f64::max).max(1.0);
    let row_height = 24.0;
    let label_width = 220.0;
    let height = row_height * rows.len().max(1) as f64 + 4.0;
    let bar_room = WIDTH - label_width - 60.0;
    html! {
        figure.chart {
            svg viewBox={ "0 0 " (WIDTH) " " (height) } role=(if rows.iter().any(|(_, _, link)| link.is_some()) { "group" } else { "img" }) aria-label=(title) {
                title { (title) }
                @for (index, (label, value, link)) in rows.iter().enumerate() {
                    @let y = index as f64 * row_height + 2.0;
                    @let width = value / top * bar_room;
                    g {
                        title { (label) ": " (short_number(*value)) }
                        @if let Some(link) = link {
                            a href=(link) { text.label x="0" y=(y + 16.0) { (clip(label, 34)) } }
                        } @else {
                            text.label x="0" y=(y + 16.0) { (clip(label, 34)) }
                        }
                        rect class=(class) x=(label_width) y=(y + 3.0) width=(width.max(1.0)) height=(row_height - 8.0) {}
                        text.axis x=(label_width + width + 6.0) y=(y + 16.0) { (short_number(*value)) }
                    }
                }
            }
        }
    }
}

/// A rate with its interval on a 0–100 % scale.
pub fn interval(label: &str, rate: f64, low: f64, high: f64, class: &str) -> Markup {
    let left = 150.0;
    let room = WIDTH - left - 120.0;
    let x = |share: f64| left + share.clamp(0.0, 1.0) * room;
    let text = format!("{:.0}% (interval {:.0}–{:.0}%)", rate * 100.0, low * 100.0, high * 100.0);
    html! {
        svg.interval viewBox={ "0 0 " (WIDTH) " 30" } role="img" aria-label={ (label) ": " (text) } {
            title { (label) ": " (text) }
            text.label x="0" y="19" { (label) }
            line.grid x1=(x(0.0)) x2=(x(1.0)) y1="15" y2="15" {}
            rect class=(class) x=(x(low)) y="8" width=((x(high) - x(low)).max(2.0)) height="14" rx="3" {}
            circle.point cx=(x(rate)) cy="15" r="5" {}
            text.axis x=(x(1.0) + 8.0) y="19" { (format!("{:.0}%", rate * 100.0)) }
        }
    }
}

/// One row of a timeline.
pub struct Span<'a> {
    pub label: String,
    pub link: String,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub class: &'a str,
}

/// Spans over the window `[from, until)`, one row each.
pub fn timeline(title: &str, spans: &[Span<'_>], from: DateTime<Utc>, until: DateTime<Utc>) -> Markup {
    let label_width = 200.0;
    let room = WIDTH - label_width - 8.0;
    let row_height = 20.0;
    let height = row_height * spans.len().max(1) as f64 + AXIS_HEIGHT;
    let window = (until - from).num_seconds().max(1) as f64;
    let x = |at: DateTime<Utc>| label_width + ((at - from).num_seconds() as f64 / window).clamp(0.0, 1.0) * room;
    html! {
        figure.chart {
            svg viewBox={ "0 0 " (WIDTH) " " (height) } role="group" aria-label=(title) {
                title { (title) }
                @for (index, span) in spans.iter().enumerate() {
                    @let y = index as f64 * row_height;
                    g {
                        title { (span.label) ": " (span.start.format("%Y-%m-%d %H:%M")) " to " (span.end.format("%Y-%m-%d %H:%M")) }
                        a href=(span.link) { text.label x="0" y=(y + 14.0) { (clip(&span.label, 28)) } }
                        rect class=(span.class) x=(x(span.start)) y=(y + 4.0) width=((x(span.end) - x(span.start)).max(3.0)) height=(row_height - 8.0) rx="2" {}
                    }
                }
                text.axis x=(label_width) y=(height - 6.0) { (from.format("%m-%d %H:%M")) }
                text.axis x=(WIDTH - 8.0) y=(height - 6.0) text-anchor="end" { (until.format("%m-%d %H:%M")) }
            }
        }
    }
}

fn clip(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_owned();
    }
    let mut clipped: String = text.chars().take(chars - 1).collect();
    clipped.push('…');
    clipped
}

/// 1234 as "1.2k", keeping small and fractional values readable.
pub fn short_number(value: f64) -> String {
    match value.abs() {
        v if v >= 1_000_000.0 => format!("{:.1}M", value / 1_000_000.0),
        v if v >= 10_000.0 => format!("{:.0}k", value / 1_000.0),
        v if v >= 1_000.0 => format!("{:.1}k", value / 1_000.0),
        v if v.fract() == 0.0 => format!("{value:.0}"),
        _ => format!("{value:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_round_up_to_a_readable_top() {
        assert_eq!(round_up(0.0), 1.0);
        assert_eq!(round_up(7.0), 10.0);
        assert_eq!(round_up(130.0), 200.0);
        assert_eq!(round_up(2_400.0), 2_500.0);
    }

    #[test]
    fn labels_inside_a_chart_are_escaped() {
        let rows = vec![("<script>alert(1)</script>".to_owned(), 3.0, None)];
        let svg = horizontal_bars("t", &rows, "bar").into_string();
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"));
    }
}
