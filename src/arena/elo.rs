//! Elo arithmetic for one pairing: the rating difference a score implies, its confidence
//! interval, and the sequential probability ratio test used for gating questions.

use serde::Serialize;

/// z for a two-sided 95% interval of the normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The expected score of a player rated `elo` above its opponent.
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The rating difference that makes `score` (in [0, 1]) the expected score; infinite at 0 and 1.
pub fn elo_from_score(score: f64) -> f64 {
    if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / score - 1.0).log10()
    }
}

/// Wins, draws and losses of one side of a pairing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
}

/// The tally of games scored 1, 0.5 or 0.
impl FromIterator<f64> for Tally {
    fn from_iter<I: IntoIterator<Item = f64>>(scores: I) -> Tally {
        let mut tally = Tally::default();
        for score in scores {
            tally.add(score);
        }
        tally
    }
}

/// An Elo difference with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    pub elo: f64,
    pub low: f64,
    pub high: f64,
}

impl Tally {
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Adds one game scored 1, 0.5 or 0.
    pub fn add(&mut self, score: f64) {
        if score > 0.75 {
            self.wins += 1;
        } else if score > 0.25 {
            self.draws += 1;
        } else {
            self.losses += 1;
        }
    }

    /// The mean score per game (0.5 for no games).
    pub fn score(&self) -> f64 {
        if self.games() == 0 {
            return 0.5;
        }
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games() as f64
    }

    /// Variance of one game's score around the mean (the trinomial variance).
    fn per_game_variance(&self) -> f64 {
        let n = self.games().max(1) as f64;
        let s = self.score();
        (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (0.5 - s).powi(2)
            + self.losses as f64 * s.powi(2))
            / n
    }

    /// The 95% interval of the mean score: the normal approximation (using the observed
    /// win/draw/loss spread), clamped to [0, 1]. A perfect or null score has no spread to go
    /// on; its other bound is Wilson's (n / (n + z^2)), which stays sensible for a handful of
    /// games, where the rule of three does not. No games: [0, 1].
    pub fn score_interval(&self) -> (f64, f64) {
        let n = self.games() as f64;
        if n == 0.0 {
            return (0.0, 1.0);
        }
        let s = self.score();
        let half_width = Z95 * (self.per_game_variance() / n).sqrt();
        if s >= 1.0 {
            (n / (n + Z95 * Z95), 1.0)
        } else if s <= 0.0 {
            (0.0, Z95 * Z95 / (n + Z95 * Z95))
        } else {
            ((s - half_width).max(0.0), (s + half_width).min(1.0))
        }
    }

    /// The Elo difference and its 95% interval: the score interval above mapped through the
    /// logistic curve, so a perfect or null score gives an infinite estimate, and no games an
    /// estimate of 0 between -inf and +inf.
    pub fn elo(&self) -> EloEstimate {
        let (low, high) = self.score_interval();
        EloEstimate {
            elo: elo_from_score(self.score()),
            low: elo_from_score(low),
            high: elo_from_score(high),
        }
    }
}

/// Formats an Elo value, with `inf` for the infinite ones.
pub fn format_elo(elo: f64) -> String {
    if elo.is_infinite() {
        if elo > 0.0 {
            "+inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{:+.0}", elo + 0.0) // no "-0"
    }
}

/// A sequential probability ratio test of H0 "the Elo difference is `elo0`" against H1 "it is
/// `elo1`", with error rates `alpha` (accepting H1 when H0 holds) and `beta`. The log-likelihood
/// ratio is the generalised SPRT's normal approximation on the trinomial results (as used by
/// Fishtest and cutechess).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// Where an SPRT stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtVerdict {
    /// Evidence for H1 (the stronger hypothesis).
    AcceptH1,
    /// Evidence for H0.
    AcceptH0,
    Continue,
}

impl Sprt {
    pub fn validate(&self) -> Result<(), String> {
        // Written so that a NaN bound is refused too.
        if self.elo0.is_nan() || self.elo1.is_nan() || self.elo1 <= self.elo0 {
            return Err(format!("SPRT needs elo0 < elo1, not {} and {}", self.elo0, self.elo1));
        }
        for (name, p) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(p > 0.0 && p < 0.5) {
                return Err(format!("SPRT {name} must be in (0, 0.5), not {p}"));
            }
        }
        Ok(())
    }

    /// (lower, upper) bounds of the log-likelihood ratio.
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }

    /// The log-likelihood ratio of the results so far.
    pub fn llr(&self, tally: &Tally) -> f64 {
        let n = tally.games() as f64;
        if n == 0.0 {
            return 0.0;
        }
        // All wins (or all losses) have no spread; a floor keeps the ratio finite and lets a
        // clean sweep decide after a handful of games.
        let variance = tally.per_game_variance().max(0.01);
        let (s0, s1) = (expected_score(self.elo0), expected_score(self.elo1));
        (s1 - s0) * (2.0 * tally.score() - s0 - s1) * n / (2.0 * variance)
    }

    pub fn verdict(&self, tally: &Tally) -> SprtVerdict {
        let (lower, upper) = self.bounds();
        let llr = self.llr(tally);
        if llr >= upper {
            SprtVerdict::AcceptH1
        } else if llr <= lower {
            SprtVerdict::AcceptH0
        } else {
            SprtVerdict::Continue
        }
    }
}
