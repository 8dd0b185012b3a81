//! The SVG charts of `lore eval replay`: coverage of recurring failures as
//! runs accumulate, Lore's warnings against the naive briefing; and what
//! coverage each setting buys for its tokens.

use std::fmt::Write as _;

use super::simulate::RunPoint;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 44.0;

/// Cumulative coverage after each run, in the runs' start order.
fn series(points: &[RunPoint], covered: impl Fn(&RunPoint) -> u64) -> Vec<(usize, f64)> {
    let (mut recurring, mut hit) = (0u64, 0u64);
    let mut line = Vec::new();
    for (index, point) in points.iter().enumerate() {
        recurring += point.recurring;
        hit += covered(point);
        if recurring > 0 {
            line.push((index + 1, hit as f64 / recurring as f64));
        }
    }
    line
}

/// The frame of a chart: white ground, title, the y axis as shares from
/// 0 to 1 with its label, the x axis's ticks (position, text) and label.
fn frame(title: &str, x_ticks: &[(f64, String)], x_label: &str, y_label: &str) -> String {
    let y = |share: f64| TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - share);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(out, r#"<text x="{LEFT}" y="18" font-size="14">{}</text>"#, escape(title));
    for tick in 0..=4 {
        let share = f64::from(tick) / 4.0;
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{y}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{share:.2}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y(share) + 4.0,
            y = y(share),
        );
    }
    for (at, text) in x_ticks {
        let _ = writeln!(out, r#"<text x="{at:.1}" y="{}" text-anchor="middle">{text}</text>"#, HEIGHT - BOTTOM + 16.0);
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (LEFT + WIDTH - RIGHT) / 2.0,
        HEIGHT - 10.0,
        escape(x_label)
    );
    let _ = writeln!(
        out,
        r#"<text transform="translate(14 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (TOP + HEIGHT - BOTTOM) / 2.0,
        escape(y_label)
    );
    out
}

fn y_of(share: f64) -> f64 {
    TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - share)
}

/// The chart for `points` (any order; sorted by start here).
pub fn svg(points: &[RunPoint], title: &str) -> String {
    let mut points = points.to_vec();
    points.sort_by_key(|point| point.start);
    let runs = points.len().max(1) as f64;
    let x = |run: usize| LEFT + (WIDTH - LEFT - RIGHT) * run as f64 / runs;
    let y = y_of;
    let ticks: Vec<(f64, String)> = (0..=4)
        .map(|tick| {
            let run = points.len() * tick / 4;
            (x(run), run.to_string())
        })
        .collect();
    let x_label = format!("runs replayed, in the order they started ({})", points.len());
    let mut out = frame(title, &ticks, &x_label, "share of recurring failures warned of");
    let lines = [
        ("Lore, at the call", "#1f6feb", series(&points, |point| point.covered)),
        ("naive top-3 briefing", "#bc4c00", series(&points, |point| point.naive_covered)),
    ];
    for (index, (name, colour, line)) in lines.iter().enumerate() {
        let path: Vec<String> = line.iter().map(|(run, share)| format!("{:.1},{:.1}", x(*run), y(*share))).collect();
        let _ =
            writeln!(out, r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#, path.join(" "));
        let last = line.last().map_or(0.0, |(_, share)| *share);
        let label_y = TOP + 16.0 + 18.0 * index as f64;
        let _ = writeln!(
            out,
            r#"<line x1="{}" x2="{}" y1="{label_y}" y2="{label_y}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{name}: {last:.3}</text>"#,
            LEFT + 12.0,
            LEFT + 28.0,
            LEFT + 32.0,
            label_y + 4.0,
        );
    }
    out.push_str("</svg>\n");
    out
}

/// A point of the trade-off chart: what a setting (or a baseline) costs in
/// tokens a run, and the share of recurring failures it covers.
pub struct Choice {
    pub name: String,
    pub tokens: f64,
    pub coverage: f64,
    /// A baseline, drawn apart from Lore's settings.
    pub baseline: bool,
}

/// Coverage against tokens a run: one dot per setting of Lore's (a line
/// through them, fewest tokens first), one square per baseline.
pub fn trade_off_svg(choices: &[Choice], title: &str) -> String {
    let most = choices.iter().map(|choice| choice.tokens).fold(10.0_f64, f64::max);
    // A round top for the axis: 10, 20, 50, 100, 200...
    let top = [1.0, 2.0, 5.0]
        .iter()
        .flat_map(|step| (1..6).map(move |power| step * 10f64.powi(power)))
        .filter(|top| *top >= most)
        .fold(f64::INFINITY, f64::min);
    let x = |tokens: f64| LEFT + (WIDTH - LEFT - RIGHT) * tokens / top;
    let ticks: Vec<(f64, String)> =
        (0..=4).map(|tick| (x(top * f64::from(tick) / 4.0), format!("{:.0}", top * f64::from(tick) / 4.0))).collect();
    let mut out = frame(
        title,
        &ticks,
        "tokens injected a run (every later step pays them again)",
        "share of recurring failures warned of",
    );
    let mut lore: Vec<&Choice> = choices.iter().filter(|choice| !choice.baseline).collect();
    lore.sort_by(|a, b| a.tokens.total_cmp(&b.tokens));
    let path: Vec<String> =
        lore.iter().map(|choice| format!("{:.1},{:.1}", x(choice.tokens), y_of(choice.coverage))).collect();
    let _ =
        writeln!(out, r##"<polyline fill="none" stroke="#1f6feb" stroke-width="1.5" points="{}"/>"##, path.join(" "));
    for choice in choices {
        let (cx, cy) = (x(choice.tokens), y_of(choice.coverage));
        if choice.baseline {
            let _ = writeln!(
                out,
                r##"<rect x="{:.1}" y="{:.1}" width="9" height="9" fill="#bc4c00"/><text x="{:.1}" y="{:.1}">{}</text>"##,
                cx - 4.5,
                cy - 4.5,
                cx + 8.0,
                cy + 4.0,
                escape(&choice.name)
            );
        } else {
            let _ = writeln!(
                out,
                r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="3.5" fill="#1f6feb"><title>{}</title></circle>"##,
                escape(&choice.name)
            );
        }
    }
    let _ = writeln!(
        out,
        r##"<circle cx="{}" cy="{}" r="3.5" fill="#1f6feb"/><text x="{}" y="{}">Lore, one dot a setting of when to speak</text>"##,
        LEFT + 20.0,
        TOP + 16.0,
        LEFT + 32.0,
        TOP + 20.0
    );
    out.push_str("</svg>\n");
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
