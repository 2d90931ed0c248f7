//! Gumbel search at the root (Danihelka et al. 2022, "Policy improvement by planning with
//! Gumbel"), self-play's alternative to PUCT there. A few moves are drawn without replacement
//! by Gumbel-top-k over the network's priors, sequential halving spends the budget on them
//! (equal visits each phase, then the better half by prior, noise and searched value goes on),
//! and the move played is the last one standing. The policy target is not the visit counts but
//! the priors moved by every move's searched value ("completed" with an estimate for the moves
//! not searched). The paper shows both staying sound with a budget of a few visits, where
//! PUCT's visit counts mostly echo the priors (on the 8x8 board at 160 and 32 visits it did no
//! better than PUCT for the time: docs/methods.md).
//!
//! Below the root the search is PUCT as before; only the root's choices follow the plan.

use rand::Rng;

/// The value transform of `mctx` (DeepMind's reference implementation): completed values are
/// rescaled to [0, 1] over the root's moves, then multiplied by
/// `(VISIT_SCALE_INIT + most visits of a move) * VALUE_SCALE`, so the more the search has
/// seen, the more its values outweigh the priors.
const VISIT_SCALE_INIT: f32 = 50.0;
const VALUE_SCALE: f32 = 0.1;

/// What the plan reads of one root move.
#[derive(Clone, Copy, Debug)]
pub(super) struct RootMove {
    pub prior: f32,
    /// Visits backed up, those of a reused subtree included.
    pub visits: u32,
    pub virtual_visits: u32,
    /// Mean utility for the mover, when visited.
    pub q: f32,
    /// Proven by the solver: the move wins, or loses.
    pub won: bool,
    pub lost: bool,
}

impl RootMove {
    /// The prior as a logit, finite for a prior of 0.
    fn log_prior(&self) -> f32 {
        self.prior.max(f32::MIN_POSITIVE).ln()
    }
}

/// One search's sequential halving over the root's moves.
#[derive(Clone, Debug)]
pub(super) struct HalvingPlan {
    budget: u32,
    /// The network's value of the root, for the moves not searched.
    root_value: f32,
    /// Per root move (in generation order): its Gumbel noise plus its log prior.
    noisy_logits: Vec<f32>,
    /// Visits each move had when the plan began; the schedule counts only this search's.
    base: Vec<u32>,
    /// The moves still in play.
    remaining: Vec<usize>,
    phases: u32,
    /// Visits since the plan began that each remaining move gets by the end of this phase.
    target: u32,
    finished: bool,
}

impl HalvingPlan {
    /// A plan of `budget` simulations over at most `considered` moves, drawn by Gumbel-top-k.
    /// A move already proven won ends the plan at once; moves proven lost are not drawn
    /// unless nothing else is left.
    pub fn new(
        moves: &[RootMove],
        root_value: f32,
        budget: u32,
        considered: usize,
        rng: &mut impl Rng,
    ) -> HalvingPlan {
        let noisy_logits: Vec<f32> = moves.iter().map(|m| gumbel(rng) + m.log_prior()).collect();
        let mut candidates: Vec<usize> = (0..moves.len()).filter(|&i| !moves[i].lost).collect();
        if candidates.is_empty() {
            candidates = (0..moves.len()).collect();
        }
        candidates.sort_by(|&a, &b| noisy_logits[b].total_cmp(&noisy_logits[a]));
        candidates.truncate(considered.max(1));
        let phases = (candidates.len() as u32).next_power_of_two().trailing_zeros().max(1);
        let mut plan = HalvingPlan {
            budget,
            root_value,
            noisy_logits,
            base: moves.iter().map(|m| m.visits).collect(),
            remaining: candidates,
            phases,
            target: 0,
            finished: false,
        };
        if let Some(won) = moves.iter().position(|m| m.won) {
            plan.remaining = vec![won];
        }
        if plan.remaining.len() <= 1 {
            plan.finished = true;
        } else {
            plan.target = plan.allocation();
        }
        plan
    }

    /// Visits for each remaining move in the phase that begins: the budget shared equally
    /// over the phases and, within one, over the moves in play (at least one).
    fn allocation(&self) -> u32 {
        (self.budget / (self.phases * self.remaining.len() as u32)).max(1)
    }

