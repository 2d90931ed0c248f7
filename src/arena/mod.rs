//! Matches between players: varied openings played with both colours, games in parallel,
//! results as Elo with an interval, optional early stopping by SPRT, and a match cut short
//! continued from its records; round-robin tournaments with maximum-likelihood ratings; a
//! run's yardstick, its checkpoints by hours of training against fixed opponents.

pub mod elo;
pub mod paired;
pub mod ratings;
pub mod yardstick;

use crate::game::{GameRecord, Move, Position, RecordResult, Rules, Status};
use crate::nn::DeviceChoice;
use crate::players::{Limit, Player, PlayerError, PlayerSpec};
use elo::{Sprt, SprtVerdict, Tally};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// The most games a match plays (the games to play are listed up front).
pub const MAX_MATCH_GAMES: usize = 100_000;
/// The most games played at once, each a thread with two players of its own: as many as the
/// cores the program uses at most (`config::MAX_THREADS`), which the default of one a core
/// never exceeds.
pub const MAX_MATCH_PARALLEL: usize = crate::config::MAX_THREADS;

/// How a match is played.
#[derive(Clone, Debug)]
pub struct MatchSettings {
    /// The rules; they must have a ply cap, so every game ends.
    pub rules: Rules,
    pub games: usize,
    /// Uniformly random plies at the start of each opening; each opening is played twice, with
    /// colours swapped, so neither player profits from a lucky opening.
    pub opening_plies: u32,
    pub seed: u64,
    /// Games played at once (each in its own thread with its own players).
    pub parallel: usize,
    /// Overrides each player's own limit where set (for "equal time per move").
    pub limit: Limit,
    pub sprt: Option<Sprt>,
}

impl MatchSettings {
    /// Refuses a match that could not end or could not be held in memory.
    pub fn check(&self) -> Result<(), ArenaError> {
        if self.rules.ply_cap.is_none() {
            return Err(ArenaError::NoPlyCap);
        }
        if self.games == 0 {
            return Err(ArenaError::NoGames);
        }
        if self.games > MAX_MATCH_GAMES {
            return Err(ArenaError::TooManyGames(self.games));
        }
        if self.parallel > MAX_MATCH_PARALLEL {
            return Err(ArenaError::TooManyAtOnce(self.parallel));
        }
        Ok(())
    }
}

/// One finished game of a match.
#[derive(Clone, Debug)]
pub struct GameResult {
    pub index: usize,
    pub a_is_white: bool,
    /// Player A's score: 1, 0.5 or 0.
    pub a_score: f64,
    pub record: GameRecord,
}

/// A finished (or SPRT-stopped) match, games in index order.
#[derive(Clone, Debug)]
pub struct MatchResult {
    pub games: Vec<GameResult>,
    /// Player A's results.
    pub tally: Tally,
    /// The SPRT's verdict where one was asked for.
    pub sprt: Option<SprtVerdict>,
}

#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    #[error(transparent)]
    Player(#[from] PlayerError),
    #[error("a match needs rules with a ply cap, so that every game ends")]
    NoPlyCap,
    #[error("a match needs at least one game")]
    NoGames,
    #[error("a match plays at most {MAX_MATCH_GAMES} games, not {0}")]
    TooManyGames(usize),
    #[error("a match plays at most {MAX_MATCH_PARALLEL} games at once, not {0}")]
    TooManyAtOnce(usize),
    /// A record handed to [`games_from_records`] is not a game of the match to be continued.
    #[error("record {number} is not a game of this match: {problem}")]
    ForeignRecord { number: usize, problem: String },
}

/// `plies` uniformly random moves from the start, stopping early rather than finishing the game.
pub fn random_opening(rules: Rules, plies: u32, seed: u64) -> Vec<Move> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut position = Position::start(rules).expect("validated rules have a start position");
    let mut moves = Vec::new();
    for _ in 0..plies {
        let candidates: Vec<Move> = position
            .legal_moves()
            .into_iter()
            .filter(|&mv| position.play_unchecked(mv).status() == Status::Ongoing)
            .collect();
        let Some(&mv) = candidates.choose(&mut rng) else { break };
        position = position.play_unchecked(mv);
        moves.push(mv);
    }
    moves
}

/// The opening of game `index` (each opening serves two games, one with each colour).
fn match_opening(settings: &MatchSettings, index: usize) -> Vec<Move> {
    random_opening(
        settings.rules,
        settings.opening_plies,
        settings.seed ^ (index as u64 / 2).wrapping_mul(0xD1B5_4A32_D192_ED03),
    )
}

