//! Distillation: a smaller network (the student) learns to give a trained network's (the
//! teacher's) move priors and win/draw/loss chances, on positions from games the teacher plays
//! by sampling its own priors.
//!
//! Why: at a fixed time per move the agent's strength against alphabeta grows with the
//! simulations it can afford (docs/methods.md, time against knowledge), and on a CPU without
//! bf16 instructions the 8x96 network evaluates about 150 positions a second on one core. A
//! network of a third of its work searches about three times as many; what it must not lose is
//! the teacher's knowledge, and a teacher's whole distributions teach more per position than
//! the one result of a game. Labels cost one teacher evaluation per position, the same
//! evaluation that picks the move played, so no search is spent.
//!
//! A distillation directory holds `config.toml`, `state.json` (the teacher, the student's
//! starting weights if they were not random, the steps taken, the positions and games so far),
//! `student.safetensors` and `optimizer.safetensors` (the newest, written together at every
//! checkpoint), `checkpoints/step-NNNNNNNN.safetensors`, `held-out.bin` (positions from the
//! first games, never trained on, in the replay chunk format) and `metrics.csv` (one row a
//! checkpoint, and one for step 0: the student as it started, measured on the held-out
//! positions as soon as they are played). It resumes from its last checkpoint; the window of
//! positions it trained from lives in memory and is played afresh by the teacher.

use crate::coach::files::{
    corrupt, io, read_csv, write_csv, write_file, DirLock, RunError, LOCK_FILE,
};
use crate::config::{ConfigError, NetworkConfig};
use crate::encode;
use crate::evaluator::{EvalRequest, Evaluator, Wdl};
use crate::game::{Color, Position, RecordResult, Rules, Status};
use crate::nn::model::NetConfig;
use crate::nn::optim::{Optimizer, OptimizerKind, OptimizerSettings};
use crate::nn::{configure_threads, encode_batch, DeviceChoice, Network, Precision};
use crate::replay::{self, outcome_for, ReplayBuffer, Sample, SparsePolicy};
use crate::train::{held_out_losses, losses, make_batch, LossWeights};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The distillation config: one TOML file, like a training config, with sections of its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistillConfig {
    pub run: DistillRunConfig,
    #[serde(default)]
    pub rules: Rules,
    /// The student's shape.
    pub network: NetworkConfig,
    pub training: DistillTrainingConfig,
    pub games: TeacherGamesConfig,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistillRunConfig {
    /// Seeds the student's initialisation and the teacher's games.
    pub seed: u64,
    /// Threads for libtorch.
    pub threads: usize,
    pub device: DeviceChoice,
    /// The number format of the teacher (the student trains in f32). Optional: auto.
    #[serde(default)]
    pub precision: Precision,
    /// Optimiser steps in all (`--steps` overrides).
    pub steps: u64,
    /// Steps between checkpoints (and held-out measurements).
    pub checkpoint_every: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistillTrainingConfig {
    pub batch_size: usize,
    /// AdamW's learning rate by step: [[from_step, rate], ...], sorted, the first from 0.
    pub learning_rate: Vec<(u64, f64)>,
    pub weight_decay: f64,
    pub max_grad_norm: f64,
    /// Weight of the value loss against the policy loss.
    pub value_loss_weight: f64,
    /// Mirror each sample left-right with probability 1/2.
    pub mirror_augmentation: bool,
}

impl DistillTrainingConfig {
    pub fn learning_rate_at(&self, step: u64) -> f64 {
        crate::config::rate_at(&self.learning_rate, step)
    }
}

/// How the teacher's games are played and used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeacherGamesConfig {
    /// Games played at once: each move of all of them is one teacher batch.
    pub lockstep: usize,
    /// The teacher's priors are raised to 1/temperature before the move is drawn from them: 1
    /// plays as the network believes, higher spreads the positions wider.
    pub temperature: f64,
    /// Uniformly random plies at the start of each game (0 to this many).
    pub random_opening_plies: u16,
    /// The newest positions that batches are drawn from.
    pub window: usize,
    /// How many times each position is trained on, on average: steps follow the positions.
    pub reuse: f64,
    /// Positions of the first games kept aside to measure the student on, never trained on.
    pub held_out: usize,
}

impl DistillConfig {
    pub fn load(path: &Path) -> Result<DistillConfig, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Io { path: path.display().to_string(), source })?;
        DistillConfig::parse(&text, &path.display().to_string())
    }

    /// Parses and validates; `origin` names the source in errors.
    pub fn parse(text: &str, origin: &str) -> Result<DistillConfig, ConfigError> {
        let config: DistillConfig = toml::from_str(text)
            .map_err(|e| ConfigError::Parse { path: origin.to_string(), message: e.to_string() })?;
        config.validate()?;
        Ok(config)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("config serialises")
    }

    pub fn student_config(&self) -> Result<NetConfig, ConfigError> {
        Ok(self.network.resolve()?.for_rules(&self.rules))
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |m: String| Err(ConfigError::Invalid(m));
        self.rules.validate().map_err(|e| ConfigError::Invalid(format!("rules: {e}")))?;
        if self.rules.ply_cap.is_none() {
            return invalid("rules.ply_cap must be set: the teacher's games must end".into());
        }
        if !(1..=crate::config::MAX_THREADS).contains(&self.run.threads) {
            return invalid(format!(
                "run.threads must be 1..={}, not {}",
                crate::config::MAX_THREADS,
                self.run.threads
            ));
        }
        if self.run.steps == 0 || self.run.checkpoint_every == 0 {
            return invalid("run.steps and run.checkpoint_every must be positive".into());
        }
        let training = &self.training;
        if training.batch_size == 0 {
            return invalid("training.batch_size must be positive".into());
        }
        crate::config::check_schedule(&training.learning_rate, "step")?;
        crate::config::check_optimiser(
            training.weight_decay,
            training.value_loss_weight,
            training.max_grad_norm,
        )?;
        let games = &self.games;
        if games.lockstep == 0 {
            return invalid("games.lockstep must be positive".into());
        }
        // Sizes allocated up front: beyond these a typo would abort the program.
        use crate::config::{MAX_BATCH_SIZE, MAX_PARALLEL_GAMES};
        for (key, value, most) in [
            ("games.lockstep", games.lockstep, MAX_PARALLEL_GAMES),
            ("training.batch_size", training.batch_size, MAX_BATCH_SIZE),
        ] {
            if value > most {
                return invalid(format!("{key} must be at most {most}, not {value}"));
            }
        }
        if !(games.temperature > 0.0 && games.temperature.is_finite()) {
            return invalid(format!(
                "games.temperature must be above 0, not {}",
                games.temperature
            ));
        }
        if games.window < training.batch_size {
            return invalid(format!(
                "games.window ({}) must hold at least a batch ({})",
                games.window, training.batch_size
            ));
        }
        if !(games.reuse > 0.0 && games.reuse.is_finite()) {
            return invalid(format!("games.reuse must be above 0, not {}", games.reuse));
        }
        Ok(())
    }
}

