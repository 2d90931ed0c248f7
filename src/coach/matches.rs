//! Matches inside the training loop (`[matches]`): every generation, before its self-play, the
//! newest checkpoint plays the configured opponent, so that a run measures itself against the
//! player it is meant to beat, at that player's time control, and (with `learn`) trains on the
//! results of those games.
//!
//! ```text
//! RUN/matches.csv          one row a generation: the checkpoint's result against the opponent
//! RUN/matches/gen-N.txt    the records of generation N's match, played by checkpoint N-1
//! ```
//!
//! The games are saved one by one in the generation's journal as they finish, so a run stopped
//! in the middle of a match resumes it with the games it played (`arena::continue_match`).

use super::checkpoint_path;
use super::files::{io, read_csv, write_file, RunError};
use super::journal::Journal;
use crate::arena::{continue_match, games_from_records, MatchSettings};
use crate::config::{Config, MatchesConfig};
use crate::nn::configure_threads;
use crate::players::Limit;
use crate::replay::{samples_of_game, Sample};
use crate::util::generation_name;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One generation's match, a row of `RUN/matches.csv`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MatchRow {
    /// The generation whose training the games joined.
    pub generation: u32,
    /// The checkpoint that played them: the generation before.
    pub checkpoint: u32,
    /// The players as the records name them.
    pub agent: String,
    pub opponent: String,
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// The checkpoint's points per game.
    pub score: f64,
    /// The Elo difference to the opponent and its 95% interval (infinite for a perfect or null
    /// score).
    pub elo: f64,
    pub elo_low: f64,
    pub elo_high: f64,
    /// Seconds this invocation spent on the match (its games before a stop not included).
    pub seconds: f64,
}

/// What a generation's match gives the loop.
pub struct PlayedMatch {
    pub row: MatchRow,
    /// The positions of its games, value target each game's result (see `samples_of_game`).
    pub samples: Vec<Sample>,
}

pub fn records_path(dir: &Path, generation: u32) -> PathBuf {
    dir.join("matches").join(format!("{}.txt", generation_name(generation)))
}

/// The records of the matches of generations 1..=`generation` that are there (a run that took
/// up `[matches]` late has none for its first generations).
pub fn records_up_to(dir: &Path, generation: u32) -> Vec<PathBuf> {
    (1..=generation).map(|g| records_path(dir, g)).filter(|path| path.exists()).collect()
}

/// Plays generation `generation`'s match with checkpoint `generation - 1`, the games in `journal`
/// counted as played, and writes its records. `saved(done)` hears of each new game once the
/// journal holds it.
pub fn play(
    dir: &Path,
    config: &Config,
    matches: &MatchesConfig,
    generation: u32,
    journal: &Journal,
    saved: &dyn Fn(usize) -> Result<(), RunError>,
) -> Result<PlayedMatch, RunError> {
    let checkpoint = generation - 1;
    let agent =
        matches.agent_spec(&checkpoint_path(dir, checkpoint), &generation_name(checkpoint))?;
    let opponent = matches.opponent_spec()?;
    let settings = MatchSettings {
        rules: config.rules,
        games: matches.games,
        opening_plies: matches.opening_plies,
        // Not the rating games' seeds: these openings are another match's.
        seed: config.run.seed
            ^ 0x6d61_7463_6865_7300
            ^ u64::from(generation).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        parallel: matches.parallel,
        limit: Limit::default(),
        sprt: None,
    };
    let journal_problem = |e: crate::arena::ArenaError| RunError::Corrupt {
        path: dir.join("selfplay").join(generation_name(generation)),
        problem: format!("the saved games of generation {generation}'s match: {e}"),
    };
    let earlier = games_from_records(journal.match_games()?, &agent, &opponent, &settings)
        .map_err(journal_problem)?;
    let done = Cell::new(earlier.len());
    // The callback cannot return an error: the first one is kept, and the rest of the games
    // are not saved (they are played out, then the error stops the run).
    let failure = RefCell::new(None);
    let started = Instant::now();
    // One libtorch thread per game: the games run side by side.
    configure_threads(1);
    let played =
        continue_match(&agent, &opponent, config.run.device, &settings, earlier, &|game, _| {
            if failure.borrow().is_some() {
                return;
            }
            done.set(done.get() + 1);
            if let Err(error) = journal
                .save_match_game(game.index + 1, &game.record)
                .and_then(|()| saved(done.get()))
            {
                failure.replace(Some(error));
            }
        });
    configure_threads(config.run.threads());
    let played = played.map_err(RunError::Match)?;
    if let Some(error) = failure.into_inner() {
        return Err(error);
    }
    let mut text = String::new();
    let mut samples = Vec::new();
    for game in &played.games {
        text.push_str(&format!("{}\n", game.record));
        samples.extend(samples_of_game(&game.record));
    }
    let path = records_path(dir, generation);
    std::fs::create_dir_all(path.parent().expect("in a folder")).map_err(io(&path))?;
    write_file(&path, text.as_bytes())?;
    let tally = played.tally;
    let elo = tally.elo();
    let row = MatchRow {
        generation,
        checkpoint,
        agent: agent.text,
        opponent: opponent.text,
        games: tally.games(),
        wins: tally.wins,
        draws: tally.draws,
        losses: tally.losses,
        score: tally.score(),
        // (+ 0.0: an even score is 0, not -0.)
        elo: elo.elo + 0.0,
        elo_low: elo.low + 0.0,
        elo_high: elo.high + 0.0,
        seconds: started.elapsed().as_secs_f64(),
    };
    Ok(PlayedMatch { row, samples })
}

/// The rows of `RUN/matches.csv` up to `generation`: the row of a generation stopped after the
/// file was written and before its commit is dropped, and comes back when that generation
/// finishes its match from its journal. None if there is no such file yet.
pub fn read_rows(path: &Path, generation: u32) -> Result<Vec<MatchRow>, RunError> {
    read_csv(path, |row: &MatchRow| row.generation <= generation)
}
