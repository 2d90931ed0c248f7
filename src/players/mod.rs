//! Players: anything that picks a move in a position. Matches, tournaments, terminal play and
//! the engine protocol all go through [`Player`], so any two kinds can meet.
//!
//! A player is named by a spec (see [`PlayerSpec`]): `random`, `greedy`, `alphabeta`,
//! `mcts-rollout`, `net:PATH`, each optionally followed by `:key=value` options, for example
//! `alphabeta:depth=4`, `mcts-rollout:sims=2000`, `net:models/a.safetensors:sims=400`,
//! `net:run/checkpoints/gen-000010.safetensors:time=1`.

pub mod alphabeta;
pub mod greedy;
pub mod heuristic;
mod net;
pub mod rollout;

use crate::game::{Move, Position};
use crate::mcts::SearchConfig;
use crate::nn::{DeviceChoice, NetError, Precision};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub use net::{check_net_rules, default_agent, trained_rules, NetPlayer};

/// Whether `spec` can play games under `rules` (only networks are tied to a rule set: see
/// [`check_net_rules`]).
pub fn check_rules(spec: &PlayerSpec, rules: &crate::game::Rules) -> Result<(), PlayerError> {
    match &spec.kind {
        PlayerKind::Net(path) => check_net_rules(path, rules),
        _ => Ok(()),
    }
}

/// The longest time a move may be given, in seconds (about 30 years): no clock needs more, and
/// times up to it keep the clock's arithmetic (a `Duration`, an `Instant` plus it) in range.
pub const MAX_SECONDS: f64 = 1e9;

/// How much a player may think about one move. Every field is optional; a player uses what
/// applies to it (nodes are simulations for MCTS players and searched positions for
/// alpha-beta) and stops at the first limit reached.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limit {
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    pub time: Option<Duration>,
}

impl Limit {
    pub fn is_empty(&self) -> bool {
        self.nodes.is_none() && self.depth.is_none() && self.time.is_none()
    }

    /// This limit where it says something, else `fallback`.
    pub fn or(self, fallback: Limit) -> Limit {
        if self.is_empty() {
            fallback
        } else {
            self
        }
    }
}

/// A player's answer: the move and what it thought.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub mv: Move,
    /// Expected result for the side to move in [-1, 1], where the player has an opinion.
    pub value: Option<f32>,
    /// Positions searched (simulations for MCTS players).
    pub nodes: u64,
    /// Depth reached, for depth-first searchers.
    pub depth: Option<u32>,
    /// The line the player expects, starting with `mv`.
    pub principal_variation: Vec<Move>,
}

impl Decision {
    /// A decision with nothing to report but the move.
    pub fn bare(mv: Move) -> Decision {
        Decision { mv, value: None, nodes: 0, depth: None, principal_variation: vec![mv] }
    }
}

/// The winning chance, a share from 0 to 1, that an expected result in [-1, 1] stands for
/// (a draw counting half).
pub fn winning_chance(value: f32) -> f32 {
    ((value + 1.0) / 2.0).clamp(0.0, 1.0)
}

/// Chooses moves. One instance plays one game at a time; `new_game` resets whatever it keeps
/// between moves (a search tree, a transposition table) and reseeds its randomness.
pub trait Player: Send {
    /// A short name for records and tables.
    fn name(&self) -> String;

    fn new_game(&mut self, seed: u64);

    /// The move for `position`, which must be ongoing with at least one legal move.
    fn choose(&mut self, position: &Position, limit: Limit) -> Decision;
}

/// Uniformly random legal moves.
pub struct RandomPlayer {
    rng: StdRng,
}

impl RandomPlayer {
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer { rng: StdRng::seed_from_u64(seed) }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        "random".into()
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(seed);
    }

    fn choose(&mut self, position: &Position, _limit: Limit) -> Decision {
        let moves = position.legal_moves();
        Decision::bare(
            *moves
                .choose(&mut self.rng)
                .expect("choose is only asked in positions with a legal move"),
        )
    }
}

