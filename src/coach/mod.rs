//! The training loop and its run directory. Self-play, training and checkpoints alternate in
//! generations (each begun by a match against a fixed opponent with `[matches]`, see
//! [`matches`]); `state.json` is written last in each generation and is the commit point, so a
//! run killed at any moment resumes from the last finished generation. The generation in
//! progress keeps the self-play games it finished (see [`journal`]) and loses only its games
//! under way and its training. Progress is reported through [`Observer`], so no terminal code
//! lives here.
//!
//! ```text
//! RUN/config.toml            the resolved config (what a resume runs with)
//! RUN/run.json               program version and seed
//! RUN/state.json             last finished generation and running totals
//! RUN/metrics.csv            one row per generation
//! RUN/opponents.csv          one row per generation and configured opponent (with opponents)
//! RUN/checkpoints/gen-N.safetensors   the network after generation N (gen-000000: initial)
//! RUN/checkpoints/optimizer-N.safetensors  the optimiser's moments after generation N (newest only)
//! RUN/replay/gen-N.bin       generation N's training samples (gen-000000: the samples a
//!                            pretrained run's first network learned from)
//! RUN/games/gen-N.txt        generation N's self-play game records
//! RUN/selfplay/gen-N/        the games of generation N while it is in progress (see [`journal`])
//! RUN/ratings/games.csv      every rating game (see [`rating`])
//! RUN/ratings/ratings.csv    the ratings fitted over them
//! RUN/ratings/gen-N.txt      generation N's rating game records
//! RUN/matches.csv            one row per generation's match (with [matches])
//! RUN/matches/gen-N.txt      generation N's match records
//! ```

pub mod files;
pub mod journal;
pub mod matches;
pub mod rating;

use crate::config::Config;
use crate::nn::optim::Optimizer;
use crate::nn::{configure_threads, Network};
use crate::replay::{self, ReplayBuffer, Sample};
use crate::selfplay;
use crate::train::{self, Round};
use crate::util::generation_name;
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use files::RunError;
use files::{corrupt, io, read_csv, write_csv, write_file, DirLock};
use matches::MatchRow;

/// One row of `metrics.csv`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MetricsRow {
    pub generation: u32,
    pub games: usize,
    pub positions: usize,
    pub samples: usize,
    pub mean_game_length: f64,
    pub white_wins: usize,
    pub black_wins: usize,
    pub draws: usize,
    /// Games against `[selfplay] opponents` among `games`, all together, and the network's
    /// score in them (points / games); `opponents.csv` has them by opponent. Empty without
    /// opponents, and in rows written before there were any.
    #[serde(default)]
    pub opponent_games: Option<usize>,
    #[serde(default)]
    pub opponent_score: Option<f64>,
    pub policy_loss: f64,
    pub value_loss: f64,
    pub policy_entropy: f64,
    pub value_accuracy: f64,
    pub grad_norm: f64,
    /// Losses of the network that played this generation's games on their samples, before it
    /// trained on them: held out, where the losses above are on the window, mostly on samples
    /// trained on before, and keep falling as the network memorises it. Empty in rows written
    /// before it was measured.
    #[serde(default)]
    pub fresh_policy_loss: Option<f64>,
    #[serde(default)]
    pub fresh_value_loss: Option<f64>,
    /// Elo of this generation's checkpoint when it was rated (random = 0), else empty.
    #[serde(default)]
    pub elo: Option<f64>,
    /// Half-width of the Elo's 95% interval.
    #[serde(default)]
    pub elo_error: Option<f64>,
    /// Simulations a second of this invocation's self-play; empty when it played none of the
    /// generation's games (all were resumed from the journal of a stopped invocation).
    #[serde(default)]
    pub selfplay_sims_per_second: Option<f64>,
    pub train_samples_per_second: f64,
    pub train_steps: usize,
    pub learning_rate: f64,
    pub window: usize,
    pub total_games: usize,
    pub total_positions: usize,
    pub wall_seconds: f64,
}

/// One row of `opponents.csv`: a generation's games against one of `[selfplay] opponents`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OpponentRow {
    pub generation: u32,
    /// The opponent's player spec, as the game records name it.
    pub opponent: String,
    pub games: usize,
    /// The network's points per game against it (a win 1, a draw 1/2); empty without games.
    pub score: Option<f64>,
}

/// Where a run stands; written atomically at the end of every generation.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunState {
    pub generation: u32,
    pub total_games: usize,
    pub total_positions: usize,
    pub total_samples: usize,
    pub wall_seconds: f64,
    /// The newest generation whose rating games are done.
    #[serde(default)]
    pub rated_generation: u32,
}

/// When a training invocation stops: at the end of the first generation after which the run has
/// `generations` in all, or `hours` of training time in all (both counted over every invocation
/// of the run, as `state.json` keeps them); with neither, it goes on until stopped.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Until {
    pub generations: Option<u32>,
    pub hours: Option<f64>,
}

impl Until {
    /// What of the limits the run has reached, in words; None while it should go on.
    fn reached(&self, state: &RunState) -> Option<String> {
        if let Some(generations) = self.generations.filter(|&g| state.generation >= g) {
            return Some(format!("{} generations (asked: {generations})", state.generation));
        }
        let hours = state.wall_seconds / 3600.0;
        self.hours
            .filter(|&limit| hours >= limit)
            .map(|limit| format!("{hours:.2} hours of training (asked: {limit})"))
    }
}

