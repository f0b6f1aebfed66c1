//! SVG figures of a study (plotters, SVG backend): deterministic bytes,
//! escaped text, legible on light and dark pages.

use crate::error::Result;
use crate::report::study::StudyData;

/// The figures a study can ask for (`figures = [...]` in `study.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FigureKind {
    /// Exact rate per condition with a 95% interval.
    ExactRate,
    /// Question × condition heatmap of exact rates.
    Heatmap,
    /// F1 distribution per condition.
    F1,
    /// Wall time split into server and agent time.
    WallTime,
    /// Tool-call counts per tool per condition.
    ToolCalls,
    /// pass@k and pass^k per condition.
    PassK,
}

impl FigureKind {
    /// Every kind, in the order a study shows them.
    pub const ALL: [FigureKind; 6] = [
        FigureKind::ExactRate,
        FigureKind::Heatmap,
        FigureKind::F1,
        FigureKind::WallTime,
        FigureKind::ToolCalls,
        FigureKind::PassK,
    ];

    /// The name in `study.toml` and the file stem (`figures/NAME.svg`).
    pub fn name(self) -> &'static str {
        match self {
            FigureKind::ExactRate => "exact-rate",
            FigureKind::Heatmap => "heatmap",
            FigureKind::F1 => "f1",
            FigureKind::WallTime => "wall-time",
            FigureKind::ToolCalls => "tool-calls",
            FigureKind::PassK => "pass-k",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<FigureKind> {
        FigureKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// A one-sentence caption, and what the reader must know to read it
    /// (which interval, what is averaged).
    pub fn caption(self) -> &'static str {
        match self {
            FigureKind::ExactRate => {
                "Exact rate per condition: exact attempts over measured attempts, with 95% Wilson score intervals."
            }
            FigureKind::Heatmap => {
                "Exact rate of every question under every condition (exact attempts over measured attempts)."
            }
            FigureKind::F1 => "Distribution of F1 over measured attempts, per condition.",
            FigureKind::WallTime => {
                "Mean wall time per measured attempt, split into time waiting on the server and the agent's own time."
            }
            FigureKind::ToolCalls => "Tool calls per tool and condition, over every attempt.",
            FigureKind::PassK => {
                "pass@k (at least one of k attempts exact) and pass^k (all k exact), mean over questions."
            }
        }
    }
}

/// Renders one figure of `study` as a standalone SVG document.
///
/// Errors: a drawing failure from plotters (reported with the figure name).
pub fn render(kind: FigureKind, study: &StudyData) -> Result<String> {
    let _ = (kind, study);
    Err(crate::error::Error::Other(format!(
        "figure {} is not drawn yet",
        kind.name()
    )))
}