/// What a distillation has done, written with every checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistillState {
    /// The teacher's file, as given when the distillation began.
    pub teacher: PathBuf,
    /// The network the student started from, when it did not start from random weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initialised_from: Option<PathBuf>,
    pub steps: u64,
    /// Positions the teacher labelled, held-out ones included.
    pub positions: u64,
    pub games: u64,
    /// Working time, over every invocation.
    pub seconds: f64,
}

/// One checkpoint's measurements: the training batches' mean losses since the last checkpoint
/// and the student's losses on the held-out positions. The losses are cross-entropies against the
/// teacher's priors and chances, so the teacher's own entropies are their floors: the student
/// matches the teacher exactly when its held-out losses reach them. Step 0's row measures the
/// student as it started and has no training losses (NaN).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistillRow {
    pub step: u64,
    pub positions: u64,
    pub games: u64,
    pub seconds: f64,
    pub learning_rate: f64,
    pub policy_loss: f64,
    pub value_loss: f64,
    pub held_out_policy_loss: f64,
    pub held_out_value_loss: f64,
    pub teacher_entropy: f64,
    pub teacher_value_entropy: f64,
    /// Share of held-out positions where the student's most likely move is the teacher's.
    pub top_move_agreement: f64,
}

/// What a distillation reports as it goes.
pub trait DistillObserver {
    /// After every optimiser step; `steps` counts from the distillation's start.
    fn step(&self, _steps: u64) {}
    fn checkpoint(&self, _row: &DistillRow) {}
}