/// A count of generations, as `--generations` gives it.
impl From<Option<u32>> for Until {
    fn from(generations: Option<u32>) -> Until {
        Until { generations, hours: None }
    }
}

/// Told about progress; every method does nothing unless overridden.
pub trait Observer {
    fn message(&self, _text: &str) {}
    fn selfplay_started(&self, _generation: u32, _games: usize) {}
    fn game_finished(&self, _done: usize) {}
    fn selfplay_progress(&self, _progress: &selfplay::SelfPlayProgress) {}
    fn training_started(&self, _generation: u32, _steps: usize) {}
    fn training_step(&self, _step: usize) {}
    fn rating_started(&self, _generation: u32, _games: usize) {}
    fn rating_game_finished(&self) {}
    fn match_started(&self, _generation: u32, _games: usize) {}
    fn match_game_finished(&self, _done: usize) {}
    fn match_finished(&self, _row: &MatchRow) {}
    /// `opponents` are the generation's rows of `opponents.csv` (none without opponents).
    fn generation_finished(&self, _row: &MetricsRow, _opponents: &[OpponentRow]) {}
}

/// An observer that says nothing (tests).
pub struct Silent;
impl Observer for Silent {}

/// How a new run's first network learns from another run's replay buffer before its own
/// self-play starts: `steps` optimiser steps on the newest samples of `source_run`, at most
/// the new config's `max_window` of them. The source may have a network of any size, so a
/// larger network can begin from a smaller one's games. With `init`, the network starts from
/// that checkpoint's weights (as [`Run::start_from`]) rather than random ones, and `steps`
/// may be 0: the run then only keeps the source's samples, so that a trained network carried
/// on in a new run trains on a window as broad as the one that trained it from its first
/// generation, not on a few generations of its own games (docs/methods.md, "Window from
/// another run").
pub struct Pretraining<'a> {
    pub source_run: &'a Path,
    pub steps: usize,
    pub init: Option<&'a Path>,
}

/// What pretraining did, recorded in the new run's `run.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PretrainingReport {
    pub source_run: PathBuf,
    /// The source run's generations whose samples were used, oldest and newest.
    pub generations: (u32, u32),
    pub samples: usize,
    pub steps: usize,
    /// The means over the steps; none when there were no steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_loss: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_loss: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_accuracy: Option<f64>,
    pub seconds: f64,
}

/// Where a generation's games come from: self-play in this process ([`LocalSelfPlay`]), or
/// the workers of a cluster (`crate::cluster`).
pub trait GameSource {
    /// The games of `generation`, played by `network` (the newest; a source may also take
    /// games of a few generations before), each saved to the generation's journal as it comes,
    /// so that a stopped generation resumes with them.
    fn games(
        &mut self,
        run: &Run,
        generation: &Generation,
        network: &Network,
        observer: &dyn Observer,
    ) -> Result<selfplay::SelfPlayOutput, RunError>;

    /// Told once the run has committed the generation whose games it gave last.
    fn committed(&mut self, _run: &Run, _observer: &dyn Observer) -> Result<(), RunError> {
        Ok(())
    }
}

/// The generation's self-play games with the newest network, played here.
pub struct LocalSelfPlay;

impl GameSource for LocalSelfPlay {
    fn games(
        &mut self,
        run: &Run,
        generation: &Generation,
        network: &Network,
        observer: &dyn Observer,
    ) -> Result<selfplay::SelfPlayOutput, RunError> {
        let config = &run.config;
        let number = generation.number;
        let resumed = generation.journal.finished_games()?;
        if !resumed.is_empty() {
            observer.message(&format!(
                "generation {number}: {} games were finished before the stop; playing the rest",
                resumed.len()
            ));
        }
        observer.selfplay_started(number, config.selfplay.games_per_generation);
        observer.game_finished(resumed.len());
        // A fresh copy (and cache) each generation: the network trained since the last one.
        // Self-play may search in bf16; training stays in f32.
        let lanes = generation.selfplay.lanes(config.run.threads());
        let mut evaluators = network.lane_copies(config.run.precision, lanes, 200_000)?;
        let player = selfplay::network_name(number - 1);
        // The first games to finish are the short ones: until half have, the last
        // generation's games on this board tell better how long the rest will take.
        let last_length = run
            .metrics
            .last()
            .filter(|row| config.rules_for(row.generation) == generation.rules)
            .map(|row| row.mean_game_length);
        let mut saved = |game: &selfplay::FinishedGame, done: usize| -> Result<(), RunError> {
            generation.journal.save(game)?;
            generation.save_time()?;
            observer.game_finished(done);
            Ok(())
        };
        selfplay::play_games(
            &mut evaluators,
            generation.rules,
            &generation.search,
            &generation.selfplay,
            generation.seed,
            &player,
            resumed,
            &mut saved,
            &mut |progress| match last_length {
                Some(length) if 2 * progress.games_done < progress.games_total => observer
                    .selfplay_progress(&selfplay::SelfPlayProgress {
                        plies_per_game: length,
                        ..*progress
                    }),
                _ => observer.selfplay_progress(progress),
            },
        )
    }
}

