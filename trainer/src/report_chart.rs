//! Small line charts as inline SVG for the HTML report: named axes, 3 to 5 "nice" ticks per
//! axis written in one number format per axis, vertical markers (designer stages) labelled
//! inside the plot area, a legend above the plot, and an "n/a" box in place of a chart that
//! has nothing to show. Pure functions of their arguments.

use std::fmt::Write as _;

/// One line of a chart.
pub struct Line<'a> {
    pub name: &'a str,
    pub points: Vec<(f64, f64)>,
    pub color: &'a str,
    /// Drawn dashed and thinner (a secondary line such as a minimum or maximum).
    pub dashed: bool,
}

/// A vertical marker (a designer stage) at `x` with a short label.
pub struct Mark {
    pub x: f64,
    pub label: String,
    /// Drawn dashed red (a rollback) instead of grey.
    pub alert: bool,
}

/// A chart's title and its axes' names.
pub struct Axes<'a> {
    pub title: &'a str,
    pub x: &'a str,
    pub y: &'a str,
}

pub const W: f64 = 440.0;
pub const H: f64 = 230.0;
const PAD_L: f64 = 66.0;
const PAD_R: f64 = 14.0;
const PAD_T: f64 = 30.0;
const PAD_B: f64 = 42.0;
/// Pixels between the plot's frame and the data range, so that a line at the range's end
/// (a minimum of 0 on the bottom tick) is not drawn over the frame.
const INSET: f64 = 6.0;

/// `s` escaped for HTML text and attribute values.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// How one axis writes its tick values: fixed with `n` decimals, or scientific with `n`
/// decimals in the mantissa.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisFormat {
    Fixed(usize),
    Sci(usize),
}

impl AxisFormat {
    /// The format of an axis with these ticks: scientific when the largest tick is at least
    /// 1e5 or, not zero, below 0.01; fixed otherwise. Either way the fewest decimals that
    /// write every tick exactly (up to 6).
    pub fn of(ticks: &[f64]) -> AxisFormat {
        let max = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
        let exact = |f: AxisFormat| {
            ticks.iter().all(|&t| {
                let back: f64 = f.write(t).parse().unwrap_or(f64::NAN);
                (back - t).abs() <= 1e-9 * max.max(1e-300)
            })
        };
        let sci = max >= 1e5 || (max > 0.0 && max < 1e-2);
        (0..=6)
            .map(|d| {
                if sci {
                    AxisFormat::Sci(d)
                } else {
                    AxisFormat::Fixed(d)
                }
            })
            .find(|&f| exact(f))
            .unwrap_or(if sci {
                AxisFormat::Sci(6)
            } else {
                AxisFormat::Fixed(6)
            })
    }

    /// `v` in this format (0 as `0` in scientific notation; never `-0`).
    pub fn write(self, v: f64) -> String {
        let v = if v == 0.0 { 0.0 } else { v };
        match self {
            AxisFormat::Fixed(d) => format!("{v:.d$}"),
            AxisFormat::Sci(_) if v == 0.0 => "0".into(),
            AxisFormat::Sci(d) => format!("{v:.d$e}"),
        }
    }
}

/// 3 to 5 evenly spaced tick values covering `lo..=hi`, 1, 2, 2.5 or 5 times a power of ten
/// apart (at least 1 apart when `integer`), the first at or below `lo` and the last at or
/// above `hi`. A flat range (narrower than a millionth of its values, or than 1e-12) is
/// widened around its value first.
pub fn nice_ticks(lo: f64, hi: f64, integer: bool) -> Vec<f64> {
    let flat = hi - lo < 1e-12 || hi - lo <= 1e-6 * lo.abs().max(hi.abs());
    let (lo, hi) = if flat {
        let pad = (lo.abs() * 0.1).max(0.5);
        (lo - pad, hi + pad)
    } else {
        (lo, hi)
    };
    let e0 = ((hi - lo) / 5.0).log10().floor() as i32;
    // a step is m * 10^e; ticks are computed as (i * m) scaled by the power of ten, so that
    // they are the nearest floats to the round values (-4 * 5e-6 is not -2e-5 exactly)
    let (m, e) = (e0..=e0 + 1)
        .flat_map(|e| [1.0, 2.0, 2.5, 5.0].map(|m| (m, e)))
        .chain([(1.0, e0 + 2)])
        .filter(|&(m, e)| !integer || (scale(m, e) >= 1.0 && scale(m, e).fract() == 0.0))
        .find(|&(m, e)| count(lo, hi, scale(m, e)) <= 5)
        .unwrap_or_else(|| {
            if integer && e0 < 0 {
                (1.0, 0)
            } else {
                (1.0, e0 + 2)
            }
        });
    let step = scale(m, e);
    let first = (lo / step + 1e-9).floor() as i64;
    let last = ((hi / step) - 1e-9).ceil() as i64;
    let tick = |i: i64| scale(i as f64 * m, e);
    let mut ticks: Vec<f64> = (first..=last).map(tick).collect();
    // a range of one or two steps: one more tick below (above when below would cross 0)
    let (mut below, mut above) = (first, last);
    while ticks.len() < 3 {
        if tick(below - 1) >= 0.0 || lo < 0.0 {
            below -= 1;
            ticks.insert(0, tick(below));
        } else {
            above += 1;
            ticks.push(tick(above));
        }
    }
    ticks
}

