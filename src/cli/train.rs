//! `train`: creates or resumes a run directory and trains, with progress bars on a terminal
//! (plain lines elsewhere) and one summary line per generation.

use super::LoggedBar;
use crate::arena::elo::format_elo;
use crate::coach::matches::MatchRow;
use crate::coach::{MetricsRow, Observer, OpponentRow, Pretraining, Run, Until};
use crate::config::Config;
use crate::nn::{DeviceChoice, Precision};
use crate::selfplay::SelfPlayProgress;
use clap::Args;
use std::cell::RefCell;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Training config (TOML). Needed to start a run; a resumed run uses its stored config.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Run directory: created if new, resumed if it holds a run.
    #[arg(long)]
    pub run: PathBuf,
    /// Total generations the run should have when this invocation stops.
    #[arg(long)]
    pub generations: Option<u32>,
    /// Stops at the end of the first generation after which the run has trained this many hours
    /// in all (its wall time over every invocation, as the metrics' wall_seconds count it).
    #[arg(long, value_parser = super::positive_number)]
    pub hours: Option<f64>,
    /// Overrides the config's device.
    #[arg(long, value_enum)]
    pub device: Option<DeviceChoice>,
    /// Overrides the config's precision for self-play (training is always f32).
    #[arg(long, value_enum)]
    pub precision: Option<Precision>,
    /// Overrides the config's threads for this invocation (a learner sharing its machine with
    /// workers trains best on one).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Starts a new run from this checkpoint's weights instead of random ones; the config's
    /// network may be larger in any dimension and add the threat planes, and starts computing
    /// what the checkpoint did. With --pretrain-on,
    /// the pretraining starts from these weights.
    #[arg(long, value_name = "CHECKPOINT")]
    pub init_from: Option<PathBuf>,
    /// Starts a new run whose first network is trained on this run's replay buffer (its newest
    /// samples, up to the config's max_window) before self-play begins; the network may be of
    /// another size than the source's.
    #[arg(long, value_name = "RUN", requires = "pretrain_steps")]
    pub pretrain_on: Option<PathBuf>,
    /// Optimiser steps of that pretraining (batches of the config's batch_size). 0 only keeps
    /// the samples in the new run's buffer: with --init-from, a trained network goes on with a
    /// window as broad as the source's from its first generation.
    #[arg(long, value_name = "STEPS", requires = "pretrain_on")]
    pub pretrain_steps: Option<u32>,
    /// Takes the games from workers (`epaminondas worker`) through this NATS server with
    /// JetStream, nats://HOST:PORT (tls://HOST:PORT for TLS), instead of playing them here.
    #[arg(long, value_name = "URL")]
    pub cluster: Option<String>,
    #[command(flatten)]
    pub auth: super::worker::ClusterAuth,
    /// With --cluster: workers to run in this process beside the learner.
    #[arg(long, default_value_t = 0, requires = "cluster", value_parser = clap::value_parser!(u16).range(0..=256))]
    pub local_workers: u16,
}

impl TrainArgs {
    /// When this invocation stops.
    fn until(&self) -> Until {
        Until { generations: self.generations, hours: self.hours }
    }
}

/// Progress bars (hidden when stderr is not a terminal) and summary lines.
struct Progress {
    bar: RefCell<Option<LoggedBar>>,
    /// What the bar is counting ("gen 3 self-play"), before any detail the stage adds.
    label: RefCell<String>,
    /// The run, whose picture is redrawn whenever a new rating or match arrives.
    run: PathBuf,
}

impl Progress {
    fn start(&self, length: usize, label: String) {
        let bar = LoggedBar::new(length, "{msg} [{bar:30}] {pos}/{len} {elapsed_precise}");
        bar.set_message(label.clone());
        self.label.replace(label);
        if let Some(old) = self.bar.replace(Some(bar)) {
            old.finish_and_clear();
        }
    }

    fn set(&self, position: usize) {
        if let Some(bar) = self.bar.borrow().as_ref() {
            bar.set_position(position);
        }
    }
}