/// A run directory and its loaded state.
pub struct Run {
    pub dir: PathBuf,
    pub config: Config,
    pub state: RunState,
    metrics: Vec<MetricsRow>,
    opponents: Vec<OpponentRow>,
    /// The config [`Run::open`] was given for an existing run, as TOML, where it differs from
    /// the stored one: stored once the run has resumed with it, so that a config the run cannot
    /// resume with (another optimiser, a missing records file) leaves the stored one as it was.
    unstored_config: Option<String>,
    /// This process's hold on the directory while it may write there; none for a run opened
    /// only to be read (another run's buffer to pretrain on).
    _lock: Option<DirLock>,
}

pub fn checkpoint_path(dir: &Path, generation: u32) -> PathBuf {
    dir.join("checkpoints").join(format!("{}.safetensors", generation_name(generation)))
}

/// The records of a generation's games in the run `dir`.
pub fn games_path(dir: &Path, generation: u32) -> PathBuf {
    dir.join("games").join(format!("{}.txt", generation_name(generation)))
}

/// What a training invocation carries from generation to generation.
struct Learner {
    network: Network,
    optimizer: Optimizer,
    buffer: ReplayBuffer,
    /// The rows of `matches.csv`, this generation's included once it is played.
    match_rows: Vec<MatchRow>,
    clock: Clock,
}

/// The run's wall time: what earlier invocations committed, what this one has run, and what
/// invocations stopped before committing a generation spent on it (from its journal: it counts,
/// as the games they played do).
struct Clock {
    started: Instant,
    wall_before: f64,
    carried: f64,
}

impl Clock {
    fn wall_seconds(&self) -> f64 {
        self.wall_before + self.carried + self.started.elapsed().as_secs_f64()
    }
}

/// The generation being made: its number, its seed, the rules its self-play plays under (see
/// [`Config::rules_for`]), and its journal.
pub struct Generation {
    pub number: u32,
    pub seed: u64,
    pub rules: crate::game::Rules,
    /// Self-play's search and settings for the generation (its curriculum stage's).
    pub search: crate::mcts::SearchConfig,
    pub selfplay: crate::config::SelfPlayConfig,
    pub journal: journal::Journal,
    /// When this invocation began it, and the time earlier invocations had spent on it.
    started: Instant,
    carried: f64,
}

impl Generation {
    fn begin(
        dir: &Path,
        number: u32,
        config: &Config,
        clock: &mut Clock,
    ) -> Result<Generation, RunError> {
        let rules = config.rules_for(number);
        let journal = journal::Journal::open(dir, number, rules)?;
        let carried = journal.seconds()?;
        clock.carried += carried;
        let seed = config.run.seed ^ (number as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
        Ok(Generation {
            number,
            seed,
            rules,
            search: config.search_for(number),
            selfplay: config.selfplay_for(number),
            journal,
            started: Instant::now(),
            carried,
        })
    }

    /// Saves the time spent on the generation so far, so a stop loses none of it.
    pub fn save_time(&self) -> Result<(), RunError> {
        self.journal.save_seconds(self.carried + self.started.elapsed().as_secs_f64())
    }
}

/// What a generation's training gave.
struct Trained {
    stats: train::TrainStats,
    /// The losses on the new samples before training on them.
    fresh: Option<train::HeldOutLosses>,
    new_samples: usize,
    total_samples: usize,
    window: usize,
    learning_rate: f64,
}

impl Run {
    /// Opens `dir`, creating the run from `config` if it holds none; an existing run resumes
    /// with its stored config, or with a given one that agrees with it on the rules and network
    /// (stored in its place once training has resumed with it).
    pub fn open(dir: &Path, config: Option<Config>) -> Result<Run, RunError> {
        let config_path = dir.join("config.toml");
        let state_path = dir.join("state.json");
        if !config_path.exists() {
            if state_path.exists() {
                return Err(RunError::ConfigMissing { dir: dir.to_path_buf() });
            }
            let Some(config) = config else {
                refuse_started(dir)?;
                return Err(RunError::NoConfig { dir: dir.to_path_buf() });
            };
            // A new directory is made, and held, only as the run is created.
            return Run::create(dir, config, DirLock::acquire_if_present(dir)?);
        }
        // Everything below reads the directory as it is once this process holds it.
        let lock = DirLock::acquire(dir)?;
        let (stored, stored_text) = Config::load_stored(&config_path)?;
        if let Some(given) = &config {
            if let Some(problem) = given.incompatibility(&stored) {
                return Err(RunError::Incompatible { dir: dir.to_path_buf(), problem });
            }
        }
        // Settings that do not change the game or the network may be changed on resume.
        let config = config.unwrap_or_else(|| stored.clone());
        if state_path.exists() {
            let state = read_state(&state_path)?;
            // The curriculum may change only for generations to come: the finished ones
            // and the one in progress (its journal) were played under the stored one's rules.
            if let Some(generation) =
                (1..=state.generation + 1).find(|&g| config.rules_for(g) != stored.rules_for(g))
            {
                let problem = format!(
                    "the [[curriculum]] gives generation {generation} other rules ({}) than the run played it on ({})",
                    config.rules_for(generation),
                    stored.rules_for(generation)
                );
                return Err(RunError::Incompatible { dir: dir.to_path_buf(), problem });
            }
            let metrics = read_metrics(&dir.join("metrics.csv"), state.generation)?;
            let opponents = read_opponents(&dir.join("opponents.csv"), state.generation)?;
            // Stored anew when it differs from the file, which includes an older program's
            // config read through its migrations: the file then says what the run does now.
            let toml = config.to_toml();
            let unstored_config = (toml != stored_text).then_some(toml);
            return Ok(Run {
                dir: dir.to_path_buf(),
                config,
                state,
                metrics,
                opponents,
                unstored_config,
                _lock: Some(lock),
            });
        }
        // Created but not initialised (killed during creation): start it again, unless it
        // holds later work (`refuse_started`).
        Run::create(dir, config, Some(lock))
    }

