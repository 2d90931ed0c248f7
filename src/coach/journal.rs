//! The games of the generation in progress, each saved as it finishes, so that a run stopped
//! in the middle of a generation (Ctrl-C, a crash) resumes with them and plays only the rest.
//! A generation of a large network on a CPU takes half an hour; without this a stop lost it.
//!
//! ```text
//! RUN/selfplay/gen-N/game-I.bin   game I's training samples (the replay chunk format)
//! RUN/selfplay/gen-N/game-I.txt   game I's record, written after its samples
//! RUN/selfplay/gen-N/seconds.txt   the generation's seconds of work up to its last saved game
//! RUN/selfplay/gen-N/match-I.txt   round I's record of the generation's match ([matches])
//! ```
//!
//! Each file is written atomically, samples first, so a game whose record is there is whole.
//! The folder is removed once the generation is committed.

use super::files::{corrupt, io, write_file, RunError};
use crate::game::{GameRecord, Rules};
use crate::replay::{encode_chunk, read_samples};
use crate::selfplay::FinishedGame;
use std::path::{Path, PathBuf};

/// The saved games of one generation.
pub struct Journal {
    dir: PathBuf,
    rules: Rules,
}

impl Journal {
    /// The journal of `generation` in the run at `run_dir`. Journals of other generations are
    /// removed: they belong to generations already committed (their removal was interrupted).
    /// Anything else in the folder is not the run's and is left alone.
    pub fn open(run_dir: &Path, generation: u32, rules: Rules) -> Result<Journal, RunError> {
        let parent = run_dir.join("selfplay");
        let dir = parent.join(crate::util::generation_name(generation));
        if let Ok(entries) = std::fs::read_dir(&parent) {
            let stale_journals = entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|path| *path != dir && path.is_dir() && is_journal_name(path));
            for stale in stale_journals {
                std::fs::remove_dir_all(&stale).map_err(io(&stale))?;
            }
        }
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        Ok(Journal { dir, rules })
    }

    fn path(&self, index: usize, extension: &str) -> PathBuf {
        self.dir.join(format!("game-{index:06}.{extension}"))
    }

    /// Saves a finished game.
    pub fn save(&self, game: &FinishedGame) -> Result<(), RunError> {
        write_file(&self.path(game.index, "bin"), &encode_chunk(&game.samples, &self.rules))?;
        write_file(&self.path(game.index, "txt"), game.record.to_string().as_bytes())
    }

    /// Records that the generation has taken `seconds` so far (the stopped invocations' time
    /// and this one's), so that its wall time counts the work before a stop.
    pub fn save_seconds(&self, seconds: f64) -> Result<(), RunError> {
        write_file(&self.dir.join(SECONDS_FILE), format!("{seconds}\n").as_bytes())
    }

    /// The seconds recorded by [`Journal::save_seconds`], 0 when none were (a fresh generation,
    /// or a journal written before they were). A file that does not read as a number of
    /// seconds is an error naming it.
    pub fn seconds(&self) -> Result<f64, RunError> {
        let path = self.dir.join(SECONDS_FILE);
        if !path.exists() {
            return Ok(0.0);
        }
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        match text.trim().parse::<f64>() {
            Ok(seconds) if seconds.is_finite() && seconds >= 0.0 => Ok(seconds),
            _ => Err(RunError::Corrupt {
                path,
                problem: format!("{:?} is not a number of seconds", text.trim()),
            }),
        }
    }

    /// The games saved so far, by index. A record without its samples, or a file that does not
    /// read back, is an error naming the file: files are written whole, so either means the
    /// folder was damaged, and playing on would drop or repeat games without saying so.
    pub fn finished_games(&self) -> Result<Vec<FinishedGame>, RunError> {
        self.records_named("game-")?
            .into_iter()
            .map(|(index, record)| {
                Ok(FinishedGame {
                    index,
                    record,
                    samples: read_samples(&self.path(index, "bin"), &self.rules)?,
                    simulations: 0,
                })
            })
            .collect()
    }

    /// Saves a finished game of the generation's match (`[matches]`).
    pub fn save_match_game(&self, round: usize, record: &GameRecord) -> Result<(), RunError> {
        write_file(&self.dir.join(format!("match-{round:06}.txt")), record.to_string().as_bytes())
    }

    /// The match games saved so far, in round order. A file that does not read back is an error
    /// naming it, as in [`Journal::finished_games`].
    pub fn match_games(&self) -> Result<Vec<GameRecord>, RunError> {
        Ok(self.records_named("match-")?.into_iter().map(|(_, record)| record).collect())
    }

    /// The records `PREFIXI.txt` in the journal, with their I, in order of I.
    fn records_named(&self, prefix: &str) -> Result<Vec<(usize, GameRecord)>, RunError> {
        let mut records = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(io(&self.dir))? {
            let path = entry.map_err(io(&self.dir))?.path();
            let Some(index) = numbered(&path, prefix) else { continue };
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            let record = GameRecord::parse(&text).map_err(corrupt(&path))?;
            records.push((index, record));
        }
        records.sort_by_key(|(index, _)| *index);
        Ok(records)
    }

    /// Removes the journal, once its generation is committed.
    pub fn remove(self) -> Result<(), RunError> {
        std::fs::remove_dir_all(&self.dir).map_err(io(&self.dir))
    }
}

const SECONDS_FILE: &str = "seconds.txt";

/// Whether a folder's name is a generation's, as [`crate::util::generation_name`] writes it.
fn is_journal_name(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.strip_prefix("gen-")
        .and_then(|number| number.parse::<u32>().ok())
        .is_some_and(|number| crate::util::generation_name(number) == name)
}

/// I of a file `PREFIXI.txt`; None for any other file (a samples file, a record of another
/// prefix, or the temporary file of an atomic write).
fn numbered(path: &Path, prefix: &str) -> Option<usize> {
    let name = path.file_name()?.to_str()?;
    name.strip_prefix(prefix)?.strip_suffix(".txt")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_generation_names_are_journals() {
        assert!(is_journal_name(Path::new("run/selfplay/gen-000042")));
        for other in ["notes.txt", "gen-42", "gen-0000042", "gen-", ".gen-000042"] {
            assert!(!is_journal_name(Path::new(other)), "{other}");
        }
    }
}