/// Plays one game from the start position after `opening`, asking each player in turn.
pub fn play_game(
    white: &mut dyn Player,
    black: &mut dyn Player,
    rules: Rules,
    opening: &[Move],
    limit: Limit,
) -> GameRecord {
    let start = Position::start(rules).expect("validated rules have a start position");
    let mut moves = opening.to_vec();
    let mut position = opening.iter().fold(start, |p, mv| p.play_unchecked(*mv));
    while position.status() == Status::Ongoing {
        let player: &mut dyn Player = if position.side_to_move() == crate::game::Color::White {
            &mut *white
        } else {
            &mut *black
        };
        let decision = player.choose(&position, limit);
        // A player bug must not corrupt the record: an illegal move loses on the spot.
        match position.play(decision.mv) {
            Ok(next) => {
                moves.push(decision.mv);
                position = next;
            }
            Err(_) => {
                return GameRecord::new(&white.name(), &black.name(), start, moves)
                    .resigned(position.side_to_move())
                    .with_tag("IllegalMove", decision.mv)
            }
        }
    }
    GameRecord::new(&white.name(), &black.name(), start, moves)
}

/// White's score in a finished record.
pub fn white_score(record: &GameRecord) -> f64 {
    match record.result {
        RecordResult::WhiteWins => 1.0,
        RecordResult::BlackWins => 0.0,
        _ => 0.5,
    }
}

/// Whether a match's first player (A of `match A B`) has White in the game of this index
/// (round index + 1): each opening is played twice, A White first.
pub fn a_is_white(index: usize) -> bool {
    index.is_multiple_of(2)
}

/// A's score in a finished record, given whether A had White.
pub fn a_score(record: &GameRecord, a_is_white: bool) -> f64 {
    if a_is_white {
        white_score(record)
    } else {
        1.0 - white_score(record)
    }
}

/// Plays a match of `a` against `b`. `on_game` hears of each game as it finishes, with A's tally
/// so far. Game `i` uses opening `i / 2`, with A as White when `i` is even; seeds derive from
/// `settings.seed` and `i`, so a match is reproducible (with node or depth limits; a clock is
/// never exactly reproducible).
pub fn play_match(
    a: &PlayerSpec,
    b: &PlayerSpec,
    device: DeviceChoice,
    settings: &MatchSettings,
    on_game: &dyn Fn(&GameResult, &Tally),
) -> Result<MatchResult, ArenaError> {
    continue_match(a, b, device, settings, Vec::new(), on_game)
}