    /// Starts a new run in `dir` whose first network takes the weights of the checkpoint at
    /// `init` instead of random ones (see [`Network::init_from`]: a trained network can go on
    /// with threat planes added). Its replay buffer starts empty. `run.json` records where the
    /// weights came from.
    pub fn start_from(dir: &Path, config: Config, init: &Path) -> Result<Run, RunError> {
        refuse_started(dir)?;
        let device = config.run.device.resolve()?;
        let mut network = Network::new(&config.net_config()?, device, Some(config.run.seed))?;
        network.init_from_file(init)?;
        let info = serde_json::json!({ "initialised_from": init.display().to_string() });
        Run::create_with(dir, config, network, None, info, None)
    }

    /// Starts a new run in `dir` whose first network is trained on another run's replay
    /// buffer (see [`Pretraining`]), with progress reported as generation 0's training. The
    /// samples it learned from become the run's chunk 0, so that the first generations train on
    /// them as well as on their own few games (a window of one generation's games would undo
    /// much of the pretraining), and the optimiser's state carries on into generation 1.
    /// Nothing is written until pretraining is done, so an interrupted start leaves no run.
    pub fn start_pretrained(
        dir: &Path,
        config: Config,
        pretraining: Pretraining,
        observer: &dyn Observer,
    ) -> Result<Run, RunError> {
        refuse_started(dir)?;
        let source_run = pretraining.source_run;
        let refuse = |problem: String| RunError::Pretraining {
            source_run: source_run.to_path_buf(),
            problem,
        };
        if !source_run.join("config.toml").exists() || !source_run.join("state.json").exists() {
            return Err(refuse("it is not a run directory (no config.toml and state.json)".into()));
        }
        let source = Run::open_existing(source_run)?;
        if source.config.rules != config.rules {
            return Err(refuse(format!(
                "its games are of other rules ({}; this run: {})",
                source.config.rules, config.rules
            )));
        }
        let mut buffer = read_newest_chunks(
            &source.dir,
            source.state.generation,
            config.replay.max_window,
            &config.rules,
        )?;
        // Only the positions of the new run's own board: a curriculum's smaller boards stay
        // behind (chunk 0 holds one board).
        buffer.keep_board(config.rules.width, config.rules.height);
        let generations = buffer.generations();
        let (Some(&first), Some(&last)) = (generations.first(), generations.last()) else {
            return Err(refuse("its replay buffer is empty".into()));
        };
        configure_threads(config.run.threads());
        let device = config.run.device.resolve()?;
        let mut network = Network::new(&config.net_config()?, device, Some(config.run.seed))?;
        if let Some(init) = pretraining.init {
            network.init_from_file(init)?;
        }
        let mut optimizer = Optimizer::new(&network, config.training.optimizer_settings());
        let samples = buffer.len();
        let stats = (pretraining.steps > 0).then(|| {
            let mut rng = StdRng::seed_from_u64(config.run.seed ^ 0x0070_7265_7472_6169);
            observer.training_started(0, pretraining.steps);
            let learning_rate = config.training.learning_rate_at(0);
            train::train(
                &network,
                &mut optimizer,
                Round { buffer: &buffer, window: samples, steps: pretraining.steps, learning_rate },
                &config.training,
                &mut rng,
                &|s| observer.training_step(s),
            )
        });
        if stats.as_ref().is_some_and(train::TrainStats::diverged) {
            return Err(refuse("its training diverged (the losses are not finite numbers): lower [training] learning_rate".into()));
        }
        let report = PretrainingReport {
            source_run: source_run.to_path_buf(),
            generations: (first, last),
            samples,
            steps: stats.as_ref().map_or(0, |s| s.steps),
            policy_loss: stats.as_ref().map(|s| s.policy_loss),
            value_loss: stats.as_ref().map(|s| s.value_loss),
            value_accuracy: stats.as_ref().map(|s| s.value_accuracy),
            seconds: stats.as_ref().map_or(0.0, |s| s.seconds),
        };
        let source =
            format!("{samples} samples of {} (generations {first}-{last})", source_run.display());
        let weights = pretraining
            .init
            .map_or(String::new(), |init| format!(", from the weights of {}", init.display()));
        observer.message(&match &stats {
            Some(stats) => format!(
                "pretrained on {source}{weights}: {} steps, policy loss {:.3}, value loss {:.3}, value acc {:.2}, {:.0} s",
                stats.steps, stats.policy_loss, stats.value_loss, stats.value_accuracy, stats.seconds
            ),
            None => format!("kept {source} for the first generations to train on{weights}"),
        });
        let mut info = serde_json::json!({ "pretrained": report });
        if let Some(init) = pretraining.init {
            info["initialised_from"] = serde_json::json!(init.display().to_string());
        }
        Run::create_with(dir, config, network, Some((optimizer, buffer.into_samples())), info, None)
    }

    /// An existing run, with nothing written (unlike [`Run::open`], which stores the config).
    fn open_existing(dir: &Path) -> Result<Run, RunError> {
        let (config, _) = Config::load_stored(&dir.join("config.toml"))?;
        let state = read_state(&dir.join("state.json"))?;
        Ok(Run {
            dir: dir.to_path_buf(),
            config,
            state,
            metrics: Vec::new(),
            opponents: Vec::new(),
            unstored_config: None,
            _lock: None,
        })
    }

