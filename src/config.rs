//! The training configuration: one TOML file, every section a serde struct that rejects unknown
//! keys, checked by `validate` before anything runs.

use crate::arena::{MAX_MATCH_GAMES, MAX_MATCH_PARALLEL};
use crate::game::Rules;
use crate::mcts::{RootNoise, SearchConfig};
use crate::nn::model::NetConfig;
use crate::nn::optim::{OptimizerKind, OptimizerSettings};
use crate::nn::{DeviceChoice, Precision};
use crate::players::{PlayerKind, PlayerSpec};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The training configuration. Every key has a default, the value `configs/default.toml`
/// shows, so a config file names only what differs from it (an empty file is the default
/// config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub run: RunConfig,
    pub rules: Rules,
    pub network: NetworkConfig,
    /// The search of self-play. A config's `[search]` differs from a player's defaults in
    /// three keys: `root_noise` is a Gumbel root, `draw_value` -0.7 and `capture_prior` 0.25,
    /// unless the config says otherwise.
    pub search: SearchConfig,
    pub selfplay: SelfPlayConfig,
    pub replay: ReplayConfig,
    pub training: TrainingConfig,
    pub evaluation: EvaluationConfig,
    /// Matches against a fixed opponent inside the loop. Optional; none when left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<MatchesConfig>,
    /// Smaller boards that self-play uses first: by default generations 1-32 on 8x8 (with a
    /// ply cap of 150); `curriculum = []` plays every generation on `[rules]`' board.
    pub curriculum: Vec<BoardStage>,
}

/// A stage of the board curriculum (`[[curriculum]]`): self-play of generations up to `until`
/// plays on this board (the first stage whose `until` has not passed), later generations on
/// `[rules]`'s. The network is convolutional with global pooling, so one network plays every
/// size, and its training window mixes the sizes while the stages' positions leave it (KataGo
/// trains on mixed board sizes). Small boards give short, decisive games from the first
/// generation, which teach captures and races that carry over to the large board. Rating games
/// and matches are always on `[rules]`'s board, and rating starts after the last stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardStage {
    /// The last generation played on this board.
    pub until: u32,
    pub width: u8,
    pub height: u8,
    /// The board's ply cap.
    pub ply_cap: u16,
    /// The stage's own `[search] draw_value` and `[selfplay] stall_plies` (0: never), where its
    /// games want other settings than the large board's; left out, those sections'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw_value: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_plies: Option<u16>,
}

/// Keys of options since removed, with the value a run that did not use them stored: implicit
/// minimax backups, capped games scored by material, the lead head and Gumbel root search
/// (docs/methods.md).
fn retired_keys() -> [(&'static str, &'static str, toml::Value); 5] {
    let puct = toml::Table::from_iter([("kind".to_string(), toml::Value::String("puct".into()))]);
    [
        ("search", "minimax_weight", toml::Value::Float(0.0)),
        ("selfplay", "capped_games", toml::Value::String("draw".into())),
        ("training", "lead_loss_weight", toml::Value::Float(0.0)),
        ("network", "lead_head", toml::Value::Boolean(false)),
        ("selfplay", "root_search", toml::Value::Table(puct)),
    ]
}

/// Brings the root exploration of a run made before the Gumbel root was the recipe up to date.
/// Dirichlet noise was removed, so such a run is refused by name, with the edit that lets it go
/// on; a run that had `[search] gumbel` beside it searched with that Gumbel root; and forced
/// playouts (`forced_playouts`, in `[search]` and in curriculum stages) acted on
/// Dirichlet-noised roots only, so their keys are dropped.
fn migrate_root_noise(table: &mut toml::Table, origin: &str) -> Result<(), ConfigError> {
    if let Some(search) = table.get_mut("search").and_then(toml::Value::as_table_mut) {
        search.remove("forced_playouts");
        // Anything but a table is left for the parser to refuse as an unknown key.
        if let Some(toml::Value::Table(gumbel)) = search.get("gumbel") {
            let mut root_noise = gumbel.clone();
            root_noise.insert("kind".into(), toml::Value::String("gumbel".into()));
            search.insert("root_noise".into(), toml::Value::Table(root_noise));
            search.remove("gumbel");
        }
        let kind = search.get("root_noise").and_then(|noise| noise.get("kind"));
        if kind.and_then(toml::Value::as_str) == Some("dirichlet") {
            return Err(ConfigError::Invalid(format!(
                "{origin}: search.root_noise = dirichlet was removed from the program (docs/methods.md); to go on with a Gumbel root, set root_noise = {{ kind = \"gumbel\" }} there"
            )));
        }
    }
    let stages = table.get_mut("curriculum").and_then(toml::Value::as_array_mut);
    for stage in stages.into_iter().flatten().filter_map(toml::Value::as_table_mut) {
        stage.remove("forced_playouts");
    }
    Ok(())
}