/// A distillation directory, created or resumed.
pub struct Distillation {
    dir: PathBuf,
    config: DistillConfig,
    state: DistillState,
    teacher: Network,
    student: Network,
    optimizer: Optimizer,
    held_out: Vec<Sample>,
    rows: Vec<DistillRow>,
    /// This process's hold on the directory while it writes there.
    _lock: DirLock,
}

fn optimizer_settings(config: &DistillConfig) -> OptimizerSettings {
    OptimizerSettings {
        kind: OptimizerKind::AdamW,
        momentum: 0.9,
        weight_decay: config.training.weight_decay,
    }
}

impl Distillation {
    /// Opens `dir`: resumes the distillation it holds (then `config`, if given, must be the one
    /// it was made with, and `teacher`, if given, the same file), or starts one there from
    /// `config` and `teacher`. `device`, if given, overrides the config's for this invocation.
    pub fn open(
        dir: &Path,
        config: Option<&DistillConfig>,
        teacher: Option<&Path>,
        device: Option<DeviceChoice>,
    ) -> Result<Distillation, RunError> {
        let state_path = dir.join("state.json");
        if !state_path.exists() {
            config.ok_or_else(|| RunError::NoConfig { dir: dir.to_path_buf() })?;
            teacher.ok_or_else(|| RunError::NoTeacher { dir: dir.to_path_buf() })?;
        }
        // Everything below reads the directory as it is once this process holds it; a new one
        // is made, and held, only as the distillation starts.
        let lock = DirLock::acquire_if_present(dir)?;
        if state_path.exists() {
            let stored = DistillConfig::load(&dir.join("config.toml"))?;
            if let Some(given) = config.filter(|given| **given != stored) {
                let sections = [
                    ("run", given.run != stored.run),
                    ("rules", given.rules != stored.rules),
                    ("network", given.network != stored.network),
                    ("training", given.training != stored.training),
                    ("games", given.games != stored.games),
                ];
                let differing: Vec<&str> = sections
                    .iter()
                    .filter(|(_, differs)| *differs)
                    .map(|(name, _)| *name)
                    .collect();
                let problem =
                    format!("the given config differs from it in [{}]", differing.join(", "));
                return Err(RunError::Incompatible { dir: dir.to_path_buf(), problem });
            }
            let text = std::fs::read_to_string(&state_path).map_err(io(&state_path))?;
            let state: DistillState = serde_json::from_str(&text).map_err(corrupt(&state_path))?;
            if let Some(teacher) = teacher.filter(|t| *t != state.teacher) {
                let problem = format!(
                    "{} distils {}, not this network",
                    dir.display(),
                    state.teacher.display()
                );
                return Err(RunError::Teacher { path: teacher.to_path_buf(), problem });
            }
            let lock = DirLock::held_or_acquire(lock, dir)?;
            return Distillation::resume(dir, stored, state, device, lock);
        }
        let config = config.ok_or_else(|| RunError::NoConfig { dir: dir.to_path_buf() })?;
        let teacher = teacher.ok_or_else(|| RunError::NoTeacher { dir: dir.to_path_buf() })?;
        refuse_foreign_files(dir)?;
        Distillation::start(dir, config.clone(), teacher, None, device, lock)
    }

    /// Starts a distillation in `dir` whose student begins with the weights of `student`, a
    /// network of the config's student size (the config's network may add the threat planes,
    /// which start at zero), instead of random ones: a student distilled before goes on with a
    /// new schedule, say the lower learning rates of a distillation that stopped early. The
    /// optimiser starts afresh. Refused where `dir` holds a distillation already.
    pub fn start_from(
        dir: &Path,
        config: &DistillConfig,
        teacher: &Path,
        student: &Path,
        device: Option<DeviceChoice>,
    ) -> Result<Distillation, RunError> {
        if dir.join("state.json").exists() {
            return Err(RunError::AlreadyStarted { dir: dir.to_path_buf() });
        }
        let lock = DirLock::acquire_if_present(dir)?;
        refuse_foreign_files(dir)?;
        Distillation::start(dir, config.clone(), teacher, Some(student), device, lock)
    }