    fn create(dir: &Path, config: Config, lock: Option<DirLock>) -> Result<Run, RunError> {
        refuse_started(dir)?;
        // A chunk 0 here is left by a pretrained start that was interrupted: starting the run
        // with random weights would train them on samples meant for the pretrained network.
        let chunk_zero = replay::chunk_path(&dir.join("replay"), 0);
        if chunk_zero.exists() {
            let problem = "left by an interrupted start with --pretrain-on; start the run again with --pretrain-on, or remove the directory".into();
            return Err(RunError::Corrupt { path: chunk_zero, problem });
        }
        let device = config.run.device.resolve()?;
        let network = Network::new(&config.net_config()?, device, Some(config.run.seed))?;
        Run::create_with(dir, config, network, None, serde_json::json!({}), lock)
    }

    /// Writes a new run around its first network, and for a pretrained one the optimiser state
    /// and samples that trained it (replay chunk 0); `info`'s fields go into `run.json`. The
    /// directory is held from here on, by `lock` or, where the caller holds none, a new one.
    /// Callers build the network first, so that one that cannot be built leaves no directory
    /// behind (a half-made one would be started again with random weights).
    fn create_with(
        dir: &Path,
        config: Config,
        network: Network,
        pretrained: Option<(Optimizer, Vec<Sample>)>,
        info: serde_json::Value,
        lock: Option<DirLock>,
    ) -> Result<Run, RunError> {
        let lock = DirLock::held_or_acquire(lock, dir)?;
        refuse_started(dir)?;
        for sub in ["checkpoints", "replay", "games"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(io(&dir.join(sub)))?;
        }
        // Chunk 0 before the config, so that a start killed once the config exists always
        // leaves it behind (and `create` refuses to start such a directory with random weights).
        let mut state = RunState::default();
        if let Some((optimizer, samples)) = pretrained {
            replay::write_chunk(&dir.join("replay"), 0, &samples, &config.rules)?;
            optimizer.save(&optimizer_path(dir, 0))?;
            state.total_samples = samples.len();
        } else {
            // Those left by an interrupted pretrained start, which this start replaces.
            let _ = std::fs::remove_file(replay::chunk_path(&dir.join("replay"), 0));
            let _ = std::fs::remove_file(optimizer_path(dir, 0));
        }
        write_file(&dir.join("config.toml"), config.to_toml().as_bytes())?;
        let mut run_info = serde_json::json!({ "program": "epaminondas", "version": env!("CARGO_PKG_VERSION"), "seed": config.run.seed });
        if let (Some(run_info), Some(info)) = (run_info.as_object_mut(), info.as_object()) {
            run_info.extend(info.clone());
        }
        write_file(
            &dir.join("run.json"),
            serde_json::to_string_pretty(&run_info).expect("json").as_bytes(),
        )?;
        network.save(&checkpoint_path(dir, 0), &checkpoint_metadata(&config, 0))?;
        let run = Run {
            dir: dir.to_path_buf(),
            config,
            state,
            metrics: Vec::new(),
            opponents: Vec::new(),
            unstored_config: None,
            _lock: Some(lock),
        };
        run.write_state()?;
        Ok(run)
    }

    fn write_state(&self) -> Result<(), RunError> {
        write_file(
            &self.dir.join("state.json"),
            serde_json::to_string_pretty(&self.state).expect("json").as_bytes(),
        )
    }

    pub fn metrics(&self) -> &[MetricsRow] {
        &self.metrics
    }

    /// Runs generations until `until` says stop, with self-play in this process.
    pub fn train(
        &mut self,
        until: impl Into<Until>,
        observer: &dyn Observer,
    ) -> Result<(), RunError> {
        self.train_with(until, &mut LocalSelfPlay, observer)
    }

    /// [`Run::train`] with the games from `source`. Each generation is a few named steps, as
    /// in AlphaZero: a match against a fixed opponent (with `[matches]`), the games of the
    /// newest network, training on the replay window, the checkpoint, and the commit of the
    /// generation; the newest checkpoint is rated when due.
    pub fn train_with(
        &mut self,
        until: impl Into<Until>,
        source: &mut dyn GameSource,
        observer: &dyn Observer,
    ) -> Result<(), RunError> {
        let mut until = until.into();
        until.generations = until.generations.or(self.config.run.generations);
        let mut learner = self.resume(observer)?;
        if let Some(toml) = self.unstored_config.take() {
            write_file(&self.dir.join("config.toml"), toml.as_bytes())?;
        }
        if let Some(reached) = until.reached(&self.state) {
            observer.message(&format!("run already has {reached}"));
        }
        self.rate_if_due(observer)?; // a rating interrupted by a crash is played again
        while until.reached(&self.state).is_none() {
            let generation = Generation::begin(
                &self.dir,
                self.state.generation + 1,
                &self.config,
                &mut learner.clock,
            )?;
            self.play_match(&generation, &mut learner, observer)?;
            let games = source.games(self, &generation, &learner.network, observer)?;
            self.store_games(&generation, &games)?;
            let trained = self.learn(&generation, &mut learner, games.samples, observer)?;
            self.save_networks(&generation, &learner)?;
            let row = self.commit(generation, &games.stats, &trained, &learner)?;
            source.committed(self, observer)?;
            self.rate_if_due(observer)?;
            observer.generation_finished(
                self.metrics.last().expect("just committed"),
                &self.opponents[row..],
            );
        }
        Ok(())
    }