/// The ply cap of training games when a config sets none: self-play games must end.
pub const DEFAULT_PLY_CAP: u16 = 300;

impl Default for Config {
    fn default() -> Config {
        Config {
            run: RunConfig::default(),
            rules: Rules { ply_cap: Some(DEFAULT_PLY_CAP), ..Rules::default() },
            network: NetworkConfig::default(),
            search: SearchConfig {
                root_noise: RootNoise::self_play(),
                draw_value: crate::mcts::SELF_PLAY_DRAW_VALUE,
                capture_prior: crate::mcts::SELF_PLAY_CAPTURE_PRIOR,
                ..SearchConfig::default()
            },
            selfplay: SelfPlayConfig::default(),
            replay: ReplayConfig::default(),
            training: TrainingConfig::default(),
            evaluation: EvaluationConfig::default(),
            matches: None,
            curriculum: vec![BoardStage {
                until: 32,
                width: 8,
                height: 8,
                ply_cap: 150,
                draw_value: Some(0.0),
                stall_plies: Some(0),
            }],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Generations to run in total; absent: until stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generations: Option<u32>,
    /// Seeds the network initialisation and every game. Default 1.
    pub seed: u64,
    /// Worker threads for tree work and libtorch; absent: the cores this process may use (see
    /// [`available_cores`]), found again on every start, so a run moved to another machine
    /// uses that machine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    pub device: DeviceChoice,
    /// The number format of self-play's network (training is always f32).
    pub precision: Precision,
}

impl Default for RunConfig {
    fn default() -> RunConfig {
        RunConfig {
            generations: None,
            seed: 1,
            threads: None,
            device: DeviceChoice::Auto,
            precision: Precision::Auto,
        }
    }
}

impl RunConfig {
    /// A command line's `--device` and `--precision`, where given, over the config's.
    pub fn override_device(&mut self, device: Option<DeviceChoice>, precision: Option<Precision>) {
        self.device = device.unwrap_or(self.device);
        self.precision = precision.unwrap_or(self.precision);
    }

    /// The threads to use: the configured number, else every core this process may use.
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or_else(available_cores)
    }
}

/// The most threads a run takes (`run.threads`), and games a match plays at once.
pub const MAX_THREADS: usize = 256;

/// The cores this process may run on: its CPU affinity and its cgroup's CPU quota, as the
/// standard library reads them (at least 1, at most [`MAX_THREADS`]).
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_THREADS)
}

/// A named size, or an explicit shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkConfig {
    /// One of tiny, small, medium, large, huge; overridden field by field by the keys below.
    /// Default small.
    pub size: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channels: Option<i64>,
    /// Whether the network reads the threat planes (see `encode::THREAT_PLANES`). Default off.
    pub threats: bool,
}

impl Default for NetworkConfig {
    fn default() -> NetworkConfig {
        NetworkConfig { size: Some("small".into()), blocks: None, channels: None, threats: false }
    }
}

impl NetworkConfig {
    /// The network's shape for the standard game; [`Config::net_config`] adds what the rules
    /// need.
    pub fn resolve(&self) -> Result<NetConfig, ConfigError> {
        let mut net = match &self.size {
            Some(name) => NetConfig::named(name).ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "network.size {name:?} is not one of tiny, small, medium, large, huge"
                ))
            })?,
            None => NetConfig::named("small").expect("small exists"),
        };
        if let Some(blocks) = self.blocks {
            net.blocks = blocks;
        }
        if let Some(channels) = self.channels {
            net.channels = channels;
        }
        net.threats = self.threats;
        net.validate().map_err(|e| ConfigError::Invalid(format!("network: {e}")))?;
        Ok(net)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfPlayConfig {
    /// Games finished per generation.
    pub games_per_generation: usize,
    /// Games played in lockstep, shared among the lanes; a lane's games send their leaves to
    /// its network in one batch.
    pub parallel_games: usize,
    /// Threads of self-play, each with its own copy of the network and its share of the games
    /// and of the threads; 0: one for each thread. On 2 CPU cores two lanes searched 1.3-1.5
    /// times as fast as one, and beside a busy program 1.5-2 times: one network pass on one
    /// thread wastes nothing on threads that wait for each other. On a GPU with a 16-core host
    /// 16 lanes searched 5.3 times as fast as one: each lane's tree work goes on while the
    /// others' batches are on the GPU (docs/performance.md).
    pub lanes: usize,
    /// Leaves gathered from each game per round (virtual loss spreads them).
    pub leaves_per_game: usize,
    /// Playout cap randomisation (KataGo): this share of moves get a full search with root noise
    /// and become policy targets; the rest get a fast search and are not recorded.
    pub full_search_probability: f64,
    pub full_visits: u32,
    pub fast_visits: u32,
    /// Move choice temperature for the first `temperature_plies` plies, then `temperature_end`,
    /// of the searches without root exploration (a Gumbel root plays its halving's move).
    pub temperature_start: f32,
    pub temperature_end: f32,
    pub temperature_plies: u16,
    /// Up to this many uniformly random opening plies (drawn per game) for variety.
    pub random_opening_plies: u16,
    /// Stop a game after this many plies in a row without a capture (0: never); its value
    /// targets are a draw, as a capped game's, and its record stays unfinished.
    /// Self-play games on 14x12 settle into shuffling: most games were capped, and their last
    /// capture came near ply 100 of 300, so two thirds of their positions (and of the replay
    /// window) repeated a few moves with nothing at stake.
    pub stall_plies: u16,
    /// Shares of each generation's games played by the network against other players instead
    /// of itself: `opponents = [{ player = "mcts-rollout:sims=8000", share = 0.25 }, { player =
    /// "alphabeta:depth=3", share = 0.25 }]`, or one as `opponent = { ... }`. Only the network's
    /// own moves become training samples; the other player's moves only steer the game.
    /// Optional; every game is self-play when left out.
    #[serde(
        alias = "opponent",
        deserialize_with = "one_or_many_opponents",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub opponents: Vec<OpponentConfig>,
    /// With a cluster's workers: a game played by a network more than this many generations
    /// older than the newest is dropped (and counted) rather than trained on. Workers finish
    /// the games they began when a new network appears, and go on playing while the learner
    /// trains, so 1 keeps every game of the previous network.
    pub max_network_age: u32,
}

