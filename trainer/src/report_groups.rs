//! Which group of the paper's Table 1 an evaluated method belongs to, so that the report
//! lists MemSkill first, then its ablations, then the baselines run in memskill's harness,
//! then the external memory systems (adapters), rather than alphabetically. Pure functions of
//! a result's method name, whether it evaluated a checkpoint, and whether an adapter ran it.

use crate::baselines::Baseline;

/// A group of rows in Tables 1 and 2, in the order the report shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MethodGroup {
    /// A trained checkpoint of the method (also evaluated with another executor model).
    MemSkill,
    /// A trained checkpoint of an ablation (random skills for the controller, the static
    /// initial bank for the designer, refinement only).
    Ablation,
    /// A method without training run in memskill's harness (no memory, raw RAG, static skills).
    Baseline,
    /// An external memory system through the adapter protocol (Mem0, LangMem, A-MEM, ...).
    External,
    /// Anything else: an evaluation without a checkpoint that is no known baseline (an
    /// ALFWorld actor, for one).
    Other,
}

impl MethodGroup {
    /// The group's row title in the tables.
    pub fn title(self) -> &'static str {
        match self {
            MethodGroup::MemSkill => "MemSkill",
            MethodGroup::Ablation => "MemSkill ablations",
            MethodGroup::Baseline => "Baselines (memskill's harness)",
            MethodGroup::External => "External memory systems (adapters)",
            MethodGroup::Other => "Other evaluations",
        }
    }

    /// The group's method names known in advance, in the order the rows are shown (the
    /// run names of `scripts/reproduce/paper.sh` and of `configs/ablations/`; the baselines
    /// of [`Baseline`]; the adapters of `scripts/baselines/`). Other names follow them,
    /// alphabetically.
    fn known(self) -> &'static [&'static str] {
        match self {
            MethodGroup::MemSkill => &["full", "memskill", "reference-released"],
            MethodGroup::Ablation => &[
                "no-controller",
                "random-skills",
                "no-designer",
                "static-skills",
                "refine-only",
            ],
            MethodGroup::Baseline => &[
                "no-memory",
                "full-context",
                "raw-rag",
                "chain-of-notes",
                "read-agent",
                "memorybank",
                "static-skills",
            ],
            MethodGroup::External => &["mem0", "langmem", "a-mem", "memoryos", "memoryos-answers"],
            MethodGroup::Other => &[],
        }
    }
}

/// A method's name without a sweep point (`full [eval.top_k=1]`) or the transfer suffix of
/// `paper.sh` (`full-on-MODEL`): the name its group is read from.
pub fn base_method(method: &str) -> &str {
    let m = method.rsplit_once(" [").map_or(method, |(b, _)| b);
    m.split_once("-on-").map_or(m, |(b, _)| b)
}

/// The group of a method: an adapter's rows are external systems; without a checkpoint, a
/// known baseline (else other); with one, an ablation when its name is a known ablation or
/// says what it goes without (`no-...`, `w/o ...`), else MemSkill.
pub fn method_group(method: &str, has_checkpoint: bool, external: bool) -> MethodGroup {
    let base = base_method(method);
    if external {
        return MethodGroup::External;
    }
    if !has_checkpoint {
        let known =
            Baseline::parse(base).is_some() || MethodGroup::Baseline.known().contains(&base);
        return if known {
            MethodGroup::Baseline
        } else {
            MethodGroup::Other
        };
    }
    let ablation = MethodGroup::Ablation.known().contains(&base)
        || base.starts_with("no-")
        || base.starts_with("w/o");
    if ablation {
        MethodGroup::Ablation
    } else {
        MethodGroup::MemSkill
    }
}

/// Where a row goes: its group, then the method's place among the group's known names
/// (unknown ones after them), then its label (a deterministic order inside the group).
pub type RowKey = (MethodGroup, usize, String);

/// The [`RowKey`] of a row labelled `label` for `method` in group `group`.
pub fn row_key(group: MethodGroup, method: &str, label: String) -> RowKey {
    let base = base_method(method);
    let known = group.known();
    let rank = known.iter().position(|k| *k == base).unwrap_or(known.len());
    (group, rank, label)
}

/// Rows in [`RowKey`] order, with the groups they fall in: the rows (label and value), and
/// `(index of the group's first row, group title)` per group.
pub fn grouped<T>(rows: impl IntoIterator<Item = (RowKey, T)>) -> GroupedRows<T> {
    let mut sorted: Vec<(RowKey, T)> = rows.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut sections = Vec::new();
    let mut out = Vec::new();
    for (i, ((group, _, label), v)) in sorted.into_iter().enumerate() {
        if sections.last().is_none_or(|(_, g)| *g != group) {
            sections.push((i, group));
        }
        out.push((label, v));
    }
    let sections = sections
        .into_iter()
        .map(|(i, g)| (i, g.title().to_string()))
        .collect();
    (out, sections)
}

/// What [`grouped`] returns.
pub type GroupedRows<T> = (Vec<(String, T)>, Vec<(usize, String)>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_fall_in_the_paper_groups() {
        use MethodGroup::*;
        for (method, ck, ext, want) in [
            ("full", true, false, MemSkill),
            ("full-on-Qwen-Qwen3", true, false, MemSkill),
            ("reference-released", true, false, MemSkill),
            ("my-run", true, false, MemSkill),
            ("no-controller", true, false, Ablation),
            ("no-designer", true, false, Ablation),
            ("refine-only", true, false, Ablation),
            ("random-skills", true, false, Ablation),
            // the ablation run of configs/ablations/static-skills.toml has a checkpoint; the
            // baseline of the same name has none
            ("static-skills", true, false, Ablation),
            ("static-skills", false, false, Baseline),
            ("no-memory", false, false, Baseline),
            ("raw-rag", false, false, Baseline),
            ("mem0", false, true, External),
            ("langmem", false, true, External),
            ("walkthrough", false, false, Other),
        ] {
            assert_eq!(method_group(method, ck, ext), want, "{method}");
        }
        assert_eq!(base_method("full-on-x [eval.top_k=1]"), "full");
    }

    #[test]
    fn rows_come_grouped_memskill_ablations_baselines_external() {
        let rows = [
            ("raw-rag", false, false),
            ("mem0", false, true),
            ("no-designer", true, false),
            ("full-on-b", true, false),
            ("a-mem", false, true),
            ("no-memory", false, false),
            ("full", true, false),
            ("no-controller", true, false),
            ("zzz", true, false),
            ("static-skills", false, false),
            ("refine-only", true, false),
        ];
        let keyed = rows.iter().map(|&(m, ck, ext)| {
            (
                row_key(method_group(m, ck, ext), m, m.to_string()),
                m.to_string(),
            )
        });
        let (out, sections) = grouped(keyed);
        let order: Vec<&str> = out.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            order,
            [
                "full",
                "full-on-b",
                "zzz",
                "no-controller",
                "no-designer",
                "refine-only",
                "no-memory",
                "raw-rag",
                "static-skills",
                "mem0",
                "a-mem"
            ]
        );
        let titles: Vec<(usize, &str)> = sections.iter().map(|(i, t)| (*i, t.as_str())).collect();
        assert_eq!(
            titles,
            [
                (0, "MemSkill"),
                (3, "MemSkill ablations"),
                (6, "Baselines (memskill's harness)"),
                (9, "External memory systems (adapters)")
            ]
        );
    }
}