    /// What training needs from the run as it stands: the newest network and its optimiser,
    /// the replay window with any records held beside it, and the run's matches.
    fn resume(&self, observer: &dyn Observer) -> Result<Learner, RunError> {
        let config = &self.config;
        configure_threads(config.run.threads());
        // Only the first configuration of rayon's global pool counts; later runs in one process reuse it.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(config.run.threads()).build_global();
        let device = config.run.device.resolve()?;
        let newest = checkpoint_path(&self.dir, self.state.generation);
        let (network, _) = Network::load(&newest, device)?;
        let expected = config.net_config()?;
        if network.config != expected {
            let problem = format!(
                "it holds a {:?} network where the run's config asks for a {:?}",
                network.config, expected
            );
            return Err(RunError::Corrupt { path: newest, problem });
        }
        check_fixed_players(config)?;
        let mut buffer = self.replay_window()?;
        // Match records held beside the window: the config's files, and the run's own matches.
        let mut held = Vec::new();
        if !config.replay.records.is_empty() {
            held = replay::samples_from_records(&config.replay.records, &config.rules)?;
            observer.message(&format!(
                "holding {} positions of {} record files beside the window, {:.0}% of each batch",
                held.len(),
                config.replay.records.len(),
                100.0 * config.replay.records_share
            ));
        }
        if config.matches.as_ref().is_some_and(|m| m.learn) {
            let played = matches::records_up_to(&self.dir, self.state.generation);
            if !played.is_empty() {
                let positions = replay::samples_from_records(&played, &config.rules)?;
                observer.message(&format!(
                    "holding {} positions of the run's {} matches beside the window",
                    positions.len(),
                    played.len()
                ));
                held.extend(positions);
            }
        }
        buffer.hold_records(held, config.replay.records_share);
        let match_rows = matches::read_rows(&self.dir.join("matches.csv"), self.state.generation)?;
        let settings = config.training.optimizer_settings();
        let optimizer_file = optimizer_path(&self.dir, self.state.generation);
        let optimizer = if optimizer_file.exists() {
            Optimizer::load(&optimizer_file, &network, settings)?
        } else {
            Optimizer::new(&network, settings)
        };
        let clock =
            Clock { started: Instant::now(), wall_before: self.state.wall_seconds, carried: 0.0 };
        Ok(Learner { network, optimizer, buffer, match_rows, clock })
    }

    /// With `[matches]`: the newest checkpoint's match against the fixed opponent, whose
    /// positions join the records held beside the window when it learns from them.
    fn play_match(
        &self,
        generation: &Generation,
        learner: &mut Learner,
        observer: &dyn Observer,
    ) -> Result<(), RunError> {
        let Some(settings) = &self.config.matches else { return Ok(()) };
        let number = generation.number;
        let before = generation.journal.match_games()?.len();
        if before > 0 {
            observer.message(&format!("generation {number}: {before} games of its match were finished before the stop; playing the rest"));
        }
        observer.match_started(number, settings.games);
        observer.match_game_finished(before);
        let played = matches::play(
            &self.dir,
            &self.config,
            settings,
            number,
            &generation.journal,
            &|done| {
                generation.save_time()?;
                observer.match_game_finished(done);
                Ok(())
            },
        )?;
        observer.match_finished(&played.row);
        if settings.learn {
            let positions = played.samples.len();
            learner.buffer.add_records(played.samples);
            observer.message(&format!("generation {number}: the match's {positions} positions join the records held beside the window ({} in all)", learner.buffer.records().len()));
        }
        learner.match_rows.retain(|row| row.generation < number);
        learner.match_rows.push(played.row);
        Ok(())
    }

    /// The generation's samples and game records, in the run's replay and games folders.
    fn store_games(
        &self,
        generation: &Generation,
        games: &selfplay::SelfPlayOutput,
    ) -> Result<(), RunError> {
        replay::write_chunk(
            &self.dir.join("replay"),
            generation.number,
            &games.samples,
            &generation.rules,
        )?;
        let text: String = games.records.iter().map(|r| format!("{r}\n")).collect();
        write_file(&games_path(&self.dir, generation.number), text.as_bytes())
    }

    /// Adds the new samples to the window and trains on it: as many steps as the config asks,
    /// fewer where that would train on each new sample more than `max_sample_reuse` times.
    fn learn(
        &self,
        generation: &Generation,
        learner: &mut Learner,
        samples: Vec<Sample>,
        observer: &dyn Observer,
    ) -> Result<Trained, RunError> {
        let config = &self.config;
        // The losses of the network that played these games, before it trains on them.
        let fresh =
            train::held_out_losses(&learner.network, &samples, config.training.search_value_share);
        let new_samples = samples.len();
        learner.buffer.push(generation.number, samples);
        let total_samples = self.state.total_samples + new_samples;
        let window = config.replay.window(total_samples);
        learner.buffer.trim(window);
        // The cap is on self-play's samples, so it counts only their part of each batch.
        let self_play_per_batch = config.training.batch_size as f64
            * if learner.buffer.records().is_empty() {
                1.0
            } else {
                1.0 - config.replay.records_share
            };
        let reuse_cap = (config.replay.max_sample_reuse * new_samples as f64 / self_play_per_batch)
            .ceil() as usize;
        let steps = config.training.steps_per_generation.min(reuse_cap.max(1));
        let learning_rate = config.training.learning_rate_at(generation.number);
        observer.training_started(generation.number, steps);
        let mut rng = StdRng::seed_from_u64(generation.seed ^ 0x0074_7261_696e);
        let round = Round { buffer: &learner.buffer, window, steps, learning_rate };
        let stats = train::train(
            &learner.network,
            &mut learner.optimizer,
            round,
            &config.training,
            &mut rng,
            &|s| observer.training_step(s),
        );
        if stats.diverged() {
            return Err(RunError::Diverged {
                dir: self.dir.clone(),
                generation: generation.number,
            });
        }
        Ok(Trained { stats, fresh, new_samples, total_samples, window, learning_rate })
    }