/// How many ticks `step` apart cover `lo..=hi`.
fn count(lo: f64, hi: f64, step: f64) -> i64 {
    ((hi / step) - 1e-9).ceil() as i64 - (lo / step + 1e-9).floor() as i64 + 1
}

/// 3 to 5 evenly spaced "nice" tick values (as [`nice_ticks`]) inside `lo..=hi`, as many as
/// fit; `None` when no step gives 3 to 5.
pub fn inner_ticks(lo: f64, hi: f64, integer: bool) -> Option<Vec<f64>> {
    if hi - lo <= 0.0 || !(hi - lo).is_finite() {
        return None;
    }
    let e0 = (hi - lo).log10().floor() as i32;
    (e0 - 2..=e0)
        .flat_map(|e| [1.0, 2.0, 2.5, 5.0].map(|m| (m, e)))
        .filter(|&(m, e)| !integer || (scale(m, e) >= 1.0 && scale(m, e).fract() == 0.0))
        .map(|(m, e)| {
            let step = scale(m, e);
            let first = (lo / step - 1e-9).ceil() as i64;
            let last = (hi / step + 1e-9).floor() as i64;
            (first..=last)
                .map(|i| scale(i as f64 * m, e))
                .collect::<Vec<f64>>()
        })
        .find(|t| (3..=5).contains(&t.len()))
}

/// `v * 10^e`, as the nearest float to that decimal value.
fn scale(v: f64, e: i32) -> f64 {
    if e >= 0 {
        v * 10f64.powi(e)
    } else {
        v / 10f64.powi(-e)
    }
}

/// The data ranges of a chart, their ticks, and their mapping onto the plot area.
struct Frame {
    xr: (f64, f64),
    yr: (f64, f64),
    xt: Vec<f64>,
    yt: Vec<f64>,
    /// Room left free above the data (for the marks' labels), in pixels.
    top: f64,
}

impl Frame {
    /// The ranges and ticks of the finite points of `lines`, with room above the data for
    /// the labels of `marks` marks; `None` when there are no finite points. The x axis (update
    /// numbers) runs from 0 (from its first value when that is past the middle) to its last
    /// value with 3 to 5 ticks inside; the y axis runs over 3 to 5 ticks covering the values.
    fn of(lines: &[Line], marks: usize) -> Option<Frame> {
        let mut r = [
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for &(x, y) in lines.iter().flat_map(|l| finite(&l.points)) {
            r = [r[0].min(x), r[1].max(x), r[2].min(y), r[3].max(y)];
        }
        if !r[0].is_finite() {
            return None;
        }
        let integer_x = lines
            .iter()
            .flat_map(|l| finite(&l.points))
            .all(|p| p.0.fract() == 0.0);
        let x0 = if r[0] >= 0.0 && r[0] <= r[1] / 2.0 {
            0.0
        } else {
            r[0]
        };
        let (xr, xt) = match inner_ticks(x0, r[1], integer_x) {
            Some(t) => ((x0, r[1]), t),
            None => {
                let t = nice_ticks(x0, r[1], integer_x);
                ((t[0], t[t.len() - 1]), t)
            }
        };
        let yt = nice_ticks(r[2], r[3], false);
        Some(Frame {
            xr,
            yr: (yt[0], yt[yt.len() - 1]),
            xt,
            yt,
            top: 11.0 * marks.min(3) as f64,
        })
    }

    fn sx(&self, x: f64) -> f64 {
        let (a, b) = self.xr;
        PAD_L + INSET + (x - a) / (b - a) * (W - PAD_L - PAD_R - 2.0 * INSET)
    }

    fn sy(&self, y: f64) -> f64 {
        let (a, b) = self.yr;
        H - PAD_B - INSET - (y - a) / (b - a) * (H - PAD_T - PAD_B - 2.0 * INSET - self.top)
    }
}

fn finite(points: &[(f64, f64)]) -> impl Iterator<Item = &(f64, f64)> {
    points.iter().filter(|p| p.0.is_finite() && p.1.is_finite())
}

/// The opening of a chart: the `<svg>` element, the title and the plot's frame.
fn open(axes: &Axes) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{t}\" font-family=\"sans-serif\">\
<text x=\"{PAD_L}\" y=\"17\" font-size=\"13\" font-weight=\"bold\">{t}</text>\
<rect x=\"{PAD_L}\" y=\"{PAD_T}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>",
        W - PAD_L - PAD_R,
        H - PAD_T - PAD_B,
        t = esc(axes.title)
    )
}

