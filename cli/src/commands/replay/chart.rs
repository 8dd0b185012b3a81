//! The SVG chart of `lore eval replay`: coverage of recurring failures as
//! runs accumulate, Lore's warnings at the call against the naive briefing.

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

/// The chart for `points` (any order; sorted by start here).
pub fn svg(points: &[RunPoint], title: &str) -> String {
    let mut points = points.to_vec();
    points.sort_by_key(|point| point.start);
    let runs = points.len().max(1) as f64;
    let x = |run: usize| LEFT + (WIDTH - LEFT - RIGHT) * run as f64 / runs;
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
    for tick in 0..=4 {
        let run = points.len() * tick / 4;
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{run}</text>"#,
            x(run),
            HEIGHT - BOTTOM + 16.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">runs replayed, in the order they started ({})</text>"#,
        (LEFT + WIDTH - RIGHT) / 2.0,
        HEIGHT - 10.0,
        points.len()
    );
    let _ = writeln!(
        out,
        r#"<text transform="translate(14 {}) rotate(-90)" text-anchor="middle">share of recurring failures warned of</text>"#,
        (TOP + HEIGHT - BOTTOM) / 2.0
    );
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

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
