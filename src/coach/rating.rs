//! Rating checkpoints during training. Every game a checkpoint plays for its rating is kept in
//! `RUN/ratings/games.csv`; after each rating all ratings are fitted again over every such game
//! (so older checkpoints' ratings sharpen as more games involve them) and written to
//! `RUN/ratings/ratings.csv`. The records of the games go to `RUN/ratings/gen-N.txt`.

use super::files::{io, read_csv, write_csv, write_file, RunError};
use super::{checkpoint_path, Observer};
use crate::arena::ratings::{fit_with_errors, RatedGame};
use crate::arena::{play_match, MatchSettings};
use crate::config::Config;
use crate::nn::configure_threads;
use crate::players::{Limit, PlayerKind, PlayerSpec};
use crate::util::generation_name;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One rating game, by player name (`gen-000005`, `random`, ...).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RatingGame {
    /// The generation whose rating this game was played for.
    pub rated_generation: u32,
    pub white: String,
    pub black: String,
    pub white_score: f64,
}

/// A fitted rating.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RatingRow {
    pub player: String,
    /// The checkpoint's generation; empty for baselines.
    pub generation: Option<u32>,
    pub elo: f64,
    /// Half-width of the 95% interval.
    pub error: f64,
    pub games: usize,
}

fn checkpoint_player(dir: &Path, generation: u32, simulations: u64) -> PlayerSpec {
    let limit = Limit { nodes: Some(simulations), ..Limit::default() };
    PlayerSpec::new(
        PlayerKind::Net(checkpoint_path(dir, generation)),
        limit,
        generation_name(generation),
    )
}

pub fn read_games(path: &Path) -> Result<Vec<RatingGame>, RunError> {
    read_csv(path, |_| true)
}

pub fn read_ratings(path: &Path) -> Result<Vec<RatingRow>, RunError> {
    read_csv(path, |_| true)
}

/// Plays `generation`'s rating games and refits every rating. Returns the checkpoint's Elo and
/// the half-width of its 95% interval. Safe to repeat after a crash: the generation's earlier
/// games are replaced, not added to.
pub fn rate(
    dir: &Path,
    config: &Config,
    generation: u32,
    observer: &dyn Observer,
) -> Result<(f64, f64), RunError> {
    let evaluation = &config.evaluation;
    let ratings_dir = dir.join("ratings");
    std::fs::create_dir_all(&ratings_dir).map_err(io(&ratings_dir))?;
    let games_path = ratings_dir.join("games.csv");
    let mut games: Vec<RatingGame> =
        read_games(&games_path)?.into_iter().filter(|g| g.rated_generation != generation).collect();

    let candidate = checkpoint_player(dir, generation, evaluation.simulations);
    let mut opponents = evaluation.baseline_specs()?;
    opponents.push(checkpoint_player(
        dir,
        generation.saturating_sub(evaluation.every),
        evaluation.simulations,
    ));
    let settings = MatchSettings {
        rules: config.rules,
        games: evaluation.games,
        opening_plies: evaluation.opening_plies,
        seed: config.run.seed ^ u64::from(generation).wrapping_mul(0x2545_F491_4F6C_DD1D),
        parallel: config.run.threads(),
        limit: Limit::default(),
        sprt: None,
    };
    observer.rating_started(generation, settings.games * opponents.len());
    // One libtorch thread per game: the games run side by side.
    configure_threads(1);
    let played: Result<Vec<_>, _> = opponents
        .iter()
        .map(|opponent| {
            play_match(&candidate, opponent, config.run.device, &settings, &|_, _| {
                observer.rating_game_finished()
            })
            .map(|result| (opponent, result))
        })
        .collect();
    configure_threads(config.run.threads());
    let mut records = String::new();
    for (opponent, result) in played? {
        for game in result.games {
            let (white, black) = if game.a_is_white {
                (&candidate.text, &opponent.text)
            } else {
                (&opponent.text, &candidate.text)
            };
            let white_score = if game.a_is_white { game.a_score } else { 1.0 - game.a_score };
            games.push(RatingGame {
                rated_generation: generation,
                white: white.clone(),
                black: black.clone(),
                white_score,
            });
            records.push_str(&format!("{}\n", game.record));
        }
    }
    write_file(
        &ratings_dir.join(format!("{}.txt", generation_name(generation))),
        records.as_bytes(),
    )?;
    write_csv(&games_path, &games)?;

    let ratings = fit_all(&games, config.run.seed);
    write_csv(&ratings_dir.join("ratings.csv"), &ratings)?;
    let own = ratings.iter().find(|r| r.player == candidate.text).expect("the candidate played");
    Ok((own.elo, own.error))
}

/// Ratings of every player in `games`, `random` (or else the first checkpoint) at 0.
pub fn fit_all(games: &[RatingGame], seed: u64) -> Vec<RatingRow> {
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for game in games {
        for name in [&game.white, &game.black] {
            let next = index.len();
            index.entry(name).or_insert(next);
        }
    }
    let names: Vec<&str> = {
        let mut names = vec![""; index.len()];
        for (name, &i) in &index {
            names[i] = name;
        }
        names
    };
    let rated: Vec<RatedGame> = games
        .iter()
        .map(|g| RatedGame {
            white: index[g.white.as_str()],
            black: index[g.black.as_str()],
            white_score: g.white_score,
        })
        .collect();
    let anchor = index
        .get("random")
        .or_else(|| index.get(generation_name(0).as_str()))
        .copied()
        .unwrap_or(0);
    let fitted = fit_with_errors(names.len(), &rated, anchor, 100, seed);
    let mut rows: Vec<RatingRow> = names
        .iter()
        .enumerate()
        .map(|(i, name)| RatingRow {
            player: name.to_string(),
            generation: name.strip_prefix("gen-").and_then(|g| g.parse().ok()),
            elo: fitted.elo[i],
            error: fitted.error[i],
            games: rated.iter().filter(|g| g.white == i || g.black == i).count(),
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.generation.is_some(), a.generation, &a.player).cmp(&(
            b.generation.is_some(),
            b.generation,
            &b.player,
        ))
    });
    rows
}