    /// The root move (its index among `moves`) that the next simulation goes through, or
    /// `None` when the plan wants none: it is finished, or a phase ends once the leaves in
    /// flight under it are back (halving needs their values).
    pub fn select(&mut self, moves: &[RootMove]) -> Option<usize> {
        loop {
            if self.finished {
                return None;
            }
            if let Some(&won) = self.remaining.iter().find(|&&i| moves[i].won) {
                self.remaining = vec![won];
                self.finished = true;
                return None;
            }
            let searched =
                |i: usize| moves[i].visits.saturating_sub(self.base[i]) + moves[i].virtual_visits;
            let fewest =
                *self.remaining.iter().min_by_key(|&&i| searched(i)).expect("a plan keeps a move");
            if searched(fewest) < self.target {
                return Some(fewest);
            }
            if self.remaining.iter().any(|&i| moves[i].virtual_visits > 0) {
                return None;
            }
            self.halve(moves);
        }
    }

    /// Ends a phase: the better half (rounded up) of the moves in play goes on.
    fn halve(&mut self, moves: &[RootMove]) {
        let scores = self.scores(moves);
        self.remaining.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        self.remaining.truncate(self.remaining.len().div_ceil(2));
        if self.remaining.len() == 1 {
            self.finished = true;
        } else {
            self.target += self.allocation();
        }
    }

    /// Gumbel noise, log prior and transformed value of every root move.
    fn scores(&self, moves: &[RootMove]) -> Vec<f32> {
        transformed_values(moves, self.root_value)
            .iter()
            .zip(&self.noisy_logits)
            .map(|(sigma, logit)| sigma + logit)
            .collect()
    }

    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The move to play: the best of those in play by noise, prior and searched value.
    pub fn choice(&self, moves: &[RootMove]) -> usize {
        let scores = self.scores(moves);
        *self
            .remaining
            .iter()
            .max_by(|&&a, &&b| scores[a].total_cmp(&scores[b]))
            .expect("a plan keeps a move")
    }
}

/// The improved policy over the root's moves: softmax(log prior + transformed completed value).
/// What the solver proved is certain, not an estimate, so as in PUCT's targets a proven win
/// takes all the weight and proven losses none (unless every move loses).
pub(super) fn improved_policy(moves: &[RootMove], root_value: f32) -> Vec<f32> {
    if let Some(won) = moves.iter().position(|m| m.won) {
        return (0..moves.len()).map(|i| if i == won { 1.0 } else { 0.0 }).collect();
    }
    let all_lost = moves.iter().all(|m| m.lost);
    let logits: Vec<f32> = transformed_values(moves, root_value)
        .iter()
        .zip(moves)
        .map(
            |(sigma, m)| {
                if m.lost && !all_lost {
                    f32::NEG_INFINITY
                } else {
                    sigma + m.log_prior()
                }
            },
        )
        .collect();
    let top = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let weights: Vec<f32> = logits.iter().map(|l| (l - top).exp()).collect();
    let total: f32 = weights.iter().sum();
    weights.iter().map(|w| w / total).collect()
}

/// σ(completed value) of every move. A move not searched gets the mixed value: the root's
/// network value averaged with the prior-weighted mean of the searched moves' values, weighted
/// by how much was searched.
fn transformed_values(moves: &[RootMove], root_value: f32) -> Vec<f32> {
    let value = |m: &RootMove| if m.lost { -1.0 } else { m.q };
    let searched = |m: &RootMove| m.visits > 0 || m.lost;
    let total_visits: u32 = moves.iter().map(|m| m.visits).sum();
    let searched_prior: f32 =
        moves.iter().filter(|m| searched(m)).map(|m| m.prior.max(f32::MIN_POSITIVE)).sum();
    let mixed = if searched_prior > 0.0 {
        let weighted: f32 = moves
            .iter()
            .filter(|m| searched(m))
            .map(|m| m.prior.max(f32::MIN_POSITIVE) * value(m))
            .sum::<f32>()
            / searched_prior;
        (root_value + total_visits as f32 * weighted) / (1 + total_visits) as f32
    } else {
        root_value
    };
    let completed: Vec<f32> =
        moves.iter().map(|m| if searched(m) { value(m) } else { mixed }).collect();
    let low = completed.iter().copied().fold(f32::INFINITY, f32::min);
    let high = completed.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let most_visits = moves.iter().map(|m| m.visits).max().unwrap_or(0);
    let scale = (VISIT_SCALE_INIT + most_visits as f32) * VALUE_SCALE;
    completed.iter().map(|q| scale * (q - low) / (high - low).max(1e-8)).collect()
}

/// A draw from the standard Gumbel distribution.
fn gumbel(rng: &mut impl Rng) -> f32 {
    let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    -(-u.ln()).ln() as f32
}