/// The most generations a cluster's game may lag the newest network (a run has a few hundred).
pub const MAX_NETWORK_AGE: u32 = 1000;

/// The most games in lockstep (a GPU is filled by a few thousand).
pub const MAX_PARALLEL_GAMES: usize = 100_000;
/// The most leaves a game gathers a round (a net player's `leaves=` takes as many).
pub const MAX_LEAVES_PER_GAME: usize = 256;
/// The most self-play lanes (one a thread, and `run.threads` is at most 256).
pub const MAX_LANES: usize = 256;
/// The largest training batch.
pub const MAX_BATCH_SIZE: usize = 65_536;

impl SelfPlayConfig {
    /// The lanes self-play runs with `threads` threads: `lanes`, or for 0 one per thread; never
    /// more than `parallel_games`, so that each lane has a game.
    pub fn lanes(&self, threads: usize) -> usize {
        let lanes = if self.lanes == 0 { threads } else { self.lanes };
        lanes.clamp(1, self.parallel_games.max(1))
    }
}

impl Default for SelfPlayConfig {
    fn default() -> SelfPlayConfig {
        SelfPlayConfig {
            games_per_generation: 64,
            parallel_games: 64,
            lanes: 0,
            leaves_per_game: 2,
            full_search_probability: 0.25,
            full_visits: 160,
            fast_visits: 32,
            temperature_start: 1.0,
            temperature_end: 0.0,
            temperature_plies: 10,
            random_opening_plies: 4,
            stall_plies: 60,
            opponents: Vec::new(),
            max_network_age: 1,
        }
    }
}

/// Reads `selfplay.opponents` as one table or an array of tables. (An untagged enum would do
/// it too, but its error names neither form's problem: a misspelt field would read "data did
/// not match any variant".)
fn one_or_many_opponents<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<OpponentConfig>, D::Error> {
    use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
    struct OneOrMany;
    impl<'de> serde::de::Visitor<'de> for OneOrMany {
        type Value = Vec<OpponentConfig>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an opponent table ({ player = ..., share = ... }) or an array of them")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            OpponentConfig::deserialize(MapAccessDeserializer::new(map)).map(|one| vec![one])
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            Vec::deserialize(SeqAccessDeserializer::new(seq))
        }
    }
    deserializer.deserialize_any(OneOrMany)
}

/// Another player of [`SelfPlayConfig::opponents`]: games against a player unlike the network
/// reach positions its own games seldom do (a network whose own games are mostly races meets
/// long games of material there). What it gave is in docs/methods.md, "Sparring".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpponentConfig {
    /// A player spec as `match` takes it, with its own limit (`sims=`, `depth=`; a time limit
    /// would make games depend on the machine's speed). Not a network: its search would run
    /// outside the self-play batch, one position at a time.
    pub player: String,
    /// The share of games (drawn per game by its seed), with colours drawn evenly.
    pub share: f64,
}

