//! The pieces of the HTML report that are drawn rather than tabulated, as pure functions of
//! text: learning curves from a run's `metrics.jsonl` (inline SVG: reward per update with the
//! designer stages and their decisions marked; policy loss, value loss, KL and entropy), and
//! the Markdown of `skills.md` as HTML tables.

use std::fmt::Write as _;

use crate::metrics::{MetricsLine, UpdateMetrics};
use crate::report_chart::{esc, na_chart, svg_chart, Axes, Line, Mark};

/// The learning curves of a run from its `metrics.jsonl` text: reward per update (mean, min,
/// max) with each designer stage marked (its decision; rollbacks in red), then policy loss,
/// value loss, approximate KL and entropy. Unreadable lines are skipped. A curve with nothing
/// to show is "n/a" in place of its chart: the reward without a finite value, a PPO quantity
/// that is zero (or not finite) at every update (a run whose policy never updates, such as
/// random skills); all four PPO quantities so are one line of text, as is a run without
/// update lines.
pub fn learning_curves(metrics_jsonl: &str) -> String {
    let lines: Vec<MetricsLine> = metrics_jsonl
        .lines()
        .filter_map(|l| MetricsLine::parse(l).ok())
        .collect();
    let updates: Vec<&UpdateMetrics> = lines
        .iter()
        .filter_map(|l| match l {
            MetricsLine::Update(u) => Some(u),
            _ => None,
        })
        .collect();
    if updates.is_empty() {
        return "<p class=\"note\">Learning curves: n/a (no update line in metrics.jsonl).</p>"
            .into();
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
    let mut out = String::from("<div class=\"curves\">");
    out.push_str(&reward_chart(&updates, &marks));
    out.push_str(&ppo_charts(&updates, &marks));
    out.push_str("</div>");
    out
}

type Pick = dyn Fn(&UpdateMetrics) -> f64;

/// A chart's title, points and colour.
type Curve<'a> = (&'a str, Vec<(f64, f64)>, &'a str);

/// `f` of every update against its step.
fn series(updates: &[&UpdateMetrics], f: &Pick) -> Vec<(f64, f64)> {
    updates.iter().map(|u| (u.step as f64, f(u))).collect()
}

/// Whether a curve has nothing to show: every value zero or not finite.
pub fn flat_zero(points: &[(f64, f64)]) -> bool {
    points.iter().all(|p| !p.1.is_finite() || p.1 == 0.0)
}

/// Reward per update: the mean solid over the minimum and maximum dashed.
fn reward_chart(updates: &[&UpdateMetrics], marks: &[Mark]) -> String {
    let picks: [(&str, &Pick, &str, bool); 3] = [
        ("mean", &|u| u.reward, "#1f77b4", false),
        ("min", &|u| u.reward_min, "#e6550d", true),
        ("max", &|u| u.reward_max, "#31a354", true),
    ];
    let lines: Vec<Line> = picks
        .into_iter()
        .map(|(name, f, color, dashed)| Line {
            name,
            points: series(updates, f),
            color,
            dashed,
        })
        .collect();
    let axes = Axes {
        title: "reward per update",
        x: "update",
        y: "reward",
    };
    match svg_chart(&axes, &lines, marks) {
        s if s.is_empty() => na_chart(axes.title, "no finite reward in metrics.jsonl"),
        s => s,
    }
}

/// Policy loss, value loss, approximate KL and entropy, each "n/a" when flat zero (one line
/// of text for all four when all are).
fn ppo_charts(updates: &[&UpdateMetrics], marks: &[Mark]) -> String {
    let picks: [(&str, &Pick, &str); 4] = [
        ("policy loss", &|u| f64::from(u.policy_loss), "#d62728"),
        ("value loss", &|u| f64::from(u.value_loss), "#9467bd"),
        ("approximate KL", &|u| f64::from(u.approx_kl), "#2ca02c"),
        ("entropy", &|u| f64::from(u.entropy), "#ff7f0e"),
    ];
    let curves: Vec<Curve> = picks
        .into_iter()
        .map(|(t, f, c)| (t, series(updates, f), c))
        .collect();
    if curves.iter().all(|(_, p, _)| flat_zero(p)) {
        return "<p class=\"note\">PPO curves (policy loss, value loss, KL, entropy): n/a, zero at every update (no policy update in this run).</p>".into();
    }
    let mut out = String::new();
    for (title, points, color) in curves {
        if flat_zero(&points) {
            out.push_str(&na_chart(title, "zero at every update"));
            continue;
        }
        let axes = Axes {
            title,
            x: "update",
            y: title,
        };
        let line = Line {
            name: title,
            points,
            color,
            dashed: false,
        };
        out.push_str(&svg_chart(&axes, &[line], marks));
    }
    out
}

/// Markdown as written by `skills.md` (headings, pipe tables with `\|` escapes and `<br>`
/// line breaks in cells, paragraphs) as HTML; everything else is escaped text. A bank
/// history written before `skills.md` listed changes only (every row with the whole bank) is
/// shown as changes too ([`history_as_changes`]).
pub fn markdown_html(md: &str) -> String {
    let mut out = String::new();
    let mut table: Vec<Vec<String>> = Vec::new();
    let flush = |table: &mut Vec<Vec<String>>, out: &mut String| {
        if table.is_empty() {
            return;
        }
        history_as_changes(table);
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

/// A bank-history table (header cells `bank version` and `skills`) whose `skills` column
/// lists the whole bank on every row, rewritten in place: the first row keeps its list, every
/// later one gets what changed since the row above (`crate::train::bank_changes`), and the
/// column is renamed `skills changed`. Any other table is left as it is.
pub fn history_as_changes(table: &mut [Vec<String>]) {
    let Some((header, rows)) = table.split_first_mut() else {
        return;
    };
    let Some(col) = header.iter().position(|h| h == "skills") else {
        return;
    };
    if !header.iter().any(|h| h == "bank version") {
        return;
    }
    header[col] = "skills changed".into();
    let mut before: Option<Vec<String>> = None;
    for row in rows.iter_mut() {
        let Some(cell) = row.get_mut(col) else {
            continue;
        };
        let skills: Vec<String> = cell
            .split("<br>")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if let Some(b) = &before {
            *cell = crate::train::bank_changes(b, &skills).join("<br>");
        }
        before = Some(skills);
    }
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
/// group names spanning their sub-columns; every cell `(text, link)`. Each `(i, title)` of
/// `sections` puts a row naming a group of methods before row `i`.
pub fn grouped_table_html(
    groups: &[(String, Vec<String>)],
    rows: &[GroupedRow],
    sections: &[(usize, String)],
) -> String {
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
    let width = 1 + groups.iter().map(|(_, subs)| subs.len()).sum::<usize>();
    for (i, (row, cells)) in rows.iter().enumerate() {
        s.push_str(&section_row(sections, i, width));
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

/// The row naming the group of methods that starts at row `i` (empty when none does), one
/// cell `width` columns wide.
pub fn section_row(sections: &[(usize, String)], i: usize, width: usize) -> String {
    sections
        .iter()
        .filter(|(at, _)| *at == i)
        .map(|(_, title)| {
            format!(
                "<tr class=\"group\"><th colspan=\"{width}\">{}</th></tr>\n",
                esc(title)
            )
        })
        .collect()
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
    fn an_old_history_table_shows_changes_only() {
        let md = "| stage | update | event | reward | bank version | skills | note |\n|---|---|---|---|---|---|---|\n| 0 | 0 | start | - | 0 | a@1 (active)<br>b@1 (active) |  |\n| 0 | 4 | improved | 0.2 | 0 | a@1 (active)<br>b@1 (active) |  |\n| 1 | 4 | designed | - | 1 | a@2 (active)<br>b@1 (active)<br>c@1 (candidate) | x |\n";
        let h = markdown_html(md);
        assert!(h.contains("<th>skills changed</th>"), "{h}");
        assert!(h.contains("<td>a@1 (active)<br>b@1 (active)</td>"), "{h}");
        assert!(h.contains("<td>no change</td>"), "{h}");
        assert!(
            h.contains("<td>changed a: 1 -&gt; 2<br>added c@1 (candidate)</td>"),
            "{h}"
        );
        assert_eq!(h.matches("b@1 (active)").count(), 1, "{h}");
        // other tables are left alone
        let other = markdown_html("| skills | x |\n|---|---|\n| a<br>b | 1 |\n| a<br>b | 2 |\n");
        assert_eq!(other.matches("a<br>b").count(), 2, "{other}");
    }

    fn update_line(step: u64, reward: f64, loss: f64) -> String {
        let loss = loss as f32;
        MetricsLine::Update(UpdateMetrics {
            step,
            outer: 0,
            inner: 0,
            episodes: 2,
            dropped: 0,
            reward,
            reward_min: 0.0,
            reward_max: 1.0,
            shaped_reward: reward,
            policy_loss: loss,
            value_loss: loss,
            entropy: loss,
            approx_kl: loss,
            clip_frac: 0.0,
            ppo_epochs: 1,
            early_stopped: false,
            skill_usage: Default::default(),
            bank_size: 4,
            bank_version: 0,
            memory_items: 1.0,
            queries: 1,
            span_errors: 0,
            query_errors: 0,
            parse_problems: 0,
            memories_flagged: 0,
            memories_refused: 0,
            hard_cases: 0,
            llm_calls: 1,
            llm_errors: 0,
            llm: Default::default(),
            dropped_incomplete: None,
            retries: None,
            structured_dialects: None,
            actor: None,
            memory_contract: None,
        })
        .to_line()
        .unwrap()
    }

    #[test]
    fn curves_without_data_are_na_not_flat_charts() {
        // a run whose policy never updates: losses, KL and entropy zero at every update
        let flat: String = (1..=4).map(|i| update_line(i, 0.25, 0.0) + "\n").collect();
        let h = learning_curves(&flat);
        assert_eq!(h.matches("<svg").count(), 1, "only the reward chart: {h}");
        assert!(h.contains("PPO curves") && h.contains("n/a"), "{h}");
        // a trained run: five charts, none n/a
        let trained: String = (1..=4)
            .map(|i| update_line(i, 0.25, 0.01 * i as f64) + "\n")
            .collect();
        let h = learning_curves(&trained);
        assert_eq!(h.matches("<svg").count(), 5, "{h}");
        assert!(!h.contains("n/a"), "{h}");
        assert!(h.contains(">update</text>") && h.contains(">min</text>"));
        // no update line at all
        assert!(learning_curves("").contains("n/a"));
        assert!(flat_zero(&[(1.0, 0.0), (2.0, f64::NAN)]) && !flat_zero(&[(1.0, 1e-9)]));
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
        let h = super::grouped_table_html(&groups, &rows, &[(0, "MemSkill".into())]);
        assert!(h.contains("<tr class=\"group\"><th colspan=\"5\">MemSkill</th></tr>"));
        assert!(h.contains("<th colspan=\"2\" style=\"text-align:center\">locomo (test)</th>"));
        assert!(h.contains("<th>#Steps</th>"));
        assert!(h.contains("<a href=\"a/results.json\">41.20 [39.0, 43.1]</a>"));
        assert_eq!(h.matches("<td").count(), 4);
    }
}
