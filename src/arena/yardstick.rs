//! A run's yardstick: its newest checkpoint at given hours of training against fixed opponents
//! at equal time a move, which says what training gives by the hour. `epaminondas yardstick`
//! plays the matches; this module picks the checkpoints and keeps the table of results.

use crate::arena::elo::Tally;
use crate::coach::files::{read_csv, write_csv};
use crate::coach::{MetricsRow, RunError};
use crate::players::PlayerSpec;
use std::path::Path;

/// One row of a yardstick table (`RUN/yardstick.csv`): a checkpoint of the run against one
/// opponent, in `epaminondas match` (the score is the checkpoint's).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize, PartialEq)]
pub struct YardstickRow {
    pub generation: u32,
    pub opponent: String,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
}

impl YardstickRow {
    pub fn new(generation: u32, opponent: String, tally: &Tally) -> YardstickRow {
        let Tally { wins, draws, losses } = *tally;
        YardstickRow { generation, opponent, wins, draws, losses }
    }

    pub fn tally(&self) -> Tally {
        Tally { wins: self.wins, draws: self.draws, losses: self.losses }
    }
}

/// Why no checkpoint stands for an hour of training yet.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the run has trained {trained:.2} hours, not yet {asked}")]
pub struct NotYet {
    pub trained: f64,
    pub asked: f64,
}

/// The generation whose checkpoint stands for `hours` of training: the newest one finished by
/// then (generation 0, the network the run started from, before the first one finishes).
pub fn generation_at(metrics: &[MetricsRow], hours: f64) -> Result<u32, NotYet> {
    let seconds = hours * 3600.0;
    let trained = metrics.iter().map(|row| row.wall_seconds).fold(0.0, f64::max);
    if trained < seconds {
        return Err(NotYet { trained: trained / 3600.0, asked: hours });
    }
    let finished = metrics.iter().filter(|row| row.wall_seconds <= seconds);
    Ok(finished.map(|row| row.generation).max().unwrap_or(0))
}

/// What a yardstick table calls an opponent: its name and the match's time a move ("alphabeta
/// at 1 s"), which the checkpoint searches for; random and greedy take no clock.
pub fn opponent_label(opponent: &PlayerSpec, seconds: f64) -> String {
    format!("{opponent} at {seconds} s")
}

/// The table at `path` (empty if there is none yet).
pub fn read_table(path: &Path) -> Result<Vec<YardstickRow>, RunError> {
    read_csv(path, |_| true)
}

/// Writes `row` into the table at `path`, in place of an earlier result of the same checkpoint
/// against the same opponent (the latest measurement is the one kept), the rows in order of
/// generation; the file is replaced atomically.
pub fn record(path: &Path, row: YardstickRow) -> Result<(), RunError> {
    let mut rows = read_table(path)?;
    rows.retain(|r| !(r.generation == row.generation && r.opponent == row.opponent));
    rows.push(row);
    rows.sort_by_key(|r| r.generation);
    write_csv(path, &rows)
}
