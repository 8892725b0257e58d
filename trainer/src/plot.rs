//! PNG charts of a run's metrics (plotters, bitmap backend).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::metrics::{MetricsLine, UpdateMetrics};
use anyhow::{bail, Context, Result};
use plotters::prelude::*;

/// Candidate TrueType fonts (Debian `fonts-dejavu-core` and friends).
const FONT_PATHS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

/// Register a system font once; false when none is available (charts are then drawn
/// without text).
fn font_available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        let env = std::env::var("MEMSKILL_FONT").ok();
        for p in env.iter().map(String::as_str).chain(FONT_PATHS) {
            if let Ok(bytes) = std::fs::read(p) {
                let leaked: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, leaked).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

/// One series of points.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// The value an update line gives a series (`None`: no such series).
pub fn series_value(u: &UpdateMetrics, key: &str) -> Option<f64> {
    Some(match key {
        "reward" => u.reward,
        "reward_min" => u.reward_min,
        "reward_max" => u.reward_max,
        "shaped_reward" => u.shaped_reward,
        "policy_loss" => u.policy_loss as f64,
        "value_loss" => u.value_loss as f64,
        "entropy" => u.entropy as f64,
        "approx_kl" => u.approx_kl as f64,
        "clip_frac" => u.clip_frac as f64,
        "bank_size" => u.bank_size as f64,
        "memory_items" => u.memory_items,
        "hard_cases" => u.hard_cases as f64,
        "llm_calls" => u.llm_calls as f64,
        _ => return None,
    })
}

/// Read `metrics.jsonl` update lines: (step, value of `key`).
pub fn read_series(metrics: &Path, key: &str) -> Result<Series> {
    let text = std::fs::read_to_string(metrics)
        .with_context(|| format!("reading {}", metrics.display()))?;
    let mut points = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let m = MetricsLine::parse(line)
            .with_context(|| format!("{}:{}: not a metrics line", metrics.display(), i + 1))?;
        let MetricsLine::Update(u) = m else {
            continue;
        };
        let y = series_value(&u, key)
            .with_context(|| format!("{}: no update series {key:?}", metrics.display()))?;
        if y.is_finite() {
            points.push((u.step as f64, y));
        }
    }
    Ok(Series {
        name: key.into(),
        points,
    })
}

/// Draw line series against the update step into a PNG.
pub fn line_chart(path: &Path, title: &str, series: &[Series]) -> Result<()> {
    line_chart_with(path, title, "update", series)
}

/// Draw line series into a PNG, the x axis described by `x_desc`.
pub fn line_chart_with(path: &Path, title: &str, x_desc: &str, series: &[Series]) -> Result<()> {
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().cloned())
        .collect();
    if pts.is_empty() {
        bail!("{title}: no data points");
    }
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in &pts {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(*y);
        y1 = y1.max(*y);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = ((y1 - y0) * 0.05).max(1e-6);
    let (y0, y1) = (y0 - pad, y1 + pad);
    let text = font_available();
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {e}", path.display());
    let root = BitMapBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut b = ChartBuilder::on(&root);
    b.margin(15)
        .x_label_area_size(if text { 35 } else { 5 })
        .y_label_area_size(if text { 60 } else { 5 });
    if text {
        b.caption(title, ("sans-serif", 22));
    }
    let mut chart = b.build_cartesian_2d(x0..x1, y0..y1).map_err(|e| err(&e))?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc(x_desc).label_style(("sans-serif", 14));
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(|e| err(&e))?;
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN];
    for (i, s) in series.iter().enumerate() {
        let c = colors[i % colors.len()];
        let l = chart
            .draw_series(LineSeries::new(s.points.iter().cloned(), c.stroke_width(2)))
            .map_err(|e| err(&e))?;
        if text {
            l.label(s.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c));
        }
    }
    if text && series.len() > 1 {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// Write reward.png, kl.png and bank_size.png into `<run>/plots/`. Returns the files.
pub fn plot_run(run_dir: &Path) -> Result<Vec<PathBuf>> {
    let m = run_dir.join("metrics.jsonl");
    let out = run_dir.join("plots");
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let charts: [(&str, &str, Vec<&str>); 3] = [
        (
            "reward.png",
            "reward per update",
            vec!["reward", "shaped_reward"],
        ),
        ("kl.png", "approximate KL per update", vec!["approx_kl"]),
        (
            "bank_size.png",
            "selectable skills per update",
            vec!["bank_size"],
        ),
    ];
    let mut files = Vec::new();
    for (file, title, keys) in charts {
        let series = keys
            .iter()
            .map(|k| read_series(&m, k))
            .collect::<Result<Vec<_>>>()?;
        let p = out.join(file);
        line_chart(&p, title, &series)?;
        files.push(p);
    }
    Ok(files)
}