    fn start(
        dir: &Path,
        config: DistillConfig,
        teacher_path: &Path,
        init: Option<&Path>,
        device: Option<DeviceChoice>,
        lock: Option<DirLock>,
    ) -> Result<Distillation, RunError> {
        configure_threads(config.run.threads);
        let device = device.unwrap_or(config.run.device).resolve()?;
        let teacher = load_teacher(teacher_path, &config, device)?;
        let mut student = Network::new(&config.student_config()?, device, Some(config.run.seed))?;
        if let Some(init) = init {
            student.init_from_file(init)?;
        }
        let optimizer = Optimizer::new(&student, optimizer_settings(&config));
        let lock = DirLock::held_or_acquire(lock, dir)?;
        std::fs::create_dir_all(dir.join("checkpoints")).map_err(io(dir))?;
        write_file(&dir.join("config.toml"), config.to_toml().as_bytes())?;
        let state = DistillState {
            teacher: teacher_path.to_path_buf(),
            initialised_from: init.map(Path::to_path_buf),
            steps: 0,
            positions: 0,
            games: 0,
            seconds: 0.0,
        };
        Ok(Distillation {
            dir: dir.to_path_buf(),
            config,
            state,
            teacher,
            student,
            optimizer,
            held_out: Vec::new(),
            rows: Vec::new(),
            _lock: lock,
        })
    }

    fn resume(
        dir: &Path,
        config: DistillConfig,
        state: DistillState,
        device: Option<DeviceChoice>,
        lock: DirLock,
    ) -> Result<Distillation, RunError> {
        configure_threads(config.run.threads);
        let device = device.unwrap_or(config.run.device).resolve()?;
        let teacher = load_teacher(&state.teacher, &config, device)?;
        let (student, _) = Network::load(&dir.join("student.safetensors"), device)?;
        if student.config != config.student_config()? {
            let problem = format!(
                "student.safetensors is a {:?}, the config asks for a {:?}",
                student.config,
                config.student_config()?
            );
            return Err(RunError::Incompatible { dir: dir.to_path_buf(), problem });
        }
        let optimizer = Optimizer::load(
            &dir.join("optimizer.safetensors"),
            &student,
            optimizer_settings(&config),
        )?;
        let held_out_path = dir.join("held-out.bin");
        let held_out = if held_out_path.exists() {
            replay::read_samples(&held_out_path, &config.rules)?
        } else {
            Vec::new()
        };
        let rows = read_csv(&dir.join("metrics.csv"), |row: &DistillRow| row.step <= state.steps)?;
        Ok(Distillation {
            dir: dir.to_path_buf(),
            config,
            state,
            teacher,
            student,
            optimizer,
            held_out,
            rows,
            _lock: lock,
        })
    }

    pub fn config(&self) -> &DistillConfig {
        &self.config
    }

    pub fn state(&self) -> &DistillState {
        &self.state
    }

    /// The student as the newest checkpoint left it.
    pub fn student_path(&self) -> PathBuf {
        self.dir.join("student.safetensors")
    }