    /// The trained network as the generation's checkpoint, and the optimiser's state beside it.
    fn save_networks(&self, generation: &Generation, learner: &Learner) -> Result<(), RunError> {
        learner.network.save(
            &checkpoint_path(&self.dir, generation.number),
            &checkpoint_metadata(&self.config, generation.number),
        )?;
        learner.optimizer.save(&optimizer_path(&self.dir, generation.number))?;
        Ok(())
    }

    /// Commits the generation: its rows in the CSVs, then `state.json`, the commit point; then
    /// the journal and the previous optimiser state go. Returns where the generation's rows of
    /// `opponents.csv` start.
    fn commit(
        &mut self,
        generation: Generation,
        s: &selfplay::SelfPlayStats,
        trained: &Trained,
        learner: &Learner,
    ) -> Result<usize, RunError> {
        let number = generation.number;
        let stats = &trained.stats;
        self.state = RunState {
            rated_generation: self.state.rated_generation,
            generation: number,
            total_games: self.state.total_games + s.games,
            total_positions: self.state.total_positions + s.plies,
            total_samples: trained.total_samples,
            wall_seconds: learner.clock.wall_seconds(),
        };
        let row = MetricsRow {
            generation: number,
            games: s.games,
            positions: s.plies,
            samples: trained.new_samples,
            mean_game_length: s.plies as f64 / s.games.max(1) as f64,
            white_wins: s.white_wins,
            black_wins: s.black_wins,
            draws: s.draws,
            opponent_games: (!self.config.selfplay.opponents.is_empty())
                .then(|| s.opponent_games()),
            opponent_score: (s.opponent_games() > 0)
                .then(|| s.opponent_points() / s.opponent_games() as f64),
            policy_loss: stats.policy_loss,
            value_loss: stats.value_loss,
            policy_entropy: stats.policy_entropy,
            value_accuracy: stats.value_accuracy,
            grad_norm: stats.grad_norm,
            fresh_policy_loss: trained.fresh.map(|f| f.policy),
            fresh_value_loss: trained.fresh.map(|f| f.value),
            elo: None,
            elo_error: None,
            selfplay_sims_per_second: (s.simulations > 0)
                .then(|| s.simulations as f64 / s.seconds.max(1e-9)),
            train_samples_per_second: stats.samples as f64 / stats.seconds.max(1e-9),
            train_steps: stats.steps,
            learning_rate: trained.learning_rate,
            window: trained.window,
            total_games: self.state.total_games,
            total_positions: self.state.total_positions,
            wall_seconds: self.state.wall_seconds,
        };
        let first_opponent_row = self.opponents.len();
        self.opponents.extend(s.opponents.iter().map(|o| OpponentRow {
            generation: number,
            opponent: o.name.clone(),
            games: o.games,
            score: o.score(),
        }));
        if self.opponents.len() > first_opponent_row {
            write_csv(&self.dir.join("opponents.csv"), &self.opponents)?;
        }
        self.metrics.push(row);
        write_csv(&self.dir.join("metrics.csv"), &self.metrics)?;
        if self.config.matches.is_some() {
            write_csv(&self.dir.join("matches.csv"), &learner.match_rows)?;
        }
        self.write_state()?; // the commit point
        generation.journal.remove()?;
        // Only the newest optimiser state is kept; the previous one is dead once committed.
        let _ = std::fs::remove_file(optimizer_path(&self.dir, number - 1));
        Ok(first_opponent_row)
    }

    /// Rates the newest checkpoint if its generation is due for rating and not yet rated, and
    /// records the Elo in its metrics row.
    fn rate_if_due(&mut self, observer: &dyn Observer) -> Result<(), RunError> {
        let every = self.config.evaluation.every;
        let generation = self.state.generation;
        // Rating games are on [rules]' board: during a curriculum stage they would cost more
        // than the stage's generations and rate a network that has not played that board.
        if every == 0
            || generation <= self.config.curriculum_end()
            || !generation.is_multiple_of(every)
            || self.state.rated_generation >= generation
        {
            return Ok(());
        }
        let (elo, error) = rating::rate(&self.dir, &self.config, generation, observer)?;
        if let Some(row) = self.metrics.iter_mut().rfind(|r| r.generation == generation) {
            row.elo = Some(elo);
            row.elo_error = Some(error);
        }
        write_csv(&self.dir.join("metrics.csv"), &self.metrics)?;
        self.state.rated_generation = generation;
        self.write_state()
    }