/// A small line chart as an inline `<svg>` (finite points only; empty when there are none).
pub fn svg_chart(axes: &Axes, lines: &[Line], marks: &[Mark]) -> String {
    let Some(f) = Frame::of(lines, marks.len()) else {
        return String::new();
    };
    let mut s = open(axes);
    axis_ticks(&mut s, &f, axes);
    for (i, m) in marks.iter().enumerate() {
        mark_line(&mut s, &f, m, i);
    }
    // secondary (dashed) lines first, so that the main line is drawn over them
    for l in lines.iter().filter(|l| l.dashed) {
        polyline(&mut s, &f, l);
    }
    for l in lines.iter().filter(|l| !l.dashed) {
        polyline(&mut s, &f, l);
    }
    if lines.len() > 1 {
        legend(&mut s, lines);
    }
    s.push_str("</svg>");
    s
}

/// In place of a chart: its frame with its title, "n/a" and why.
pub fn na_chart(title: &str, why: &str) -> String {
    let mut s = open(&Axes {
        title,
        x: "",
        y: "",
    });
    let (cx, cy) = ((PAD_L + W - PAD_R) / 2.0, (PAD_T + H - PAD_B) / 2.0);
    let _ = write!(
        s,
        "<text x=\"{cx}\" y=\"{cy}\" font-size=\"22\" fill=\"#999\" text-anchor=\"middle\">n/a</text>\
<text x=\"{cx}\" y=\"{}\" font-size=\"10\" fill=\"#666\" text-anchor=\"middle\">{}</text></svg>",
        cy + 18.0,
        esc(why)
    );
    s
}

/// Grid lines and tick values on both axes, and the axes' names.
fn axis_ticks(s: &mut String, f: &Frame, axes: &Axes) {
    let (fx, fy) = (AxisFormat::of(&f.xt), AxisFormat::of(&f.yt));
    for &v in &f.yt {
        let y = f.sy(v);
        let _ = write!(
            s,
            "<line x1=\"{PAD_L}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#eee\"/>\
<text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
            W - PAD_R,
            PAD_L - 4.0,
            y + 3.5,
            fy.write(v)
        );
    }
    for &v in &f.xt {
        let x = f.sx(v);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"#999\"/>\
<text x=\"{x:.1}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{}</text>",
            H - PAD_B,
            H - PAD_B + 4.0,
            H - PAD_B + 15.0,
            fx.write(v)
        );
    }
    let (cx, cy) = ((PAD_L + W - PAD_R) / 2.0, (PAD_T + H - PAD_B) / 2.0);
    let _ = write!(
        s,
        "<text x=\"{cx}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\
<text x=\"14\" y=\"{cy}\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 14 {cy})\">{}</text>",
        H - 8.0,
        esc(axes.x),
        esc(axes.y)
    );
}

/// A vertical line at the mark's x with its label inside the plot area, above the data (red
/// and dashed for an alert). The `i`th label goes on row `i % 3`, so that the labels of
/// nearby marks do not overlap; it runs right of its line, or left of it where it would
/// pass the plot's right edge.
fn mark_line(s: &mut String, f: &Frame, m: &Mark, i: usize) {
    let (color, dash) = if m.alert {
        ("#c0392b", " stroke-dasharray=\"4 3\"")
    } else {
        ("#888", "")
    };
    let x = f.sx(m.x);
    // about 5 pixels a character at font size 9
    let width = 5.0 * m.label.chars().count() as f64;
    let (tx, anchor) = if x + 3.0 + width > W - PAD_R - 2.0 {
        (x - 3.0, "end")
    } else {
        (x + 3.0, "start")
    };
    let _ = write!(
        s,
        "<line x1=\"{x:.1}\" y1=\"{PAD_T}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"{color}\"{dash}><title>{}</title></line>\
<text x=\"{tx:.1}\" y=\"{}\" font-size=\"9\" fill=\"{color}\" text-anchor=\"{anchor}\" stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>",
        H - PAD_B,
        esc(&m.label),
        PAD_T + 10.0 + 11.0 * (i % 3) as f64,
        esc(&m.label)
    );
}

