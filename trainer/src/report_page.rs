//! The pieces of the HTML report that are drawn rather than tabulated, as pure functions of
//! text: learning curves from a run's `metrics.jsonl` (inline SVG: reward per update with the
//! designer stages and their decisions marked; policy loss, value loss, KL and entropy), and
//! the Markdown of `skills.md` as HTML tables.

use std::fmt::Write as _;

use crate::metrics::MetricsLine;

/// One line of a chart.
pub struct Line<'a> {
    pub name: &'a str,
    pub points: Vec<(f64, f64)>,
    pub color: &'a str,
}

/// A vertical marker (a designer stage) at `x` with a short label.
pub struct Mark {
    pub x: f64,
    pub label: String,
    /// Drawn dashed red (a rollback) instead of grey.
    pub alert: bool,
}

const W: f64 = 440.0;
const H: f64 = 200.0;
const PAD_L: f64 = 48.0;
const PAD_R: f64 = 12.0;
const PAD_T: f64 = 24.0;
const PAD_B: f64 = 28.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The data ranges of a chart and their mapping onto the plot area.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    /// The ranges of the finite points of `lines` (a flat range widened to 1 around it);
    /// `None` when there are no finite points.
    fn of(lines: &[Line]) -> Option<Frame> {
        let pts = lines
            .iter()
            .flat_map(|l| l.points.iter())
            .filter(|p| p.0.is_finite() && p.1.is_finite());
        let (mut x0, mut x1, mut y0, mut y1) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if !x0.is_finite() {
            return None;
        }
        if x1 - x0 < 1e-12 {
            x1 = x0 + 1.0;
        }
        if y1 - y0 < 1e-12 {
            (y0, y1) = (y0 - 0.5, y1 + 0.5);
        }
        Some(Frame { x0, x1, y0, y1 })
    }

    fn sx(&self, x: f64) -> f64 {
        PAD_L + (x - self.x0) / (self.x1 - self.x0) * (W - PAD_L - PAD_R)
    }

    fn sy(&self, y: f64) -> f64 {
        H - PAD_B - (y - self.y0) / (self.y1 - self.y0) * (H - PAD_T - PAD_B)
    }
}

/// A small line chart as an inline `<svg>` (finite points only; empty when there are none).
pub fn svg_chart(title: &str, lines: &[Line], marks: &[Mark]) -> String {
    let Some(f) = Frame::of(lines) else {
        return String::new();
    };
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{t}\">\
<text x=\"{PAD_L}\" y=\"15\" font-size=\"13\" font-weight=\"bold\">{t}</text>\
<rect x=\"{PAD_L}\" y=\"{PAD_T}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>",
        W - PAD_L - PAD_R,
        H - PAD_T - PAD_B,
        t = esc(title)
    );
    axis_labels(&mut s, &f);
    for m in marks {
        mark_line(&mut s, &f, m);
    }
    for (i, l) in lines.iter().enumerate() {
        polyline(&mut s, &f, l, i, lines.len() > 1);
    }
    s.push_str("</svg>");
    s
}

/// The y range's ends at the left, the x range's ends below.
fn axis_labels(s: &mut String, f: &Frame) {
    for (v, y) in [(f.y1, f.sy(f.y1)), (f.y0, f.sy(f.y0))] {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
            PAD_L - 4.0,
            y + 3.0,
            fmt_num(v)
        );
    }
    for (v, anchor) in [(f.x0, "start"), (f.x1, "end")] {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" font-size=\"10\" text-anchor=\"{anchor}\">{}</text>",
            f.sx(v),
            H - PAD_B + 14.0,
            fmt_num(v)
        );
    }
}

/// A vertical line at the mark's x with its label (red and dashed for an alert).
fn mark_line(s: &mut String, f: &Frame, m: &Mark) {
    let (color, dash) = if m.alert {
        ("#c0392b", " stroke-dasharray=\"4 3\"")
    } else {
        ("#888", "")
    };
    let x = f.sx(m.x);
    let _ = write!(
        s,
        "<line x1=\"{x:.1}\" y1=\"{PAD_T}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"{color}\"{dash}><title>{}</title></line>\
<text x=\"{:.1}\" y=\"{}\" font-size=\"9\" fill=\"{color}\">{}</text>",
        H - PAD_B,
        esc(&m.label),
        x + 2.0,
        PAD_T + 10.0,
        esc(&m.label)
    );
}