    /// Distils until `steps` optimiser steps are taken in all (the config's when None),
    /// checkpointing every `checkpoint_every` and at the end.
    pub fn run(
        &mut self,
        steps: Option<u64>,
        observer: &dyn DistillObserver,
    ) -> Result<(), RunError> {
        let goal = steps.unwrap_or(self.config.run.steps);
        let started = Instant::now();
        let seconds_before = self.state.seconds;
        // A resumed distillation plays other games than the ones its first invocation played
        // (by the positions labelled, not the steps: one resumed at step 0 must not play the
        // held-out games again, into its training window).
        let mut rng = StdRng::seed_from_u64(
            self.config.run.seed ^ self.state.positions.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        let mut games: Vec<TeacherGame> = (0..self.config.games.lockstep)
            .map(|_| TeacherGame::new(&self.config, rng.random()))
            .collect();
        let mut window = ReplayBuffer::default();
        let mut chunk = 0u32;
        // Steps owed to the positions labelled so far (`reuse` times each, in batches).
        let mut owed = 0.0f64;
        let (mut policy_sum, mut value_sum, mut losses_since) = (0.0, 0.0, 0u64);
        let weights = LossWeights { value: self.config.training.value_loss_weight };
        while self.state.steps < goal {
            let finished = self.play_move(&mut games, &mut rng);
            if finished.is_empty() {
                continue;
            }
            self.state.games += finished.len() as u64;
            let mut labelled: Vec<Sample> = finished.into_iter().flatten().collect();
            self.state.positions += labelled.len() as u64;
            if self.held_out.len() < self.config.games.held_out {
                let room = self.config.games.held_out - self.held_out.len();
                let kept: Vec<Sample> = labelled.drain(..room.min(labelled.len())).collect();
                self.held_out.extend(kept);
                if self.held_out.len() == self.config.games.held_out {
                    let bytes = replay::encode_chunk(&self.held_out, &self.config.rules);
                    write_file(&self.dir.join("held-out.bin"), &bytes)?;
                    // Where the student starts, on the positions every later row is measured
                    // on: for a student that starts from trained weights, the gap left to close.
                    self.state.seconds = seconds_before + started.elapsed().as_secs_f64();
                    let row = self.checkpoint(f64::NAN, f64::NAN)?;
                    observer.checkpoint(&row);
                }
            }
            if labelled.is_empty() {
                continue;
            }
            owed += labelled.len() as f64 * self.config.games.reuse
                / self.config.training.batch_size as f64;
            window.push(chunk, labelled);
            chunk += 1;
            window.trim(self.config.games.window);
            while owed >= 1.0
                && window.len() >= self.config.training.batch_size
                && self.state.steps < goal
            {
                owed -= 1.0;
                let (policy, value) = self.train_step(&window, weights, &mut rng);
                policy_sum += policy;
                value_sum += value;
                losses_since += 1;
                self.state.steps += 1;
                observer.step(self.state.steps);
                if self.state.steps.is_multiple_of(self.config.run.checkpoint_every)
                    || self.state.steps == goal
                {
                    self.state.seconds = seconds_before + started.elapsed().as_secs_f64();
                    let n = losses_since.max(1) as f64;
                    let row = self.checkpoint(policy_sum / n, value_sum / n)?;
                    observer.checkpoint(&row);
                    (policy_sum, value_sum, losses_since) = (0.0, 0.0, 0);
                }
            }
        }
        Ok(())
    }

    /// One teacher batch over every unfinished game, one move each; returns the labelled
    /// positions of the games that ended (each replaced by a new game).
    fn play_move(&mut self, games: &mut [TeacherGame], rng: &mut StdRng) -> Vec<Vec<Sample>> {
        let requests: Vec<EvalRequest> = games
            .iter()
            .map(|game| EvalRequest { position: game.position, moves: game.position.legal_moves() })
            .collect();
        let evaluations = self.teacher.evaluate(&requests);
        let mut finished = Vec::new();
        for ((game, request), evaluation) in games.iter_mut().zip(&requests).zip(evaluations) {
            let policy = request
                .moves
                .iter()
                .zip(&evaluation.priors)
                .map(|(mv, p)| (encode::move_index(&request.position, *mv) as u16, *p))
                .collect();
            game.labelled.push((
                request.position,
                policy,
                Wdl::from_value_and_draw(evaluation.value, evaluation.draw),
            ));
            let weights: Vec<f64> = evaluation
                .priors
                .iter()
                .map(|p| (*p as f64).powf(1.0 / self.config.games.temperature))
                .collect();
            let index = sample_index(&weights, &mut game.rng);
            game.play(request.moves[index]);
            if let Some(result) = game.result() {
                let done = std::mem::replace(game, TeacherGame::new(&self.config, rng.random()));
                finished.push(done.into_samples(result));
            }
        }
        finished
    }

    /// One optimiser step on a batch from the window; returns its policy and value losses.
    fn train_step(
        &mut self,
        window: &ReplayBuffer,
        weights: LossWeights,
        rng: &mut StdRng,
    ) -> (f64, f64) {
        let training = &self.config.training;
        let samples: Vec<&Sample> =
            (0..training.batch_size).map(|_| window.sample(usize::MAX, rng)).collect();
        let mirror: Vec<bool> =
            samples.iter().map(|_| training.mirror_augmentation && rng.random_bool(0.5)).collect();
        // The value target is the teacher's chances alone: a share of 1 of the "searched" ones.
        let batch =
            make_batch(&samples, &mirror, self.student.config.inputs(), 1.0, self.student.device());
        let step_losses = losses(&self.student, &batch, weights, true);
        self.optimizer.zero_grad();
        step_losses.total.backward();
        self.optimizer.step(training.learning_rate_at(self.state.steps), training.max_grad_norm);
        (step_losses.policy, step_losses.value)
    }

    /// Measures the student on the held-out positions and writes the checkpoint, the metrics and
    /// the state, each atomically, the state last: a crash before it resumes with the new student
    /// under the previous count of steps (the steps since counted twice, nothing lost).
    fn checkpoint(&mut self, policy_loss: f64, value_loss: f64) -> Result<DistillRow, RunError> {
        let held_out = held_out_losses(&self.student, &self.held_out, 1.0);
        let row = DistillRow {
            step: self.state.steps,
            positions: self.state.positions,
            games: self.state.games,
            seconds: self.state.seconds,
            learning_rate: self
                .config
                .training
                .learning_rate_at(self.state.steps.saturating_sub(1)),
            policy_loss,
            value_loss,
            held_out_policy_loss: held_out.map_or(f64::NAN, |h| h.policy),
            held_out_value_loss: held_out.map_or(f64::NAN, |h| h.value),
            teacher_entropy: mean_entropy(&self.held_out, |s| {
                s.policy.iter().map(|(_, p)| *p).collect()
            }),
            teacher_value_entropy: mean_entropy(&self.held_out, |s| {
                s.searched.map_or_else(Vec::new, |c| vec![c.win, c.draw, c.loss])
            }),
            top_move_agreement: top_move_agreement(&self.student, &self.held_out),
        };
        let mut meta = BTreeMap::new();
        meta.insert("rules".into(), serde_json::to_string(&self.config.rules).expect("json"));
        meta.insert("distilled_from".into(), self.state.teacher.display().to_string());
        meta.insert("distill_steps".into(), self.state.steps.to_string());
        if let Some(init) = &self.state.initialised_from {
            meta.insert("distill_initialised_from".into(), init.display().to_string());
        }
        meta.insert("program_version".into(), env!("CARGO_PKG_VERSION").into());
        self.student.save(
            &self.dir.join("checkpoints").join(format!("step-{:08}.safetensors", self.state.steps)),
            &meta,
        )?;
        self.student.save(&self.dir.join("student.safetensors"), &meta)?;
        self.optimizer.save(&self.dir.join("optimizer.safetensors"))?;
        self.rows.retain(|r| r.step < row.step);
        self.rows.push(row.clone());
        write_csv(&self.dir.join("metrics.csv"), &self.rows)?;
        let text = serde_json::to_string_pretty(&self.state).expect("state serialises");
        write_file(&self.dir.join("state.json"), text.as_bytes())?;
        Ok(row)
    }
}

/// Refuses to start a distillation in a directory that holds anything but what a start that
/// stopped before its first checkpoint leaves (its config, its held-out positions, an empty
/// `checkpoints`) and the lock file: a training run given by mistake would lose its config.
/// A `config.toml` without the `checkpoints` folder, which a start makes before it, is the
/// user's own file, not a start's.
fn refuse_foreign_files(dir: &Path) -> Result<(), RunError> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for entry in entries {
        let path = entry.map_err(io(dir))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let ours = match name {
            "config.toml" => dir.join("checkpoints").is_dir(),
            "held-out.bin" => true,
            LOCK_FILE => true,
            "checkpoints" => {
                std::fs::read_dir(&path).is_ok_and(|mut inside| inside.next().is_none())
            }
            _ => false,
        };
        if !ours {
            return Err(RunError::NotADistillation {
                dir: dir.to_path_buf(),
                found: name.to_string(),
            });
        }
    }
    Ok(())
}

