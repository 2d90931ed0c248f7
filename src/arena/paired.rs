//! Two matches on the same openings compared round by round (`epaminondas compare`).
//!
//! A match of A against B with a given seed plays the same openings in the same rounds, so two
//! candidates' matches against one opponent can be compared opening by opening: the interval
//! comes from the spread of the per-round differences, which leaves out whatever the openings
//! add to the spread of each score. With openings of four random plies on the 14x12 board that
//! part is small (the paired intervals in docs/ are about as wide as unpaired ones), but the
//! pairing also keeps the comparison to the same games: a round missing from one file, as in a
//! match cut short, is left out of both. Several such pairs (the same candidates and opponent
//! with other seeds) pool into one comparison, and several matches of the same two players into
//! one tally (`epaminondas tally`).

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
    #[error("record {number} of {file}: {problem}")]
    Record { file: String, number: usize, problem: String },
    #[error("round {round} did not begin the same way in the two files (pair {pair} of files; other seeds or opening plies?), so their games are not paired")]
    OtherOpening { pair: usize, round: usize },
    #[error("only {0} round(s) are in both files; a paired interval needs at least 2")]
    TooFewRounds(usize),
    #[error(
        "{file} is {found}, the first file {expected}: pooled matches must be of the same players"
    )]
    OtherPlayers { file: String, found: String, expected: String },
}

/// One game's round, A's score in it, and its opening (the start and the opening plies).
struct Round {
    score: f64,
    opening: (crate::game::Position, Vec<crate::game::Move>),
}

/// The games of one match (the records of `match A B --records`), by round: A's score in each,
/// and whether A had White.
pub struct MatchRounds {
    /// A and B of `match A B`.
    pub players: (String, String),
    rounds: BTreeMap<usize, Round>,
}

impl MatchRounds {
    /// Reads one match's records; `file` names them in errors ("the first file", a path).
    pub fn read(records: &[GameRecord], file: &str) -> Result<MatchRounds, PairingError> {
        let mut names: Option<(String, String)> = None;
        let mut rounds = BTreeMap::new();
        for (i, record) in records.iter().enumerate() {
            let refuse = |problem: String| PairingError::Record {
                file: file.to_string(),
                number: i + 1,
                problem,
            };
            let round: usize = match record.tag("Round").map(str::parse) {
                Some(Ok(round)) if round >= 1 => round,
                Some(_) => {
                    return Err(refuse(format!(
                        "its Round tag {:?} is not a round number",
                        record.tag("Round").unwrap_or_default()
                    )))
                }
                None => return Err(refuse("it has no Round tag (is it a match record?)".into())),
            };
            let opening_plies: usize = record
                .tag("OpeningPlies")
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| refuse("it has no OpeningPlies tag".into()))?;
            let a_is_white = a_is_white(round - 1);
            let (a, b) = if a_is_white {
                (&record.white, &record.black)
            } else {
                (&record.black, &record.white)
            };
            match &names {
                None => names = Some((a.clone(), b.clone())),
                Some(earlier) if (&earlier.0, &earlier.1) != (a, b) => {
                    return Err(refuse(format!("it is {a} against {b}, the file's earlier games {} against {}: a file must hold one match", earlier.0, earlier.1)));
                }
                Some(_) => {}
            }
            let score = a_score(record, a_is_white);
            let opening =
                (record.start, record.moves.iter().take(opening_plies).copied().collect());
            if rounds.insert(round, Round { score, opening }).is_some() {
                return Err(refuse(format!("round {round} appears twice")));
            }
        }
        Ok(MatchRounds { players: names.unwrap_or_default(), rounds })
    }

    /// A's score in every game, with whether A had White, in round order.
    pub fn scores(&self) -> impl Iterator<Item = (bool, f64)> + '_ {
        self.rounds.iter().map(|(&round, r)| (a_is_white(round - 1), r.score))
    }

    fn describe_players(&self) -> String {
        format!("{} against {}", self.players.0, self.players.1)
    }
}

/// Several matches of the same two players pooled (each file read by [`MatchRounds::read`] under
/// its name): refused where a file's players differ from the first's.
pub fn pool(files: &[(&str, &[GameRecord])]) -> Result<Vec<MatchRounds>, PairingError> {
    let mut matches: Vec<MatchRounds> = Vec::new();
    for (file, records) in files {
        let read = MatchRounds::read(records, file)?;
        if let Some(first) = matches.first().filter(|first| first.players != read.players) {
            return Err(PairingError::OtherPlayers {
                file: file.to_string(),
                found: read.describe_players(),
                expected: first.describe_players(),
            });
        }
        matches.push(read);
    }
    Ok(matches)
}

/// Pairs the games of two matches round by round and compares their first players' scores.
/// The rounds must have begun alike (same start and opening plies), or the files are not
/// matches on the same openings and comparing them would mean nothing.
pub fn compare(
    first: &[GameRecord],
    second: &[GameRecord],
) -> Result<PairedComparison, PairingError> {
    compare_pooled(
        &[MatchRounds::read(first, "the first file")?],
        &[MatchRounds::read(second, "the second file")?],
    )
}

/// [`compare`] over several pairs of matches, the i-th of `firsts` with the i-th of `seconds`
/// (each pair on openings of its own: the same two candidates against one opponent with several
/// seeds, say), every round of every pair one paired difference. Each side should be of one pair
/// of players, as [`pool`] makes sure; the names reported are those of the first pair.
pub fn compare_pooled(
    firsts: &[MatchRounds],
    seconds: &[MatchRounds],
) -> Result<PairedComparison, PairingError> {
    let mut scores = Vec::new();
    let mut unpaired = 0;
    for (pair, (first, second)) in firsts.iter().zip(seconds).enumerate() {
        let before = scores.len();
        for (&round, a) in &first.rounds {
            if let Some(b) = second.rounds.get(&round) {
                if a.opening != b.opening {
                    return Err(PairingError::OtherOpening { pair: pair + 1, round });
                }
                scores.push((a.score, b.score));
            }
        }
        unpaired += first.rounds.len() + second.rounds.len() - 2 * (scores.len() - before);
    }
    let n = scores.len();
    if n < 2 {
        return Err(PairingError::TooFewRounds(n));
    }
    let mean = |values: &mut dyn Iterator<Item = f64>| values.sum::<f64>() / n as f64;
    let difference = mean(&mut scores.iter().map(|(a, b)| a - b));
    let variance =
        scores.iter().map(|(a, b)| (a - b - difference).powi(2)).sum::<f64>() / (n - 1) as f64;
    let players =
        |matches: &[MatchRounds]| matches.first().map(|m| m.players.clone()).unwrap_or_default();
    let (first, second) = (players(firsts), players(seconds));
    Ok(PairedComparison {
        players: (first.0, second.0),
        opponents: (first.1, second.1),
        rounds: n,
        scores: (mean(&mut scores.iter().map(|p| p.0)), mean(&mut scores.iter().map(|p| p.1))),
        difference,
        half_width: Z95 * (variance / n as f64).sqrt(),
        unpaired,
    })
}