/// The `i`th line's finite points, and its name in the legend when `legend`.
fn polyline(s: &mut String, f: &Frame, l: &Line, i: usize, legend: bool) {
    let path: Vec<String> = l
        .points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .map(|&(x, y)| format!("{:.1},{:.1}", f.sx(x), f.sy(y)))
        .collect();
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" points=\"{}\"/>",
        l.color,
        path.join(" ")
    );
    if legend {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"{}\">{}</text>",
            W - PAD_R - 90.0,
            PAD_T + 12.0 + 12.0 * i as f64,
            l.color,
            esc(l.name)
        );
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e6 {
        // update numbers and other whole values
        format!("{v:.0}")
    } else if v.abs() >= 1000.0 || (v != 0.0 && v.abs() < 0.01) {
        format!("{v:.2e}")
    } else {
        format!("{v:.3}")
    }
}

/// The learning curves of a run from its `metrics.jsonl` text: reward per update (mean, min,
/// max) with each designer stage marked (its decision; rollbacks in red), then policy loss,
/// value loss, approximate KL and entropy. Unreadable lines are skipped; empty when there is
/// no update line.
pub fn learning_curves(metrics_jsonl: &str) -> String {
    let lines: Vec<MetricsLine> = metrics_jsonl
        .lines()
        .filter_map(|l| MetricsLine::parse(l).ok())
        .collect();
    let updates: Vec<_> = lines
        .iter()
        .filter_map(|l| match l {
            MetricsLine::Update(u) => Some(u),
            _ => None,
        })
        .collect();
    if updates.is_empty() {
        return String::new();
    }
    let marks: Vec<Mark> = lines
        .iter()
        .filter_map(|l| match l {
            MetricsLine::Stage(s) => Some(Mark {
                x: s.step as f64,
                label: format!("stage {}: {}", s.stage + 1, s.decision),
                alert: s.decision.contains("rollback") || s.decision.contains("rolled"),
            }),
            _ => None,
        })
        .collect();
    let series = |f: &dyn Fn(&crate::metrics::UpdateMetrics) -> f64| -> Vec<(f64, f64)> {
        updates.iter().map(|u| (u.step as f64, f(u))).collect()
    };
    let mut out = String::from("<div class=\"curves\">");
    out.push_str(&svg_chart(
        "reward per update",
        &[
            Line {
                name: "mean",
                points: series(&|u| u.reward),
                color: "#1f77b4",
            },
            Line {
                name: "min",
                points: series(&|u| u.reward_min),
                color: "#aec7e8",
            },
            Line {
                name: "max",
                points: series(&|u| u.reward_max),
                color: "#7fb3d5",
            },
        ],
        &marks,
    ));
    type Pick = dyn Fn(&crate::metrics::UpdateMetrics) -> f64;
    let small: [(&str, &Pick, &str); 4] = [
        ("policy loss", &|u| u.policy_loss as f64, "#d62728"),
        ("value loss", &|u| u.value_loss as f64, "#9467bd"),
        ("approximate KL", &|u| u.approx_kl as f64, "#2ca02c"),
        ("entropy", &|u| u.entropy as f64, "#ff7f0e"),
    ];
    for (title, f, color) in small {
        out.push_str(&svg_chart(
            title,
            &[Line {
                name: title,
                points: series(f),
                color,
            }],
            &marks,
        ));
    }
    out.push_str("</div>");
    out
}

/// Markdown as written by `skills.md` (headings, pipe tables with `\|` escapes and `<br>`
/// line breaks in cells, paragraphs) as HTML; everything else is escaped text.
pub fn markdown_html(md: &str) -> String {
    let mut out = String::new();
    let mut table: Vec<Vec<String>> = Vec::new();
    let flush = |table: &mut Vec<Vec<String>>, out: &mut String| {
        if table.is_empty() {
            return;
        }
        out.push_str("<table>");
        for (i, row) in table.iter().enumerate() {
            out.push_str("<tr>");
            for c in row {
                let cell = esc(c).replace("&lt;br&gt;", "<br>");
                if i == 0 {
                    let _ = write!(out, "<th>{cell}</th>");
                } else {
                    let _ = write!(out, "<td>{cell}</td>");
                }
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>\n");
        table.clear();
    };
    for line in md.lines() {
        let t = line.trim();
        if t.starts_with('|') {
            let cells = split_row(t);
            if !cells
                .iter()
                .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':')))
            {
                table.push(cells);
            }
            continue;
        }
        flush(&mut table, &mut out);
        if t.is_empty() {
            continue;
        }
        let level = t.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&level) && t[level..].starts_with(' ') {
            let l = (level + 2).min(6);
            let _ = writeln!(out, "<h{l}>{}</h{l}>", esc(t[level..].trim()));
        } else {
            let _ = writeln!(out, "<p>{}</p>", esc(t));
        }
    }
    flush(&mut table, &mut out);
    out
}