/// The teacher in its number format for search, refused if it was trained for the other game
/// (with stones or without).
fn load_teacher(
    path: &Path,
    config: &DistillConfig,
    device: tch::Device,
) -> Result<Network, RunError> {
    let (teacher, _) = Network::load(path, device)?;
    if teacher.config.stones != config.rules.stones {
        let problem = format!(
            "it was trained for the game {} stones, the config asks for the other",
            if teacher.config.stones { "with" } else { "without" }
        );
        return Err(RunError::Teacher { path: path.to_path_buf(), problem });
    }
    Ok(teacher.into_inference(config.run.precision))
}

/// An index drawn in proportion to `weights` (not all zero).
fn sample_index(weights: &[f64], rng: &mut impl Rng) -> usize {
    let total: f64 = weights.iter().sum();
    let mut left = rng.random::<f64>() * total;
    for (i, w) in weights.iter().enumerate() {
        if left < *w {
            return i;
        }
        left -= w;
    }
    weights.iter().rposition(|w| *w > 0.0).unwrap_or(0)
}

/// The mean entropy (nats) of the distribution `of` each sample: the floor of a cross-entropy
/// against it.
fn mean_entropy(samples: &[Sample], of: impl Fn(&Sample) -> Vec<f32>) -> f64 {
    let entropy = |distribution: Vec<f32>| {
        distribution
            .into_iter()
            .filter(|p| *p > 0.0)
            .map(|p| -(p as f64) * (p as f64).ln())
            .sum::<f64>()
    };
    samples.iter().map(|s| entropy(of(s))).sum::<f64>() / samples.len().max(1) as f64
}