    /// The samples the next generation trains on: the newest chunks that fill the window, read
    /// back from disk.
    pub fn replay_window(&self) -> Result<ReplayBuffer, RunError> {
        let window = self.config.replay.window(self.state.total_samples);
        read_newest_chunks(&self.dir, self.state.generation, window, &self.config.rules)
    }
}

fn read_state(path: &Path) -> Result<RunState, RunError> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    serde_json::from_str(&text).map_err(corrupt(path))
}

/// A run already in `dir` would be overwritten by a new start: refused. A directory whose start
/// was interrupted has no state.json yet and may be started again; one that holds a
/// generation's work without state.json (lost, or left out of a copy) is refused as well, since
/// a new start would write over its checkpoints, chunks and records.
fn refuse_started(dir: &Path) -> Result<(), RunError> {
    if dir.join("state.json").exists() {
        return Err(RunError::AlreadyStarted { dir: dir.to_path_buf() });
    }
    if let Some(found) = work_past_the_start(dir) {
        return Err(RunError::StateMissing { dir: dir.to_path_buf(), found });
    }
    Ok(())
}

/// The first file in `dir` that only a run past its start writes: `metrics.csv`, or in the
/// folders of checkpoints, chunks, games, the journal and ratings anything but generation 0's
/// checkpoint, optimiser state and replay chunk (which the start writes) and the temporary files
/// of an interrupted write.
fn work_past_the_start(dir: &Path) -> Option<PathBuf> {
    let written_by_the_start = [
        checkpoint_path(dir, 0),
        optimizer_path(dir, 0),
        replay::chunk_path(&dir.join("replay"), 0),
    ];
    let metrics = dir.join("metrics.csv");
    if metrics.exists() {
        return Some(metrics);
    }
    ["checkpoints", "replay", "games", "selfplay", "ratings"]
        .iter()
        .filter_map(|sub| std::fs::read_dir(dir.join(sub)).ok())
        .flat_map(|entries| entries.flatten().map(|entry| entry.path()))
        .find(|path| {
            let temporary = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
            !temporary && !written_by_the_start.contains(path)
        })
}

/// The replay chunks of the run in `dir`, newest first back from `last_generation`, until
/// they hold `window` samples, in a buffer oldest first. Chunk 0 exists only in a pretrained
/// run.
fn read_newest_chunks(
    dir: &Path,
    last_generation: u32,
    window: usize,
    rules: &crate::game::Rules,
) -> Result<ReplayBuffer, RunError> {
    let mut chunks = Vec::new();
    let mut held = 0;
    for generation in (0..=last_generation).rev() {
        if held >= window
            || (generation == 0 && !replay::chunk_path(&dir.join("replay"), 0).exists())
        {
            break;
        }
        let samples = replay::read_chunk(&dir.join("replay"), generation, rules)?;
        held += samples.len();
        chunks.push((generation, samples));
    }
    let mut buffer = ReplayBuffer::default();
    for (generation, samples) in chunks.into_iter().rev() {
        buffer.push(generation, samples);
    }
    Ok(buffer)
}

fn optimizer_path(dir: &Path, generation: u32) -> PathBuf {
    dir.join("checkpoints").join(format!("optimizer-{generation:06}.safetensors"))
}

fn checkpoint_metadata(config: &Config, generation: u32) -> BTreeMap<String, String> {
    let mut meta = BTreeMap::new();
    meta.insert("generation".into(), generation.to_string());
    meta.insert("rules".into(), serde_json::to_string(&config.rules).expect("json"));
    meta.insert("program_version".into(), env!("CARGO_PKG_VERSION").into());
    meta
}

/// The rows of a metrics file up to `generation` (rows of an unfinished generation are dropped).
pub fn read_metrics(path: &Path, generation: u32) -> Result<Vec<MetricsRow>, RunError> {
    read_csv(path, |row: &MetricsRow| row.generation <= generation)
}

/// The metrics rows of the run in `dir` whose generations are committed: a row written before
/// its generation's `state.json` is left out, since resuming may play that generation again.
/// A copy of a run kept without its `state.json` (its metrics and some checkpoints, to be
/// measured) will not be resumed, so each of its rows counts.
pub fn finished_metrics(dir: &Path) -> Result<Vec<MetricsRow>, RunError> {
    let state = dir.join("state.json");
    let last = if state.exists() { read_state(&state)?.generation } else { u32::MAX };
    read_metrics(&dir.join("metrics.csv"), last)
}

/// Checks the players the run measures itself against (`[evaluation] baselines` while rating is
/// on, the `[matches]` opponent) before it plays: a network file that is missing, unreadable or
/// trained for the other variant is refused now by its place in the config, rather than when
/// its first rating or match comes, after a generation of work.
fn check_fixed_players(config: &Config) -> Result<(), RunError> {
    let mut players = Vec::new();
    if config.evaluation.every > 0 {
        let baselines = config.evaluation.baseline_specs()?;
        players.extend(baselines.into_iter().map(|spec| ("[evaluation] baselines", spec)));
    }
    if let Some(matches) = &config.matches {
        players.push(("[matches] opponent", matches.opponent_spec()?));
    }
    for (place, spec) in players {
        crate::players::check_rules(&spec, &config.rules)
            .map_err(|source| RunError::Player { place, source })?;
    }
    Ok(())
}

/// The rows of an `opponents.csv` up to `generation`; none when the file is missing (a run
/// without opponents, or one written before there was the file).
pub fn read_opponents(path: &Path, generation: u32) -> Result<Vec<OpponentRow>, RunError> {
    read_csv(path, |row: &OpponentRow| row.generation <= generation)
}
