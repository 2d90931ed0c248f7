//! Two matches on the same openings compared round by round (`epaminondas compare`).
//!
//! A match of A against B with a given seed plays the same openings in the same rounds, so two
//! candidates' matches against one opponent can be compared opening by opening: the interval
//! comes from the spread of the per-round differences, which leaves out whatever the openings
//! add to the spread of each score. With openings of four random plies on the 14x12 board that
//! part is small (the README's paired intervals are about as wide as unpaired ones), but the
//! pairing also keeps the comparison to the same games: a round missing from one file, as in a
//! match cut short, is left out of both.

use super::elo::Z95;
use super::{a_is_white, a_score};
use crate::game::GameRecord;
use std::collections::BTreeMap;

/// What comparing two record files found.
#[derive(Clone, Debug, PartialEq)]
pub struct PairedComparison {
    /// The first player (A of `match A B`) of each file, and its opponent (B).
    pub players: (String, String),
    pub opponents: (String, String),
    /// Rounds found in both files.
    pub rounds: usize,
    /// Each file's A's mean score over those rounds.
    pub scores: (f64, f64),
    /// The mean of first minus second per round, and the half-width of its 95% interval.
    pub difference: f64,
    pub half_width: f64,
    /// Rounds found in one file only, left out.
    pub unpaired: usize,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PairingError {
    #[error("record {number} of the {file} file: {problem}")]
    Record { file: &'static str, number: usize, problem: String },
    #[error("round {round} did not begin the same way in the two files (other seeds or opening plies?), so their games are not paired")]
    OtherOpening { round: usize },
    #[error("only {0} round(s) are in both files; a paired interval needs at least 2")]
    TooFewRounds(usize),
}

/// One game's round, A's score in it, and its opening (the start and the opening plies).
struct Round {
    score: f64,
    opening: (crate::game::Position, Vec<crate::game::Move>),
}

/// The rounds of one file, keyed by number, with the names of its A and B.
fn rounds(records: &[GameRecord], file: &'static str) -> Result<((String, String), BTreeMap<usize, Round>), PairingError> {
    let mut names: Option<(String, String)> = None;
    let mut rounds = BTreeMap::new();
    for (i, record) in records.iter().enumerate() {
        let refuse = |problem: String| PairingError::Record { file, number: i + 1, problem };
        let round: usize = match record.tag("Round").map(str::parse) {
            Some(Ok(round)) if round >= 1 => round,
            Some(_) => return Err(refuse(format!("its Round tag {:?} is not a round number", record.tag("Round").unwrap_or_default()))),
            None => return Err(refuse("it has no Round tag (is it a match record?)".into())),
        };
        let opening_plies: usize = record.tag("OpeningPlies").and_then(|p| p.parse().ok()).ok_or_else(|| refuse("it has no OpeningPlies tag".into()))?;
        let a_is_white = a_is_white(round - 1);
        let (a, b) = if a_is_white { (&record.white, &record.black) } else { (&record.black, &record.white) };
        match &names {
            None => names = Some((a.clone(), b.clone())),
            Some(earlier) if (&earlier.0, &earlier.1) != (a, b) => {
                return Err(refuse(format!("it is {a} against {b}, the file's earlier games {} against {}: a file must hold one match", earlier.0, earlier.1)));
            }
            Some(_) => {}
        }
        let score = a_score(record, a_is_white);
        let opening = (record.start, record.moves.iter().take(opening_plies).copied().collect());
        if rounds.insert(round, Round { score, opening }).is_some() {
            return Err(refuse(format!("round {round} appears twice")));
        }
    }
    Ok((names.unwrap_or_default(), rounds))
}

/// Pairs the games of two matches round by round and compares their first players' scores.
/// The rounds must have begun alike (same start and opening plies), or the files are not
/// matches on the same openings and comparing them would mean nothing.
pub fn compare(first: &[GameRecord], second: &[GameRecord]) -> Result<PairedComparison, PairingError> {
    let (first_names, first_rounds) = rounds(first, "first")?;
    let (second_names, second_rounds) = rounds(second, "second")?;
    let mut pairs = Vec::new();
    for (&round, a) in &first_rounds {
        if let Some(b) = second_rounds.get(&round) {
            if a.opening != b.opening {
                return Err(PairingError::OtherOpening { round });
            }
            pairs.push((a.score, b.score));
        }
    }
    let n = pairs.len();
    if n < 2 {
        return Err(PairingError::TooFewRounds(n));
    }
    let mean = |values: &mut dyn Iterator<Item = f64>| values.sum::<f64>() / n as f64;
    let difference = mean(&mut pairs.iter().map(|(a, b)| a - b));
    let variance = pairs.iter().map(|(a, b)| (a - b - difference).powi(2)).sum::<f64>() / (n - 1) as f64;
    Ok(PairedComparison {
        players: (first_names.0, second_names.0),
        opponents: (first_names.1, second_names.1),
        rounds: n,
        scores: (mean(&mut pairs.iter().map(|p| p.0)), mean(&mut pairs.iter().map(|p| p.1))),
        difference,
        half_width: Z95 * (variance / n as f64).sqrt(),
        unpaired: first_rounds.len() + second_rounds.len() - 2 * n,
    })
}
