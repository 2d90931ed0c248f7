//! Maximum-likelihood ratings for many players from a table of games (Bradley-Terry on the Elo
//! scale), with a first-move advantage term and bootstrap error bars.
//!
//! Model: White (rating `r_w`) scores against Black (`r_b`) with expectation
//! `1 / (1 + 10^(-(r_w - r_b + a) / 400))`, where `a` is White's advantage for moving first. A
//! draw counts as half a win. A weak normal prior on every rating (mean 0, sd 1000) keeps a
//! player who won or lost every game at a large but finite rating instead of infinity.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

const PRIOR_SD: f64 = 1000.0;
/// Elo points to natural-log odds.
const K: f64 = std::f64::consts::LN_10 / 400.0;

/// One game: indices of the players and White's score (1, 0.5, 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatedGame {
    pub white: usize,
    pub black: usize,
    pub white_score: f64,
}

/// Fitted ratings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ratings {
    /// Elo of each player, the anchor at 0.
    pub elo: Vec<f64>,
    /// Half-width of each rating's 95% interval (bootstrap; 0 for the anchor).
    pub error: Vec<f64>,
    /// White's first-move advantage in Elo.
    pub first_move: f64,
    pub first_move_error: f64,
}

/// The maximum a-posteriori ratings of `players` players (and the first-move term), shifted so
/// that player `anchor` is at 0.
pub fn fit(players: usize, games: &[RatedGame], anchor: usize) -> (Vec<f64>, f64) {
    let mut rating = vec![0.0f64; players];
    let mut advantage = 0.0f64;
    // Coordinate-wise Newton steps: the log-likelihood is concave in every coordinate, so each
    // one-dimensional step improves it, and a few dozen sweeps converge to the joint optimum.
    for _ in 0..200 {
        let mut largest_step: f64 = 0.0;
        for player in 0..players {
            let (mut gradient, mut curvature) =
                (-rating[player] / (PRIOR_SD * PRIOR_SD), 1.0 / (PRIOR_SD * PRIOR_SD));
            for game in games.iter().filter(|g| g.white == player || g.black == player) {
                let p = white_expectation(&rating, advantage, game);
                let sign = if game.white == player { 1.0 } else { -1.0 };
                gradient += sign * (game.white_score - p) * K;
                curvature += p * (1.0 - p) * K * K;
            }
            let step = gradient / curvature;
            rating[player] += step;
            largest_step = largest_step.max(step.abs());
        }
        if !games.is_empty() {
            let (mut gradient, mut curvature) = (0.0, 1e-9);
            for game in games {
                let p = white_expectation(&rating, advantage, game);
                gradient += (game.white_score - p) * K;
                curvature += p * (1.0 - p) * K * K;
            }
            let step = (gradient / curvature).clamp(-400.0, 400.0);
            advantage += step;
            largest_step = largest_step.max(step.abs());
        }
        if largest_step < 1e-4 {
            break;
        }
    }
    let shift = rating.get(anchor).copied().unwrap_or(0.0);
    (rating.iter().map(|r| r - shift).collect(), advantage)
}

fn white_expectation(rating: &[f64], advantage: f64, game: &RatedGame) -> f64 {
    1.0 / (1.0 + (-(rating[game.white] - rating[game.black] + advantage) * K).exp())
}

/// [`fit`] plus 95% error bars from `resamples` bootstrap refits (games drawn with replacement).
pub fn fit_with_errors(
    players: usize,
    games: &[RatedGame],
    anchor: usize,
    resamples: usize,
    seed: u64,
) -> Ratings {
    let (elo, first_move) = fit(players, games, anchor);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut squares = vec![0.0f64; players];
    let mut first_move_square = 0.0;
    for _ in 0..resamples {
        let sample: Vec<RatedGame> =
            (0..games.len()).map(|_| games[rng.random_range(0..games.len())]).collect();
        let (resampled, advantage) = fit(players, &sample, anchor);
        for (square, (r, e)) in squares.iter_mut().zip(resampled.iter().zip(&elo)) {
            *square += (r - e).powi(2);
        }
        first_move_square += (advantage - first_move).powi(2);
    }
    let spread = |square: f64| {
        if resamples == 0 {
            0.0
        } else {
            super::elo::Z95 * (square / resamples as f64).sqrt()
        }
    };
    Ratings {
        error: squares.into_iter().map(spread).collect(),
        first_move_error: spread(first_move_square),
        elo,
        first_move,
    }
}