/// Plays the games of a match that `earlier` (from [`games_from_records`]) does not hold, and
/// returns the whole match. Each game is played exactly as [`play_match`] would have played it,
/// so a match cut short and continued is the match played in one go. `on_game` hears only of
/// the new games, with the tally of all; an SPRT that `earlier` already decides plays nothing.
pub fn continue_match(
    a: &PlayerSpec,
    b: &PlayerSpec,
    device: DeviceChoice,
    settings: &MatchSettings,
    earlier: Vec<GameResult>,
    on_game: &dyn Fn(&GameResult, &Tally),
) -> Result<MatchResult, ArenaError> {
    settings.check()?;
    let played: HashSet<usize> = earlier.iter().map(|g| g.index).collect();
    let pending: Vec<usize> = (0..settings.games).filter(|i| !played.contains(i)).collect();
    let mut tally: Tally = earlier.iter().map(|g| g.a_score).collect();
    let mut results = earlier;
    let mut verdict = settings.sprt.map(|sprt| sprt.verdict(&tally));
    if pending.is_empty() || verdict.is_some_and(|v| v != SprtVerdict::Continue) {
        results.sort_by_key(|r| r.index);
        return Ok(MatchResult { games: results, tally, sprt: verdict });
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (sender, receiver) = mpsc::channel::<Result<GameResult, PlayerError>>();
    let workers = settings.parallel.clamp(1, pending.len());
    let mut failure = None;
    std::thread::scope(|scope| {
        for worker in 0..workers {
            let sender = sender.clone();
            let (next, stop, pending) = (&next, &stop, &pending);
            scope.spawn(move || {
                let seed = settings.seed ^ 0xA5A5_0000 ^ worker as u64;
                let players =
                    a.build(device, seed).and_then(|pa| Ok((pa, b.build(device, seed ^ 1)?)));
                let (mut player_a, mut player_b) = match players {
                    Ok(players) => players,
                    Err(error) => {
                        let _ = sender.send(Err(error));
                        return;
                    }
                };
                while !stop.load(Ordering::Relaxed) {
                    let Some(&index) = pending.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        break;
                    };
                    let game_seed = settings
                        .seed
                        .wrapping_add(index as u64)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    player_a.new_game(game_seed);
                    player_b.new_game(game_seed ^ 0x5555);
                    let opening = match_opening(settings, index);
                    let a_is_white = a_is_white(index);
                    let (mut record, white, black) = if a_is_white {
                        (
                            play_game(
                                player_a.as_mut(),
                                player_b.as_mut(),
                                settings.rules,
                                &opening,
                                settings.limit,
                            ),
                            a,
                            b,
                        )
                    } else {
                        (
                            play_game(
                                player_b.as_mut(),
                                player_a.as_mut(),
                                settings.rules,
                                &opening,
                                settings.limit,
                            ),
                            b,
                            a,
                        )
                    };
                    // Named by their specs, options included, so that two players of one network
                    // (`precision=f32` against `precision=bf16`, say) stay apart in the records.
                    (record.white, record.black) = (white.text.clone(), black.text.clone());
                    let record = record
                        .with_tag("Round", index + 1)
                        .with_tag("OpeningPlies", opening.len())
                        .with_tag("Seed", settings.seed);
                    let a_score = a_score(&record, a_is_white);
                    if sender.send(Ok(GameResult { index, a_is_white, a_score, record })).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for message in receiver {
            match message {
                Ok(result) => {
                    tally.add(result.a_score);
                    on_game(&result, &tally);
                    results.push(result);
                    // The first decision stands; games already under way when it came still count
                    // in the tally.
                    if let (Some(sprt), Some(SprtVerdict::Continue)) = (&settings.sprt, verdict) {
                        verdict = Some(sprt.verdict(&tally));
                        if verdict != Some(SprtVerdict::Continue) {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
                Err(error) => {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(error);
                }
            }
        }
    });
    if let Some(error) = failure {
        return Err(error.into());
    }
    results.sort_by_key(|r| r.index);
    Ok(MatchResult { games: results, tally, sprt: verdict })
}

/// Reads back the finished games of a match that was cut short, for [`continue_match`]. Every
/// record must be a game of this very match: a round (the `Round` tag) within its games and
/// seen once, its seed (`Seed`), its rules, A and B in the colours of that round, the round's
/// opening, and a result. Anything else is refused by record number, so that games of another
/// match never count in this one.
pub fn games_from_records(
    records: Vec<GameRecord>,
    a: &PlayerSpec,
    b: &PlayerSpec,
    settings: &MatchSettings,
) -> Result<Vec<GameResult>, ArenaError> {
    let start = Position::start(settings.rules).expect("validated rules have a start position");
    let mut seen = HashSet::new();
    let mut games = Vec::with_capacity(records.len());
    for (i, record) in records.into_iter().enumerate() {
        let refuse = |problem: String| ArenaError::ForeignRecord { number: i + 1, problem };
        let round = record.tag("Round").ok_or_else(|| refuse("it has no Round tag".into()))?;
        let index = match round.parse::<usize>() {
            Ok(round) if (1..=settings.games).contains(&round) => round - 1,
            _ => {
                return Err(refuse(format!("round {round:?} is not one of 1..={}", settings.games)))
            }
        };
        if !seen.insert(index) {
            return Err(refuse(format!("round {round} appears twice")));
        }
        if record.tag("Seed") != Some(settings.seed.to_string().as_str()) {
            return Err(refuse(format!(
                "its seed is {:?}, the match's is {}",
                record.tag("Seed").unwrap_or("missing"),
                settings.seed
            )));
        }
        if record.start != start {
            return Err(refuse(format!(
                "it was played under other rules ({}) or from another start",
                record.rules()
            )));
        }
        let a_is_white = a_is_white(index);
        let (white, black) = if a_is_white { (a, b) } else { (b, a) };
        if (record.white.as_str(), record.black.as_str())
            != (white.text.as_str(), black.text.as_str())
        {
            return Err(refuse(format!(
                "round {round} is {} (White) against {}, not {white} against {black}",
                record.white, record.black
            )));
        }
        if !record.moves.starts_with(&match_opening(settings, index)) {
            return Err(refuse(format!(
                "round {round} does not begin with the match's opening (another --opening-plies?)"
            )));
        }
        if record.result == RecordResult::Unfinished {
            return Err(refuse(format!("round {round} has no result")));
        }
        let a_score = a_score(&record, a_is_white);
        games.push(GameResult { index, a_is_white, a_score, record });
    }
    Ok(games)
}
