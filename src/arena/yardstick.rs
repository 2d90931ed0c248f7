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
    pub fn tally(&self) -> Tally {
        Tally { wins: self.wins, draws: self.draws, losses: self.losses }
    }
}

/// The generation whose checkpoint stands for `hours` of training: the newest one finished by
/// then (generation 0, the untrained network, before the first one finishes). `None` while the
/// run has trained for less than `hours`.
pub fn generation_at(metrics: &[MetricsRow], hours: f64) -> Option<u32> {
    let seconds = hours * 3600.0;
    let trained = metrics.last().map_or(0.0, |row| row.wall_seconds);
    if trained < seconds {
        return None;
    }
    Some(
        metrics
            .iter()
            .take_while(|row| row.wall_seconds <= seconds)
            .last()
            .map_or(0, |row| row.generation),
    )
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
/// against the same opponent, the rows in order of generation; the file is replaced atomically.
pub fn record(path: &Path, row: YardstickRow) -> Result<(), RunError> {
    let mut rows = read_table(path)?;
    rows.retain(|r| !(r.generation == row.generation && r.opponent == row.opponent));
    rows.push(row);
    rows.sort_by_key(|r| r.generation);
    write_csv(path, &rows)
}