/// The kinds of player.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerKind {
    Random,
    Greedy,
    AlphaBeta,
    MctsRollout,
    Net(PathBuf),
}

/// A player as named on the command line: kind plus options.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSpec {
    pub kind: PlayerKind,
    /// The player's own thinking limit; a match or an engine `go` may override it.
    pub limit: Limit,
    /// MCTS exploration constant (net and mcts-rollout).
    pub c_puct: Option<f32>,
    /// Whether a net's search scores results certain one or two moves ahead as finished (default on).
    pub forced_results: Option<bool>,
    /// What a draw is worth to a net's search, in [-1, 1] (default 0; see `SearchConfig`).
    pub draw_value: Option<f32>,
    /// The share of a net's priors given to captures at every node, in [0, 1] (default 0; see
    /// `SearchConfig::capture_prior`).
    pub capture_prior: Option<f32>,
    /// The number format a net searches in (default auto; see [`Precision`]).
    pub precision: Option<Precision>,
    /// Leaves a net's search evaluates per network call (default
    /// [`net::DEFAULT_LEAVES_PER_CALL`]): more use the CPU better, fewer search better.
    pub leaves: Option<usize>,
    /// The text the spec was parsed from, as the player's name.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("player `{0}`: unknown kind (random, greedy, alphabeta, mcts-rollout, net:PATH)")]
    UnknownKind(String),
    #[error("player `{0}`: net needs a path, as in net:models/NAME.safetensors")]
    MissingPath(String),
    #[error("player `{spec}`: option `{option}` {problem}")]
    BadOption { spec: String, option: String, problem: String },
}

impl FromStr for PlayerSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<PlayerSpec, SpecError> {
        let mut parts: Vec<&str> = text.split(':').collect();
        // Options are the trailing `key=value` parts; for net, everything between the kind and
        // the options is the path (so a path may itself contain ':').
        let mut options = Vec::new();
        while parts.len() > 1 && parts.last().is_some_and(|p| p.contains('=')) {
            options.push(parts.pop().expect("checked"));
        }
        options.reverse();
        let kind = match parts[0] {
            "random" if parts.len() == 1 => PlayerKind::Random,
            "greedy" if parts.len() == 1 => PlayerKind::Greedy,
            "alphabeta" if parts.len() == 1 => PlayerKind::AlphaBeta,
            "mcts-rollout" if parts.len() == 1 => PlayerKind::MctsRollout,
            "net" if parts.len() > 1 && !parts[1..].join(":").is_empty() => {
                PlayerKind::Net(PathBuf::from(parts[1..].join(":")))
            }
            "net" => return Err(SpecError::MissingPath(text.into())),
            _ => return Err(SpecError::UnknownKind(text.into())),
        };
        let mut spec = PlayerSpec::new(kind, Limit::default(), text.into());
        for option in options {
            let (key, value) = option.split_once('=').expect("options contain '='");
            let bad = |problem: &str| SpecError::BadOption {
                spec: text.into(),
                option: option.into(),
                problem: problem.into(),
            };
            match key {
                "sims" | "nodes" => spec.limit.nodes = Some(value.parse().ok().filter(|&n| n > 0).ok_or_else(|| bad("needs a positive whole number"))?),
                "depth" => spec.limit.depth = Some(value.parse().ok().filter(|&d| (1..=64).contains(&d)).ok_or_else(|| bad("needs a depth 1..=64"))?),
                "time" => {
                    let seconds: f64 = value.parse().ok().filter(|s: &f64| *s > 0.0 && *s <= MAX_SECONDS).ok_or_else(|| bad("needs seconds > 0 (at most 1e9)"))?;
                    spec.limit.time = Some(Duration::from_secs_f64(seconds));
                }
                "cpuct" => spec.c_puct = Some(value.parse().ok().filter(|c: &f32| *c > 0.0 && c.is_finite()).ok_or_else(|| bad("needs a positive number"))?),
                "forced" => spec.forced_results = Some(on_or_off(value).ok_or_else(|| bad("needs on or off"))?),
                "captures" => spec.capture_prior = Some(value.parse().ok().filter(|c: &f32| (0.0..=1.0).contains(c)).ok_or_else(|| bad("needs a number in [0, 1]"))?),
                "draw" => spec.draw_value = Some(value.parse().ok().filter(|d: &f32| (-1.0..=1.0).contains(d)).ok_or_else(|| bad("needs a number in [-1, 1]"))?),
                "precision" => {
                    spec.precision = Some(match value {
                        "f32" => Precision::F32,
                        "bf16" => Precision::Bf16,
                        "auto" => Precision::Auto,
                        _ => return Err(bad("needs f32, bf16 or auto")),
                    })
                }
                "leaves" => spec.leaves = Some(value.parse().ok().filter(|n| (1..=256).contains(n)).ok_or_else(|| bad("needs a whole number 1..=256"))?),
                _ => return Err(bad("is not known (sims, nodes, depth, time, cpuct, forced, draw, captures, precision, leaves)")),
            }
        }
        Ok(spec)
    }
}