/// The cells of a Markdown table row (`\|` is a literal bar).
fn split_row(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().expect("non-empty").push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().expect("non-empty").push(c),
        }
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// A row of a [`grouped_table_html`]: its label and its cells, each (text, link).
pub type GroupedRow = (String, Vec<(String, Option<String>)>);

/// A table whose columns come in groups (a dataset's F1, L-J, ...): two header rows, the
/// group names spanning their sub-columns; every cell `(text, link)`.
pub fn grouped_table_html(groups: &[(String, Vec<String>)], rows: &[GroupedRow]) -> String {
    let mut s = String::from("<table class=\"paper\"><tr><th rowspan=\"2\">Method</th>");
    for (g, subs) in groups {
        s.push_str(&format!(
            "<th colspan=\"{}\" style=\"text-align:center\">{}</th>",
            subs.len(),
            esc(g)
        ));
    }
    s.push_str("</tr>\n<tr>");
    for sub in groups.iter().flat_map(|(_, subs)| subs) {
        s.push_str(&format!("<th>{}</th>", esc(sub)));
    }
    s.push_str("</tr>\n");
    for (row, cells) in rows {
        s.push_str(&format!("<tr><th>{}</th>", esc(row)));
        for (text, link) in cells {
            match link {
                Some(l) => s.push_str(&format!(
                    "<td><a href=\"{}\">{}</a></td>",
                    esc(l),
                    esc(text)
                )),
                None => s.push_str(&format!("<td>{}</td>", esc(text))),
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_tables_become_html_tables_with_breaks_and_escapes() {
        let md =
            "# Skill bank\n\n| a | b |\n|---|---|\n| x<br>y | p \\| q <script> |\n\ntext & more\n";
        let h = markdown_html(md);
        assert!(h.contains("<h3>Skill bank</h3>"), "{h}");
        assert!(h.contains("<th>a</th><th>b</th>"), "{h}");
        assert!(
            h.contains("<td>x<br>y</td><td>p | q &lt;script&gt;</td>"),
            "{h}"
        );
        assert!(h.contains("<p>text &amp; more</p>"), "{h}");
        assert!(!h.contains("---"), "{h}");
    }

    #[test]
    fn charts_scale_points_and_skip_non_finite_ones() {
        let svg = svg_chart(
            "r",
            &[Line {
                name: "m",
                points: vec![(1.0, 0.0), (2.0, f64::NAN), (3.0, 1.0)],
                color: "#000",
            }],
            &[Mark {
                x: 2.0,
                label: "stage 1: rollback".into(),
                alert: true,
            }],
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        // x 1..3 -> 48..428, y 0..1 -> 172..24; the NaN point is left out.
        assert!(svg.contains("points=\"48.0,172.0 428.0,24.0\""), "{svg}");
        assert!(svg.contains("stroke-dasharray") && svg.contains("stage 1: rollback"));
        assert_eq!(svg_chart("e", &[], &[]), "");
    }
}

#[cfg(test)]
mod grouped_tests {
    #[test]
    fn column_groups_span_their_sub_columns_and_cells_link() {
        let groups = vec![
            (
                "locomo (test)".to_string(),
                vec!["F1".into(), "n (errors)".into()],
            ),
            (
                "alfworld (seen)".to_string(),
                vec!["SR".into(), "#Steps".into()],
            ),
        ];
        let rows = vec![(
            "memskill".to_string(),
            vec![
                (
                    "41.20 [39.0, 43.1]".to_string(),
                    Some("a/results.json".to_string()),
                ),
                ("50 (0)".to_string(), None),
                ("-".to_string(), None),
                ("-".to_string(), None),
            ],
        )];
        let h = super::grouped_table_html(&groups, &rows);
        assert!(h.contains("<th colspan=\"2\" style=\"text-align:center\">locomo (test)</th>"));
        assert!(h.contains("<th>#Steps</th>"));
        assert!(h.contains("<a href=\"a/results.json\">41.20 [39.0, 43.1]</a>"));
        assert_eq!(h.matches("<td").count(), 4);
    }
}