/// The share of `samples` where the network's most likely legal move is the teacher's.
fn top_move_agreement(network: &Network, samples: &[Sample]) -> f64 {
    let Some(first) = samples.first() else { return f64::NAN };
    let (width, height) = (first.position.rules().width, first.position.rules().height);
    let policy_size = network.config.policy_planes() * width as usize * height as usize;
    let mut agreed = 0usize;
    for chunk in samples.chunks(256) {
        let positions: Vec<&Position> = chunk.iter().map(|s| &s.position).collect();
        let inputs = encode_batch(&positions, network.config.inputs());
        let (logits, _) = network.infer(&inputs, chunk.len(), width, height);
        for (i, sample) in chunk.iter().enumerate() {
            let logits = &logits[i * policy_size..(i + 1) * policy_size];
            let best = |key: &dyn Fn(&(u16, f32)) -> f32| {
                sample
                    .policy
                    .iter()
                    .max_by(|a, b| key(a).total_cmp(&key(b)))
                    .map(|(index, _)| *index)
            };
            agreed += (best(&|(index, _)| logits[*index as usize]) == best(&|(_, p)| *p)) as usize;
        }
    }
    agreed as f64 / samples.len() as f64
}

/// One game the teacher plays with itself, its positions labelled as it goes.
struct TeacherGame {
    position: Position,
    rng: StdRng,
    /// Positions with the teacher's priors (as policy indices) and chances, waiting for the
    /// game's result.
    labelled: Vec<(Position, SparsePolicy, Wdl)>,
}

impl TeacherGame {
    /// A new game past its random opening plies (at most as many as the game lasts).
    fn new(config: &DistillConfig, seed: u64) -> TeacherGame {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut position = Position::start(config.rules).expect("validated rules");
        for _ in 0..rng.random_range(0..=config.games.random_opening_plies) {
            let moves = position.legal_moves();
            let Some(mv) = moves.choose(&mut rng) else { break };
            let next = position.play_unchecked(*mv);
            if next.status() != Status::Ongoing {
                break;
            }
            position = next;
        }
        TeacherGame { position, rng, labelled: Vec::new() }
    }

    fn play(&mut self, mv: crate::game::Move) {
        self.position = self.position.play_unchecked(mv);
    }

    fn result(&self) -> Option<RecordResult> {
        match self.position.status() {
            Status::Ongoing => None,
            Status::Won { winner: Color::White, .. } => Some(RecordResult::WhiteWins),
            Status::Won { winner: Color::Black, .. } => Some(RecordResult::BlackWins),
            Status::Draw => Some(RecordResult::Draw),
        }
    }

    fn into_samples(self, result: RecordResult) -> Vec<Sample> {
        self.labelled
            .into_iter()
            .map(|(position, policy, searched)| Sample {
                outcome: outcome_for(result, position.side_to_move()),
                position,
                policy,
                searched: Some(searched),
            })
            .collect()
    }
}