/// A switch option's value: `on` or `off`.
fn on_or_off(value: &str) -> Option<bool> {
    match value {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Why a player could not be built.
#[derive(Debug, thiserror::Error)]
pub enum PlayerError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Net(#[from] NetError),
    #[error("{path} was trained for {trained}, but this game is {asked}")]
    WrongRules { path: PathBuf, trained: String, asked: String },
    #[error("{path}: {problem}")]
    Defaults { path: PathBuf, problem: String },
}

impl PlayerSpec {
    /// A spec with the default search options.
    pub fn new(kind: PlayerKind, limit: Limit, text: String) -> PlayerSpec {
        PlayerSpec {
            kind,
            limit,
            c_puct: None,
            forced_results: None,
            draw_value: None,
            capture_prior: None,
            precision: None,
            leaves: None,
            text,
        }
    }

    /// Builds the player. Networks load on `device`.
    pub fn build(&self, device: DeviceChoice, seed: u64) -> Result<Box<dyn Player>, PlayerError> {
        let limit = self.limit;
        Ok(match &self.kind {
            PlayerKind::Random => Box::new(RandomPlayer::new(seed)),
            PlayerKind::Greedy => Box::new(greedy::GreedyPlayer::new(seed)),
            PlayerKind::AlphaBeta => {
                Box::new(alphabeta::AlphaBetaPlayer::new(limit.or(alphabeta::DEFAULT_LIMIT), seed))
            }
            PlayerKind::MctsRollout => Box::new(rollout::RolloutPlayer::new(
                limit.or(rollout::DEFAULT_LIMIT),
                self.c_puct,
                seed,
            )),
            PlayerKind::Net(path) => {
                let precision = self.precision.unwrap_or_default();
                let player = NetPlayer::load(
                    path,
                    device.resolve()?,
                    precision,
                    limit.or(net::DEFAULT_LIMIT),
                    self.search_config(),
                    seed,
                )?;
                Box::new(
                    player
                        .with_leaves_per_call(self.leaves.unwrap_or(net::DEFAULT_LEAVES_PER_CALL)),
                )
            }
        })
    }

    /// The search options of a net player: the defaults with this spec's options applied.
    pub fn search_config(&self) -> SearchConfig {
        let defaults = SearchConfig::default();
        SearchConfig {
            c_puct: self.c_puct.unwrap_or(defaults.c_puct),
            forced_results: self.forced_results.unwrap_or(defaults.forced_results),
            draw_value: self.draw_value.unwrap_or(defaults.draw_value),
            capture_prior: self.capture_prior.unwrap_or(defaults.capture_prior),
            ..defaults
        }
    }

    /// Whether matches may run several games of this player at once without distorting it
    /// (a player on a clock must have the cores to itself).
    pub fn is_timed(&self) -> bool {
        self.limit.time.is_some()
    }
}