impl OpponentConfig {
    /// The player spec, checked as the trainer needs it.
    pub fn spec(&self) -> Result<PlayerSpec, ConfigError> {
        let invalid =
            |m: String| ConfigError::Invalid(format!("selfplay.opponents: `{}`: {m}", self.player));
        let spec: PlayerSpec = self.player.parse().map_err(|e| invalid(format!("{e}")))?;
        if matches!(spec.kind, PlayerKind::Net(_)) {
            return Err(invalid("is a network; self-play opponents must be random, greedy, alphabeta or mcts-rollout".into()));
        }
        if spec.limit.time.is_some() {
            return Err(invalid("has a time limit; give it sims= or depth= so that games do not depend on the machine's speed".into()));
        }
        if !(self.share > 0.0 && self.share <= 1.0) {
            return Err(invalid(format!("share must be in (0, 1], not {}", self.share)));
        }
        Ok(spec)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplayConfig {
    /// The window never shrinks below this many positions (until that many exist).
    pub min_window: usize,
    /// Nor grows beyond this many.
    pub max_window: usize,
    /// Between the two the window grows as min_window * (total / min_window)^exponent
    /// (KataGo's power-law window, scaled down).
    pub window_exponent: f64,
    /// Each generation trains on at most this many samples per new position (the cap on how
    /// often a sample is trained on, on average). With `records`, the self-play part of each
    /// batch is what counts.
    pub max_sample_reuse: f64,
    /// Game records (files as `match` writes them, paths from the working directory) whose
    /// positions every generation trains on beside the window: matches against an opponent the
    /// agent should learn to beat, whose results say what self-play against itself cannot.
    /// Their value target is their game's result, and they have no policy target (a match's
    /// moves are not a search's visit shares), so the policy learns from self-play alone. Read
    /// at the start of every `train` invocation; they never enter the window.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<PathBuf>,
    /// The share of each batch drawn from `records`, in [0, 1).
    #[serde(skip_serializing_if = "is_zero")]
    pub records_share: f64,
}

impl Default for ReplayConfig {
    fn default() -> ReplayConfig {
        ReplayConfig {
            min_window: 20_000,
            max_window: 250_000,
            window_exponent: 0.75,
            max_sample_reuse: 12.0,
            records: Vec::new(),
            records_share: 0.0,
        }
    }
}

impl ReplayConfig {
    /// Samples in the window after `total` samples have been generated.
    pub fn window(&self, total: usize) -> usize {
        if total <= self.min_window {
            return total;
        }
        let grown = self.min_window as f64
            * (total as f64 / self.min_window as f64).powf(self.window_exponent);
        (grown as usize).clamp(self.min_window, self.max_window).min(total)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainingConfig {
    pub batch_size: usize,
    /// Optimiser steps per generation (fewer when `max_sample_reuse` caps them).
    pub steps_per_generation: usize,
    pub optimizer: OptimizerKind,
    /// SGD momentum (ignored by AdamW).
    pub momentum: f64,
    pub weight_decay: f64,
    /// Learning rate by generation: [[from_generation, rate], ...], sorted.
    pub learning_rate: Vec<(u32, f64)>,
    /// Weight of the value loss against the policy loss.
    pub value_loss_weight: f64,
    /// Gradient norm clip.
    pub max_grad_norm: f64,
    /// Mirror each training sample left-right with probability 1/2.
    pub mirror_augmentation: bool,
    /// The share of the value target taken from the search's chances at the position rather
    /// than the game's result: the result is one noisy draw of a long game, the search's view
    /// is a lower-variance estimate (biased by what the network does not yet know).
    pub search_value_share: f64,
}

impl Default for TrainingConfig {
    fn default() -> TrainingConfig {
        TrainingConfig {
            batch_size: 256,
            steps_per_generation: 100,
            optimizer: OptimizerKind::AdamW,
            momentum: 0.9,
            weight_decay: 1e-4,
            learning_rate: vec![(0, 0.002), (100, 0.001), (155, 0.0005)],
            value_loss_weight: 1.0,
            max_grad_norm: 10.0,
            mirror_augmentation: true,
            search_value_share: 0.5,
        }
    }
}

impl TrainingConfig {
    pub fn optimizer_settings(&self) -> OptimizerSettings {
        OptimizerSettings {
            kind: self.optimizer,
            momentum: self.momentum,
            weight_decay: self.weight_decay,
        }
    }

    pub fn learning_rate_at(&self, generation: u32) -> f64 {
        rate_at(&self.learning_rate, generation)
    }
}

/// Leaves a share that is off out of the config a run saves, so that configs written before the
/// option existed read and write the same.
fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

/// The rate of a schedule `[[from, rate], ...]` (sorted, not empty) at `at`: the last entry that
/// has begun, or the first before any has.
pub fn rate_at<T: PartialOrd + Copy>(schedule: &[(T, f64)], at: T) -> f64 {
    schedule
        .iter()
        .take_while(|(from, _)| *from <= at)
        .last()
        .map_or(schedule[0].1, |(_, rate)| *rate)
}

/// Checks a learning-rate schedule `[[from, rate], ...]` ([`rate_at`] reads it), whose `from`s
/// count `unit`s (generations or steps): not empty, rates above 0, `from`s increasing.
pub fn check_schedule<T: PartialOrd>(schedule: &[(T, f64)], unit: &str) -> Result<(), ConfigError> {
    if schedule.is_empty()
        || schedule.iter().any(|(_, rate)| !(*rate > 0.0 && rate.is_finite()))
        || schedule.windows(2).any(|w| w[0].0 >= w[1].0)
    {
        return Err(ConfigError::Invalid(format!(
            "training.learning_rate must be a non-empty list of [{unit}, rate] with rates > 0 and {unit}s increasing"
        )));
    }
    Ok(())
}

/// Checks the optimiser's settings that training and distillation share.
pub fn check_optimiser(
    weight_decay: f64,
    value_loss_weight: f64,
    max_grad_norm: f64,
) -> Result<(), ConfigError> {
    let finite = [weight_decay, value_loss_weight, max_grad_norm].iter().all(|v| v.is_finite());
    if !(finite && weight_decay >= 0.0 && value_loss_weight >= 0.0 && max_grad_norm > 0.0) {
        return Err(ConfigError::Invalid(
            "training: weight_decay and value_loss_weight must be finite and >= 0, max_grad_norm finite and > 0".into(),
        ));
    }
    Ok(())
}

/// Rating games during training: every `every` generations the newest checkpoint plays the
/// baselines and the checkpoint `every` generations older, and the Elo fitted over all such games goes into
/// `metrics.csv`, so a run shows its own progress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvaluationConfig {
    /// Rate every this many generations; 0 turns rating off.
    pub every: u32,
    /// Games against each opponent (even, so each opening is played with both colours).
    pub games: usize,
    /// Simulations per move of the checkpoints in rating games.
    pub simulations: u64,
    /// Fixed opponents, as player specs; `random` (when present) is rated 0.
    pub baselines: Vec<String>,
    /// Random plies at the start of each opening.
    pub opening_plies: u32,
}

impl Default for EvaluationConfig {
    fn default() -> EvaluationConfig {
        EvaluationConfig {
            every: 5,
            games: 20,
            simulations: 32,
            baselines: vec!["random".into(), "greedy".into()],
            opening_plies: 4,
        }
    }
}

impl EvaluationConfig {
    pub fn baseline_specs(&self) -> Result<Vec<PlayerSpec>, ConfigError> {
        self.baselines
            .iter()
            .map(|b| {
                b.parse::<PlayerSpec>()
                    .map_err(|e| ConfigError::Invalid(format!("evaluation.baselines: {e}")))
            })
            .collect()
    }
}

/// Matches inside the training loop: every generation, before its self-play, the newest
/// checkpoint plays `games` games against `opponent`, at the limits their specs give (a clock
/// is allowed here: these games are the run's measure against that player at the time control
/// it is judged at, not self-play). The results go to `RUN/matches.csv`, one row a generation:
/// the run's score against that player, checkpoint by checkpoint. With `learn` the records,
/// `RUN/matches/gen-N.txt`, join `replay.records`, so that the value learns from the current
/// agent's own games against the opponent. Values trained on such matches made the default agent
/// (docs/methods.md, "Values trained on matches").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchesConfig {
    /// The opponent, a player spec as `match` takes it, its limit included (`alphabeta:time=1`).
    pub opponent: String,
    /// The checkpoint's player options, as they would follow `net:PATH:` in a spec (`time=1`,
    /// `sims=1000:precision=bf16`). They must give it a limit: sims or time.
    pub agent: String,
    /// Games each generation; even, so that each opening is played with both colours.
    pub games: usize,
    /// Games played at once, each on its own thread (one libtorch thread each).
    pub parallel: usize,
    /// Random plies at the start of each opening. Optional; 4 when left out.
    #[serde(default = "default_match_opening_plies")]
    pub opening_plies: u32,
    /// Whether the matches' positions are trained on, at `replay.records_share` of each batch
    /// together with `replay.records`. Optional; on when left out.
    #[serde(default = "default_learn")]
    pub learn: bool,
}

fn default_match_opening_plies() -> u32 {
    4
}

fn default_learn() -> bool {
    true
}

impl MatchesConfig {
    /// The opponent's spec.
    pub fn opponent_spec(&self) -> Result<PlayerSpec, ConfigError> {
        self.opponent.parse().map_err(|e| ConfigError::Invalid(format!("matches.opponent: {e}")))
    }

    /// The player of the network at `checkpoint`, named `name` in the records (its options
    /// follow the name, as they follow a path in a spec).
    pub fn agent_spec(&self, checkpoint: &Path, name: &str) -> Result<PlayerSpec, ConfigError> {
        let options =
            if self.agent.is_empty() { String::new() } else { format!(":{}", self.agent) };
        let mut spec: PlayerSpec = format!("net:{}{options}", checkpoint.display())
            .parse()
            .map_err(|e| ConfigError::Invalid(format!("matches.agent {:?}: {e}", self.agent)))?;
        if spec.limit.nodes.is_none() && spec.limit.time.is_none() {
            return Err(ConfigError::Invalid(format!(
                "matches.agent {:?} gives the network no limit: add sims= or time=",
                self.agent
            )));
        }
        // Named by the checkpoint rather than its path, so that a run moved to another folder
        // still resumes the games it saved.
        spec.text = format!("{name}{options}");
        Ok(spec)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |m: String| Err(ConfigError::Invalid(m));
        self.opponent_spec()?;
        self.agent_spec(Path::new("checkpoint"), "gen-000000")?;
        if self.games < 2 || !self.games.is_multiple_of(2) {
            return invalid(format!("matches.games must be even and at least 2 (each opening is played with both colours), not {}", self.games));
        }
        if self.games > MAX_MATCH_GAMES {
            return invalid(format!(
                "matches.games must be at most {MAX_MATCH_GAMES}, not {}",
                self.games
            ));
        }
        if !(1..=MAX_MATCH_PARALLEL).contains(&self.parallel) {
            return invalid(format!(
                "matches.parallel must be 1..={MAX_MATCH_PARALLEL}, not {}",
                self.parallel
            ));
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("config {path}: {message}")]
    Parse { path: String, message: String },
    #[error("invalid config: {0}")]
    Invalid(String),
}

/// A config file's text, and its path as errors name it.
fn read_config(path: &Path) -> Result<(String, String), ConfigError> {
    let origin = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((text, origin)),
        Err(source) => Err(ConfigError::Io { path: origin, source }),
    }
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let (text, origin) = read_config(path)?;
        Config::parse(&text, &origin)
    }

    /// A run's stored `config.toml` (see [`Config::parse_stored`]), with the file's text: a
    /// run stores its config anew when the text is not the resolved config's.
    pub fn load_stored(path: &Path) -> Result<(Config, String), ConfigError> {
        let (text, origin) = read_config(path)?;
        Ok((Config::parse_stored(&text, &origin)?, text))
    }

    /// The rules of a run's stored `config.toml`, read alone: all that measuring the run's
    /// checkpoints needs, so a run whose config names options since removed is still measured.
    pub fn load_stored_rules(path: &Path) -> Result<Rules, ConfigError> {
        #[derive(Deserialize)]
        struct RulesOnly {
            rules: Rules,
        }
        let (text, origin) = read_config(path)?;
        let stored: RulesOnly = toml::from_str(&text)
            .map_err(|e| ConfigError::Parse { path: origin.clone(), message: e.to_string() })?;
        stored
            .rules
            .validate()
            .map_err(|e| ConfigError::Invalid(format!("{origin}: rules: {e}")))?;
        Ok(stored.rules)
    }

    /// A config as a run stored it, which may be older than this program: runs store every
    /// key, so a key they lack did not exist when they were made. Those made before the
    /// curriculum had none and resume without one, not with the default's 8x8 stage, and those
    /// made before `stall_plies` had a default never stopped a game early, and those made
    /// before `capture_prior` searched without a capture share. Keys of
    /// options since removed are dropped where they hold the value that meant "off" (the run
    /// never used the option), and refused by name otherwise; so is the root exploration of
    /// older runs (see [`migrate_root_noise`]).
    pub fn parse_stored(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let parse_error =
            |message: String| ConfigError::Parse { path: origin.to_string(), message };
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| parse_error(e.to_string()))?;
        migrate_root_noise(&mut table, origin)?;
        for (section, key, off) in retired_keys() {
            let Some(values) = table.get_mut(section).and_then(toml::Value::as_table_mut) else {
                continue;
            };
            match values.remove(key) {
                Some(value) if value != off => {
                    return Err(ConfigError::Invalid(format!(
                        "{origin}: {section}.{key} = {value} was removed from the program (docs/methods.md); this run cannot go on"
                    )))
                }
                _ => {}
            }
        }
        table.entry("curriculum").or_insert_with(|| toml::Value::Array(Vec::new()));
        // Before stall_plies had a default, a run without it never stopped a game early; before
        // capture_prior existed, no search had a capture share.
        if let Some(selfplay) = table.get_mut("selfplay").and_then(toml::Value::as_table_mut) {
            selfplay.entry("stall_plies").or_insert(toml::Value::Integer(0));
        }
        if let Some(search) = table.get_mut("search").and_then(toml::Value::as_table_mut) {
            search.entry("capture_prior").or_insert(toml::Value::Float(0.0));
        }
        let config: Config =
            table.try_into().map_err(|e: toml::de::Error| parse_error(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// Parses and validates; `origin` names the source in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let mut config: Config = toml::from_str(text)
            .map_err(|e| ConfigError::Parse { path: origin.to_string(), message: e.to_string() })?;
        // A `[rules]` section that sets no cap is read with Rules' own defaults, which have none.
        config.rules.ply_cap.get_or_insert(DEFAULT_PLY_CAP);
        config.validate()?;
        Ok(config)
    }

    /// The network to train: the configured shape, built for the run's rules (the stones
    /// variant's extra planes).
    pub fn net_config(&self) -> Result<NetConfig, ConfigError> {
        Ok(self.network.resolve()?.for_rules(&self.rules))
    }

    /// The rules self-play plays generation `generation` under: its curriculum stage's board,
    /// else `[rules]`.
    pub fn rules_for(&self, generation: u32) -> Rules {
        match self.stage(generation) {
            Some(stage) => Rules {
                width: stage.width,
                height: stage.height,
                ply_cap: Some(stage.ply_cap),
                ..self.rules
            },
            None => self.rules,
        }
    }

    /// The search self-play of generation `generation` uses: `[search]`, with its curriculum
    /// stage's draw value.
    pub fn search_for(&self, generation: u32) -> SearchConfig {
        let mut search = self.search.clone();
        if let Some(stage) = self.stage(generation) {
            search.draw_value = stage.draw_value.unwrap_or(search.draw_value);
        }
        search
    }

    /// The self-play settings of generation `generation`: `[selfplay]`, with its curriculum
    /// stage's quiet-game stop.
    pub fn selfplay_for(&self, generation: u32) -> SelfPlayConfig {
        let mut selfplay = self.selfplay.clone();
        if let Some(stall_plies) = self.stage(generation).and_then(|stage| stage.stall_plies) {
            selfplay.stall_plies = stall_plies;
        }
        selfplay
    }

    fn stage(&self, generation: u32) -> Option<&BoardStage> {
        self.curriculum.iter().find(|stage| generation <= stage.until)
    }

    /// The last generation of the curriculum's stages (0 without a curriculum).
    pub fn curriculum_end(&self) -> u32 {
        self.curriculum.last().map_or(0, |stage| stage.until)
    }

    /// The config as a run saves it. Options held as f32 are written in their shortest f32
    /// form (`-0.7`, not the f64 widening `-0.699999988079071`), so the file reads as written.
    pub fn to_toml(&self) -> String {
        let mut value = toml::Value::try_from(self).expect("config serialises");
        shorten_f32_floats(&mut value);
        toml::to_string(&value).expect("config serialises")
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |m: String| Err(ConfigError::Invalid(m));
        self.rules.validate().map_err(|e| ConfigError::Invalid(format!("rules: {e}")))?;
        // Self-play and rating games must end; a config read from a file always has a cap
        // (the default's when it names none), so only a hand-edited run's config lacks it.
        if self.rules.ply_cap.is_none() {
            return invalid("rules.ply_cap must be set: every self-play game needs a cap".into());
        }
        self.network.resolve()?;
        self.search.validate().map_err(|e| ConfigError::Invalid(format!("search: {e}")))?;
        if let Some(threads) = self.run.threads.filter(|t| !(1..=MAX_THREADS).contains(t)) {
            return invalid(format!("run.threads must be 1..={MAX_THREADS}, not {threads}"));
        }
        let s = &self.selfplay;
        if s.games_per_generation == 0 || s.parallel_games == 0 || s.leaves_per_game == 0 {
            return invalid("selfplay.games_per_generation, parallel_games and leaves_per_game must be at least 1".into());
        }
        // Sizes the program allocates for up front: beyond these a typo would abort it.
        for (key, value, most) in [
            ("selfplay.parallel_games", s.parallel_games, MAX_PARALLEL_GAMES),
            ("selfplay.leaves_per_game", s.leaves_per_game, MAX_LEAVES_PER_GAME),
            ("selfplay.lanes", s.lanes, MAX_LANES),
            ("training.batch_size", self.training.batch_size, MAX_BATCH_SIZE),
        ] {
            if value > most {
                return invalid(format!("{key} must be at most {most}, not {value}"));
            }
        }
        if s.max_network_age > MAX_NETWORK_AGE {
            return invalid(format!(
                "selfplay.max_network_age must be at most {MAX_NETWORK_AGE}, not {}",
                s.max_network_age
            ));
        }
        if !(0.0..=1.0).contains(&s.full_search_probability) || s.full_search_probability == 0.0 {
            return invalid(format!(
                "selfplay.full_search_probability must be in (0, 1], not {}",
                s.full_search_probability
            ));
        }
        if s.full_visits < 2 || s.fast_visits < 1 || s.fast_visits > s.full_visits {
            return invalid(format!("selfplay visits: need full_visits >= 2 and 1 <= fast_visits <= full_visits (got {} and {})", s.full_visits, s.fast_visits));
        }
        if ![s.temperature_start, s.temperature_end].iter().all(|t| *t >= 0.0 && t.is_finite()) {
            return invalid(format!(
                "selfplay temperatures must be finite and >= 0, not {} and {}",
                s.temperature_start, s.temperature_end
            ));
        }
        for (i, opponent) in s.opponents.iter().enumerate() {
            opponent.spec()?;
            // Games are told apart by the players' names in their records.
            if s.opponents[..i].iter().any(|earlier| earlier.player == opponent.player) {
                return invalid(format!(
                    "selfplay.opponents: `{}` is given twice",
                    opponent.player
                ));
            }
        }
        let shares: f64 = s.opponents.iter().map(|o| o.share).sum();
        if shares > 1.0 + 1e-9 {
            return invalid(format!(
                "selfplay.opponents: the shares add up to {shares}, more than all the games"
            ));
        }
        let r = &self.replay;
        if r.min_window == 0
            || r.max_window < r.min_window
            || !(0.0..=1.0).contains(&r.window_exponent)
            || !(r.max_sample_reuse > 0.0 && r.max_sample_reuse.is_finite())
        {
            return invalid("replay: need 0 < min_window <= max_window, window_exponent in [0, 1], max_sample_reuse finite and > 0".into());
        }
        if !(0.0..1.0).contains(&r.records_share) {
            return invalid(format!("replay.records_share must be in [0, 1) (self-play must keep a part of each batch), not {}", r.records_share));
        }
        if let Some(matches) = &self.matches {
            matches.validate()?;
        }
        for (i, stage) in self.curriculum.iter().enumerate() {
            let after = if i == 0 { 0 } else { self.curriculum[i - 1].until };
            if stage.until <= after {
                return invalid(format!(
                    "curriculum: the stages' `until` must increase from 1, not {} after {after}",
                    stage.until
                ));
            }
            // The stage's board and its search as self-play will use them, checked as
            // [rules] and [search] are.
            let in_stage = |e: &dyn std::fmt::Display| {
                ConfigError::Invalid(format!("curriculum stage until {}: {e}", stage.until))
            };
            self.rules_for(stage.until).validate().map_err(|e| in_stage(&e))?;
            self.search_for(stage.until).validate().map_err(|e| in_stage(&e))?;
        }
        let learns_from_matches = self.matches.as_ref().is_some_and(|m| m.learn);
        match (r.records.is_empty() && !learns_from_matches, r.records_share > 0.0) {
            (true, true) => return invalid("replay.records_share is set but replay.records names no files to draw from (and no [matches] learn from theirs)".into()),
            (false, false) if learns_from_matches => {
                return invalid("[matches] learn from their games but replay.records_share is 0: they would never be trained on (set it, or matches.learn = false)".into())
            }
            (false, false) => return invalid("replay.records names files but replay.records_share is 0: they would never be trained on".into()),
            _ => {}
        }
        let e = &self.evaluation;
        if e.every > 0 && (e.games == 0 || e.simulations == 0) {
            return invalid("evaluation: games and simulations must be at least 1 (or every = 0 to turn rating off)".into());
        }
        if e.every > 0 && !e.games.is_multiple_of(2) {
            return invalid(format!(
                "evaluation.games must be even (each opening is played with both colours), not {}",
                e.games
            ));
        }
        if e.games > MAX_MATCH_GAMES {
            return invalid(format!(
                "evaluation.games must be at most {MAX_MATCH_GAMES}, not {}",
                e.games
            ));
        }
        e.baseline_specs()?;
        let t = &self.training;
        if t.batch_size == 0 || t.steps_per_generation == 0 {
            return invalid(
                "training.batch_size and steps_per_generation must be at least 1".into(),
            );
        }
        check_schedule(&t.learning_rate, "generation")?;
        check_optimiser(t.weight_decay, t.value_loss_weight, t.max_grad_norm)?;
        // At 1 or more SGD's momentum buffer grows without bound.
        if !(0.0..1.0).contains(&t.momentum) {
            return invalid(format!("training.momentum must be in [0, 1), not {}", t.momentum));
        }
        if !(0.0..=1.0).contains(&t.search_value_share) {
            return invalid(format!(
                "training.search_value_share must be in [0, 1], not {}",
                t.search_value_share
            ));
        }
        Ok(())
    }

    /// What must not change when a run is resumed: the game and the network's shape.
    pub fn incompatibility(&self, stored: &Config) -> Option<String> {
        if self.rules != stored.rules {
            return Some(format!(
                "[rules] differ: the run has {}, this config {}",
                stored.rules, self.rules
            ));
        }
        if self.network.resolve().ok() != stored.network.resolve().ok() {
            return Some("[network] differs from the run's network".into());
        }
        None
    }
}

/// Rewrites every float that is exactly an f32 as that f32's shortest decimal. A float that is
/// not (an f64 option such as a learning rate of 0.001) is left as it is, so nothing changes
/// value.
fn shorten_f32_floats(value: &mut toml::Value) {
    match value {
        toml::Value::Float(float) => {
            let narrow = *float as f32;
            if f64::from(narrow) == *float {
                *float = narrow.to_string().parse().expect("an f32 prints as a float");
            }
        }
        toml::Value::Array(items) => items.iter_mut().for_each(shorten_f32_floats),
        toml::Value::Table(table) => {
            table.iter_mut().for_each(|(_, item)| shorten_f32_floats(item))
        }
        _ => {}
    }
}
