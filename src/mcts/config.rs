//! Search options: typed values with the defaults documented, algorithm choices as enums.

use serde::{Deserialize, Serialize};

/// Value assumed for a move never visited ("first-play urgency").
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", deny_unknown_fields)]
pub enum Fpu {
    /// A fixed value, from the mover's view (AlphaZero used 0 on a [-1, 1] scale... roughly).
    Const { value: f32 },
    /// The parent's value minus `reduction * sqrt(prior mass already visited)` (Leela Zero,
    /// KataGo): explores less once good moves have been found.
    ParentReduction { reduction: f32 },
}

/// How self-play's full searches explore at the root.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", deny_unknown_fields)]
pub enum RootNoise {
    /// A plain PUCT root.
    None,
    /// A Gumbel root (see [`GumbelRoot`]).
    Gumbel(GumbelRoot),
}

impl RootNoise {
    /// Self-play's exploration: a Gumbel root with the paper's constants.
    pub fn self_play() -> RootNoise {
        RootNoise::Gumbel(GumbelRoot::default())
    }

    /// The Gumbel root's constants, if the root is one.
    pub fn gumbel(self) -> Option<GumbelRoot> {
        match self {
            RootNoise::Gumbel(gumbel) => Some(gumbel),
            RootNoise::None => None,
        }
    }
}

/// Gumbel root search (Danihelka et al. 2022, "Policy improvement by planning with Gumbel"),
/// for searches with root noise (self-play's full searches): the root samples `considered`
/// moves without replacement by prior and Gumbel noise, shares the visits among them by
/// sequential halving, plays the best of the last two, and teaches the softmax of the priors'
/// logits plus the transformed searched values of every move. Below the root the search stays
/// PUCT. With a hundred legal moves and 64 visits, visit counts say little about the moves few
/// visits reached; the improved policy says something of each.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GumbelRoot {
    /// Moves considered at the root (16 in the paper): fewer get more visits each.
    pub considered: u32,
    /// The values' weight against the priors' logits grows with the most visited move's
    /// visits: `(c_visit + max visits) * c_scale` times the value rescaled to [0, 1].
    pub c_visit: f32,
    pub c_scale: f32,
}

impl Default for GumbelRoot {
    /// The paper's 16 moves and 50 visits, with the value scale 0.1 of DeepMind's `mctx`.
    fn default() -> GumbelRoot {
        GumbelRoot { considered: 16, c_visit: 50.0, c_scale: 0.1 }
    }
}

/// How a search chooses and evaluates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Exploration constant of PUCT. Default 1.5.
    pub c_puct: f32,
    /// Default: parent reduction 0.2.
    pub fpu: Fpu,
    /// Default: none for players. A config file's `[search]` that leaves it out gets
    /// [`RootNoise::self_play`] (self-play applies it to full searches only).
    #[serde(default = "RootNoise::self_play")]
    pub root_noise: RootNoise,
    /// Default true: keep the subtree of the move played for the next search.
    pub reuse_tree: bool,
    /// Default true: score positions whose result is certain two moves ahead (a far-row lead no
    /// reply can repair, or one whose every repair allows such a lead, see
    /// [`crate::game::Position::forced_in_two`]) as finished games, below the root; and under a
    /// lead, search only the moves that take it away (the others lose at once).
    pub forced_results: bool,
    /// Default 0: what a draw is worth to either side, in [-1, 1]. The search scores a
    /// position as (win - loss) + draw_value * P(draw) for its side to move, so a negative
    /// value makes both sides avoid draws (contempt for both, not for one), and the network's
    /// draw probability steers away from lines it expects to be drawn. A config file's
    /// `[search]` that leaves it out gets [`SELF_PLAY_DRAW_VALUE`].
    #[serde(default = "self_play_draw_value")]
    pub draw_value: f32,
    /// Default 0: the share of every expanded node's prior spread evenly over its captures
    /// (the rest keeps the network's priors, scaled down) for PUCT's selection. A network
    /// whose policy gives captures almost nothing never searches them, for either side: it
    /// neither takes material nor sees its own pieces taken in the line below
    /// (docs/methods.md). A Gumbel root samples and trains on the network's own priors. A
    /// config file's `[search]` that leaves it out gets [`SELF_PLAY_CAPTURE_PRIOR`].
    #[serde(default = "self_play_capture_prior")]
    pub capture_prior: f32,
}

/// The draw value of self-play's search: both sides avoid draws, which keeps games on the
/// large board from drifting into shuffling to the ply cap (docs/methods.md).
pub const SELF_PLAY_DRAW_VALUE: f32 = -0.7;

fn self_play_draw_value() -> f32 {
    SELF_PLAY_DRAW_VALUE
}

/// The capture share of self-play's search: networks trained from random weights give
/// captures almost no prior, and with this share their searches take material and see their
/// own pieces taken from the first generation (docs/methods.md).
pub const SELF_PLAY_CAPTURE_PRIOR: f32 = 0.25;

fn self_play_capture_prior() -> f32 {
    SELF_PLAY_CAPTURE_PRIOR
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            c_puct: 1.5,
            fpu: Fpu::ParentReduction { reduction: 0.2 },
            root_noise: RootNoise::None,
            reuse_tree: true,
            forced_results: true,
            draw_value: 0.0,
            capture_prior: 0.0,
        }
    }
}

impl SearchConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.c_puct > 0.0 && self.c_puct.is_finite()) {
            return Err(format!("c_puct must be a positive number, not {}", self.c_puct));
        }
        let fpu = match self.fpu {
            Fpu::Const { value } => value,
            Fpu::ParentReduction { reduction } => reduction,
        };
        if !fpu.is_finite() {
            return Err(format!("fpu needs a finite number, not {fpu}"));
        }
        if let RootNoise::Gumbel(GumbelRoot { considered, c_visit, c_scale }) = self.root_noise {
            if !(1..=1024).contains(&considered) {
                return Err(format!("gumbel considered must be in 1..=1024, not {considered}"));
            }
            if !(c_visit >= 0.0 && c_visit.is_finite() && c_scale > 0.0 && c_scale.is_finite()) {
                return Err(format!("gumbel needs a finite c_visit >= 0 and c_scale > 0, not {c_visit} and {c_scale}"));
            }
        }
        if !(0.0..=1.0).contains(&self.capture_prior) {
            return Err(format!("capture_prior must be in [0, 1], not {}", self.capture_prior));
        }
        if !(-1.0..=1.0).contains(&self.draw_value) {
            return Err(format!("draw_value must be in [-1, 1], not {}", self.draw_value));
        }
        Ok(())
    }
}