/// A line's finite points (a dot for a single point).
fn polyline(s: &mut String, f: &Frame, l: &Line) {
    let pts: Vec<(f64, f64)> = finite(&l.points)
        .map(|&(x, y)| (f.sx(x), f.sy(y)))
        .collect();
    let (width, dash) = if l.dashed {
        (1.4, " stroke-dasharray=\"5 3\"")
    } else {
        (2.2, "")
    };
    if let [(x, y)] = pts[..] {
        let _ = write!(
            s,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"{}\"/>",
            l.color
        );
        return;
    }
    let path: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{width}\"{dash} points=\"{}\"/>",
        l.color,
        path.join(" ")
    );
}

/// The lines' names with a sample of each, in a row above the plot's right end.
fn legend(s: &mut String, lines: &[Line]) {
    let item = 52.0;
    let mut x = W - PAD_R - item * lines.len() as f64;
    for l in lines {
        let dash = if l.dashed {
            " stroke-dasharray=\"5 3\""
        } else {
            ""
        };
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"13\" x2=\"{:.1}\" y2=\"13\" stroke=\"{}\" stroke-width=\"2\"{dash}/>\
<text x=\"{:.1}\" y=\"17\" font-size=\"10\">{}</text>",
            x + 16.0,
            l.color,
            x + 19.0,
            esc(l.name)
        );
        x += item;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_nice(ticks: &[f64], lo: f64, hi: f64) {
        assert!((3..=5).contains(&ticks.len()), "{ticks:?}");
        assert!(ticks[0] <= lo && *ticks.last().unwrap() >= hi, "{ticks:?}");
        let step = ticks[1] - ticks[0];
        let m = step / 10f64.powf(step.log10().floor());
        assert!(
            [1.0, 2.0, 2.5, 5.0].iter().any(|n| (m - n).abs() < 1e-6),
            "{ticks:?} step {step}"
        );
        for w in ticks.windows(2) {
            assert!(((w[1] - w[0]) - step).abs() < 1e-9 * step.abs().max(1.0));
        }
    }

    #[test]
    fn ticks_are_three_to_five_nice_values_covering_the_range() {
        for (lo, hi) in [
            (0.0, 1.0),
            (0.0, 0.6667),
            (4.79e-6, 0.037),
            (-2.0e-5, -9.0e-6),
            (1.386, 1.386),
            (0.0, 0.0),
            (-3.0, 1234.0),
            (0.25, 0.2500001),
            (17.0, 1.0e6),
        ] {
            let t = nice_ticks(lo, hi, false);
            assert_nice(&t, lo, hi);
        }
        assert_eq!(nice_ticks(0.0, 1.0, false), [0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(
            nice_ticks(4.79e-6, 0.037, false),
            [0.0, 0.01, 0.02, 0.03, 0.04]
        );
        // update numbers: whole ticks only, even for two updates
        assert_eq!(nice_ticks(1.0, 2.0, true), [0.0, 1.0, 2.0]);
        assert_eq!(nice_ticks(1.0, 12.0, true), [0.0, 5.0, 10.0, 15.0]);
        let t = nice_ticks(1.0, 3.0, true);
        assert!(t.iter().all(|v| v.fract() == 0.0) && t.len() >= 3, "{t:?}");
    }

    #[test]
    fn inner_ticks_fit_inside_the_range() {
        assert_eq!(inner_ticks(0.0, 12.0, true), Some(vec![0.0, 5.0, 10.0]));
        assert_eq!(
            inner_ticks(0.0, 4.0, true),
            Some(vec![0.0, 1.0, 2.0, 3.0, 4.0])
        );
        assert_eq!(inner_ticks(0.0, 1.0, true), None);
        assert_eq!(
            inner_ticks(0.0, 0.037, false),
            Some(vec![0.0, 0.01, 0.02, 0.03])
        );
        for (lo, hi) in [(0.0, 7.0), (0.0, 97.0), (3.0, 1234.0), (0.0, 2.0)] {
            let t = inner_ticks(lo, hi, true).unwrap();
            assert!((3..=5).contains(&t.len()) && t[0] >= lo && t[t.len() - 1] <= hi);
        }
    }

    #[test]
    fn one_number_format_per_axis() {
        let f = AxisFormat::of(&nice_ticks(4.79e-6, 0.037, false));
        assert_eq!(f, AxisFormat::Fixed(2));
        let labels: Vec<String> = [0.0, 0.01, 0.04].iter().map(|&v| f.write(v)).collect();
        assert_eq!(labels, ["0.00", "0.01", "0.04"]);
        assert_eq!(AxisFormat::of(&[0.0, 0.25, 0.5]), AxisFormat::Fixed(2));
        assert_eq!(AxisFormat::of(&[0.0, 5.0, 10.0]), AxisFormat::Fixed(0));
        // tiny values: scientific, the same for every tick of the axis
        let tiny = nice_ticks(-2.0e-5, -9.0e-6, false);
        let f = AxisFormat::of(&tiny);
        assert!(matches!(f, AxisFormat::Sci(_)), "{f:?} {tiny:?}");
        for v in &tiny {
            let w = f.write(*v);
            assert!(w == "0" || w.contains('e'), "{w}");
        }
        assert_eq!(AxisFormat::Sci(1).write(2.5e-6), "2.5e-6");
        assert_eq!(AxisFormat::of(&[0.0, 5e5, 1e6]), AxisFormat::Sci(0));
        assert_eq!(AxisFormat::of(&[0.0, 2.5e5, 5e5]), AxisFormat::Sci(1));
        assert_eq!(AxisFormat::Fixed(2).write(-0.0), "0.00");
    }

    #[test]
    fn charts_scale_points_skip_non_finite_ones_and_label_axes() {
        let svg = svg_chart(
            &Axes {
                title: "r",
                x: "update",
                y: "reward",
            },
            &[Line {
                name: "m",
                points: vec![(1.0, 0.0), (2.0, f64::NAN), (3.0, 1.0)],
                color: "#000",
                dashed: false,
            }],
            &[Mark {
                x: 2.0,
                label: "stage 1: rollback".into(),
                alert: true,
            }],
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        // x 0..3 over 72..420; y ticks 0..1 over 182..47 (room above for one mark's label);
        // the NaN point is left out
        assert!(svg.contains("points=\"188.0,182.0 420.0,47.0\""), "{svg}");
        assert!(svg.contains("stroke-dasharray") && svg.contains("stage 1: rollback"));
        assert!(svg.contains(">update</text>") && svg.contains(">reward</text>"));
        assert!(
            svg.contains(">0.25</text>") && svg.contains(">1.00</text>"),
            "{svg}"
        );
        let empty = Axes {
            title: "e",
            x: "",
            y: "",
        };
        assert_eq!(svg_chart(&empty, &[], &[]), "");
    }

    #[test]
    fn stage_labels_stay_inside_the_plot() {
        let marks: Vec<Mark> = [1.0, 6.0, 12.0]
            .iter()
            .map(|&x| Mark {
                x,
                label: "stage: improved".into(),
                alert: false,
            })
            .collect();
        let line = Line {
            name: "m",
            points: (1..=12).map(|i| (i as f64, i as f64)).collect(),
            color: "#000",
            dashed: false,
        };
        let axes = Axes {
            title: "r",
            x: "update",
            y: "y",
        };
        let svg = svg_chart(&axes, &[line], &marks);
        // the mark at the right edge is labelled leftwards, the others rightwards
        assert_eq!(
            svg.matches("text-anchor=\"end\" stroke=\"#fff\"").count(),
            1
        );
        assert_eq!(
            svg.matches("text-anchor=\"start\" stroke=\"#fff\"").count(),
            2
        );
    }

    #[test]
    fn a_lone_point_is_a_dot_and_na_is_text() {
        let svg = svg_chart(
            &Axes {
                title: "t",
                x: "update",
                y: "y",
            },
            &[Line {
                name: "m",
                points: vec![(1.0, 0.5)],
                color: "#000",
                dashed: false,
            }],
            &[],
        );
        assert!(
            svg.contains("<circle") && !svg.contains("<polyline"),
            "{svg}"
        );
        let na = na_chart("policy loss", "no policy update");
        assert!(na.contains(">n/a</text>") && na.contains("no policy update"));
        assert!(!na.contains("<polyline"));
    }
}