impl Observer for Progress {
    fn message(&self, text: &str) {
        eprintln!("{text}");
    }
    fn selfplay_started(&self, generation: u32, games: usize) {
        self.start(games, format!("gen {generation} self-play"));
    }
    fn game_finished(&self, done: usize) {
        self.set(done);
    }
    fn selfplay_progress(&self, p: &SelfPlayProgress) {
        if let Some(bar) = self.bar.borrow().as_ref() {
            bar.set_message(format!(
                "{}: {} plies, {:.0} sims/s{}",
                self.label.borrow(),
                p.plies,
                p.simulations_per_second(),
                p.time_left().map_or(String::new(), |left| format!(
                    ", about {} left",
                    indicatif::HumanDuration(left)
                ))
            ));
        }
    }
    fn training_started(&self, generation: u32, steps: usize) {
        self.start(steps, format!("gen {generation} training"));
    }
    fn training_step(&self, step: usize) {
        self.set(step);
    }
    fn rating_started(&self, generation: u32, games: usize) {
        self.start(games, format!("gen {generation} rating"));
    }
    fn rating_game_finished(&self) {
        if let Some(bar) = self.bar.borrow().as_ref() {
            bar.inc(1);
        }
    }
    fn match_started(&self, generation: u32, games: usize) {
        self.start(games, format!("gen {generation} match"));
    }
    fn match_game_finished(&self, done: usize) {
        self.set(done);
    }
    fn match_finished(&self, m: &MatchRow) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        println!(
            "gen {:>4}: match {} against {}: +{} ={} -{} ({:.1}%), Elo {} [{}, {}]; {:.0} s",
            m.generation,
            m.agent,
            m.opponent,
            m.wins,
            m.draws,
            m.losses,
            100.0 * m.score,
            format_elo(m.elo),
            format_elo(m.elo_low),
            format_elo(m.elo_high),
            m.seconds
        );
    }
    fn generation_finished(&self, r: &MetricsRow, opponents: &[OpponentRow]) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        let fresh = match (r.fresh_policy_loss, r.fresh_value_loss) {
            (Some(policy), Some(value)) => {
                format!(" (on the new games before training {policy:.3} / {value:.3})")
            }
            _ => String::new(),
        };
        let selfplay = r
            .selfplay_sims_per_second
            .map_or_else(|| "self-play resumed".to_string(), |rate| format!("{rate:.0} sims/s"));
        println!(
            "gen {:>4}: {} games (W {} / B {} / D {}), {:.1} plies/game, {} samples; policy loss {:.3}, value loss {:.3}{fresh}, value acc {:.2}; {selfplay}, {:.0} train samples/s; {:.0} s total",
            r.generation, r.games, r.white_wins, r.black_wins, r.draws, r.mean_game_length, r.samples, r.policy_loss, r.value_loss, r.value_accuracy, r.train_samples_per_second, r.wall_seconds
        );
        for o in opponents {
            let score = o
                .score
                .map_or_else(|| "no games".to_string(), |score| format!("{:.1}%", 100.0 * score));
            println!(
                "gen {:>4}: {} games against {}, scoring {score}",
                r.generation, o.games, o.opponent
            );
        }
        if let (Some(elo), Some(error)) = (r.elo, r.elo_error) {
            println!("gen {:>4}: Elo {elo:+.0} +/- {error:.0} (random = 0)", r.generation);
        }
        // Redrawn when there is something new to draw on its Elo or its scores.
        if r.elo.is_some() || self.run.join("matches.csv").exists() {
            if let Err(error) = crate::plot::plot_run(&self.run, None) {
                eprintln!("warning: could not draw the progress picture: {error}");
            }
        }
    }
}

pub fn train(args: TrainArgs) -> anyhow::Result<()> {
    let mut config = args.config.as_deref().map(Config::load).transpose()?;
    if let Some(config) = config.as_mut() {
        config.run.override_device(args.device, args.precision);
    }
    let progress = Progress {
        bar: RefCell::new(None),
        label: RefCell::new(String::new()),
        run: args.run.clone(),
    };
    let mut run = match (&args.init_from, &args.pretrain_on, config) {
        (Some(init), None, Some(config)) => Run::start_from(&args.run, config, init)?,
        (init, Some(source_run), Some(config)) => {
            let pretraining = Pretraining {
                source_run,
                steps: args.pretrain_steps.unwrap_or(0) as usize,
                init: init.as_deref(),
            };
            Run::start_pretrained(&args.run, config, pretraining, &progress)?
        }
        (Some(_), _, None) => anyhow::bail!("--init-from starts a new run, which needs --config"),
        (None, Some(_), None) => {
            anyhow::bail!("--pretrain-on starts a new run, which needs --config")
        }
        (None, None, config) => Run::open(&args.run, config)?,
    };
    run.config.run.override_device(args.device, args.precision);
    run.config.run.threads = args.threads.map(usize::from).or(run.config.run.threads);
    // Said up front because auto's choice decides how fast self-play is (docs/performance.md).
    let device = run.config.run.device.resolve()?;
    let number_format = match run.config.run.precision.resolve(device) {
        tch::Kind::BFloat16 => "bf16",
        _ => "f32",
    };
    let threads = run.config.run.threads();
    eprintln!(
        "run {} at generation {} ({} games so far); self-play searches in {number_format} on {device:?} in {} lanes; threads: {threads}; idle libtorch threads: {}",
        args.run.display(),
        run.state.generation,
        run.state.total_games,
        run.config.selfplay.lanes(threads),
        crate::nn::wait_policy()
    );
    match &args.cluster {
        None => run.train(args.until(), &progress)?,
        Some(url) => {
            let host = super::worker::host_name();
            let options = args.auth.options(url, &format!("learner {host}"))?;
            let cluster = crate::cluster::Cluster::connect(&options)?;
            for i in 0..args.local_workers {
                let options = options.clone();
                let settings = crate::cluster::worker::WorkerSettings {
                    name: format!("{host}-local{i}"),
                    ..Default::default()
                };
                std::thread::Builder::new()
                    .name(format!("worker-{i}"))
                    .spawn(move || crate::cluster::worker::run(&options, &settings))?;
            }
            let mut games = crate::cluster::learner::ClusterGames::new(cluster);
            run.train_with(args.until(), &mut games, &progress)?;
        }
    }
    Ok(())
}
