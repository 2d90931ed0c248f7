//! Whether the agent's value learns from its own matches against alphabeta what self-play did not
//! teach it: the network trained on every position of the match records in `--train`, value
//! target each game's result and policy target the starting network's own priors (so the policy
//! stays put and only the value moves), then scored on the positions of the matches in
//! `--held-out` (other openings) by value cross-entropy against their games' results, by stretch
//! of the game, before and after. With `--anchor`, games against its own kind are trained on
//! beside them (`--anchor-share` of the positions), value target their result blended with the
//! starting network's value by the config's `search_value_share`, and `--anchor-held-out` scores
//! the value on others of that kind.
//!
//! `cargo run --release --example match_values -- --init AGENT --config CONFIG
//!     --train RECORDS,... --held-out RECORDS,... [--anchor RECORDS,... --anchor-share S
//!     --anchor-held-out RECORDS,...] [--steps N] [--learning-rate R] [--out PATH]`
//!
//! Written because the default agent's won and lost games against alphabeta at 1 s a move are
//! alike in pieces up to ply 40 (both about three down), and its value tells them apart only
//! weakly there (mean +0.39 in the games it wins, +0.25 in those it loses): the games are
//! decided by whether its race for the far row lands, which is what its matches' results say
//! and its self-play, against itself and alphabeta at depth 4, could not. It made
//! `match-values-6x64-step1200` in session 48: 1,200 steps on the matches of two sets of
//! openings took the default agent from 61.7% to 81.5% against alphabeta at 1 s on two others,
//! and to 28% head to head against itself: the value learned the opponent (README, "Values
//! learned from the agent's own matches against alphabeta"). The anchor came in session 49: with
//! 660 games against its own kind beside the matches (400 of them that agent's against the one
//! it was trained from), it made `anchored-values-6x64-step1600`, 78.5% against alphabeta and
//! 55% head to head (README, "The same values anchored by games against its own kind").

use clap::Parser;
use epaminondas::config::Config;
use epaminondas::encode::move_index;
use epaminondas::evaluator::{EvalRequest, Evaluator, Wdl};
use epaminondas::nn::optim::Optimizer;
use epaminondas::nn::{configure_threads, Network, Precision};
use epaminondas::replay::{samples_from_records, ReplayBuffer, Sample};
use epaminondas::train::{self, held_out_losses, Round};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Parser)]
struct Args {
    /// The network trained on.
    #[arg(long)]
    init: PathBuf,
    /// The training settings (optimizer, batch size, loss weights) come from this config.
    #[arg(long)]
    config: PathBuf,
    /// Match records whose positions are trained on (comma-separated).
    #[arg(long, value_delimiter = ',')]
    train: Vec<PathBuf>,
    /// Match records whose positions score the value (comma-separated).
    #[arg(long, value_delimiter = ',')]
    held_out: Vec<PathBuf>,
    /// Records of the agent's games against its own kind, trained on beside `--train` so that
    /// the value keeps what it knew about them (comma-separated). Their value target is the
    /// game's result blended with the starting network's value by the config's
    /// `search_value_share` (half and half in configs/cpu-sparring-student.toml), as self-play's
    /// is blended with the search's.
    #[arg(long, value_delimiter = ',')]
    anchor: Vec<PathBuf>,
    /// The share of the positions trained on that come from `--anchor`: its positions are
    /// repeated (or left at their own number, if that is more) to make it.
    #[arg(long, default_value_t = 0.5)]
    anchor_share: f64,
    /// Records of games against its own kind that score the value (comma-separated).
    #[arg(long, value_delimiter = ',')]
    anchor_held_out: Vec<PathBuf>,
    #[arg(long, default_value_t = 1000)]
    steps: usize,
    #[arg(long, default_value_t = 0.0001)]
    learning_rate: f64,
    /// Where the trained network is written.
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long, default_value_t = 2)]
    threads: usize,
}

const STAGES: [(&str, u16, u16); 4] = [("plies 1-40", 0, 40), ("41-80", 41, 80), ("81-", 81, u16::MAX), ("all", 0, u16::MAX)];

/// Gives each sample the starting network's priors as its policy target (so the policy loss
/// holds the policy where it was and what changes is the value) and, with `keep_value`, its
/// value as the search's chances, which training blends into the value target.
fn teach(teacher: &mut dyn Evaluator, samples: &mut [Sample], keep_value: bool) {
    for chunk in samples.chunks_mut(256) {
        let requests: Vec<EvalRequest> = chunk.iter().map(|s| EvalRequest { position: s.position, moves: s.position.legal_moves() }).collect();
        for ((request, evaluation), sample) in requests.iter().zip(teacher.evaluate(&requests)).zip(chunk) {
            sample.policy = request.moves.iter().zip(&evaluation.priors).map(|(&mv, &p)| (move_index(&request.position, mv) as u16, p)).collect();
            if keep_value {
                sample.searched = Some(Wdl::from_value_and_draw(evaluation.value, evaluation.draw));
            }
        }
    }
}

/// The held-out value loss (win/draw/loss cross-entropy against the results) by stretch.
fn report(name: &str, network: &Network, held_out: &[Sample]) {
    if held_out.is_empty() {
        return;
    }
    let cells: Vec<String> = STAGES
        .iter()
        .map(|&(stage, from, to)| {
            let chosen: Vec<Sample> = held_out.iter().filter(|s| (from..=to).contains(&s.position.ply())).cloned().collect();
            let loss = held_out_losses(network, &chosen, 0.0).map_or(f64::NAN, |l| l.value);
            format!("{stage} {loss:.4}")
        })
        .collect();
    println!("{name}: held-out value cross-entropy {}", cells.join(", "));
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    configure_threads(args.threads);
    if !(0.0..1.0).contains(&args.anchor_share) {
        return Err(format!("--anchor-share must be in [0, 1), not {}", args.anchor_share).into());
    }
    let config = Config::load(&args.config)?;
    let (init, init_metadata) = Network::load(&args.init, tch::Device::Cpu)?;
    let mut training = samples_from_records(&args.train, &config.rules)?;
    let mut anchor = samples_from_records(&args.anchor, &config.rules)?;
    let held_out = samples_from_records(&args.held_out, &config.rules)?;
    let anchor_held_out = samples_from_records(&args.anchor_held_out, &config.rules)?;
    println!(
        "{} training positions and {} of the agent's own kind; {} and {} held out",
        training.len(),
        anchor.len(),
        held_out.len(),
        anchor_held_out.len()
    );

    let mut teacher = init.inference_copy(Precision::F32)?;
    teach(&mut teacher, &mut training, false);
    teach(&mut teacher, &mut anchor, true);
    let mut buffer = ReplayBuffer::default();
    buffer.push(1, training);
    if !anchor.is_empty() {
        let wanted = (buffer.len() as f64 * args.anchor_share / (1.0 - args.anchor_share)).round() as usize;
        let repeated: Vec<Sample> = anchor.iter().cycle().take(wanted.max(anchor.len())).cloned().collect();
        println!("own kind's positions repeated to {} ({:.0}% of those trained on)", repeated.len(), 100.0 * repeated.len() as f64 / (buffer.len() + repeated.len()) as f64);
        buffer.push(2, repeated);
    }

    let report_both = |name: &str, network: &Network| {
        report(name, network, &held_out);
        report(&format!("{name}, own kind"), network, &anchor_held_out);
    };
    report_both("start", &init);
    let mut network = Network::new(&init.config, tch::Device::Cpu, Some(1))?;
    network.init_from(&init)?;
    let mut optimizer = Optimizer::new(&network, config.training.optimizer_settings());
    let mut rng = StdRng::seed_from_u64(7);
    let mut trained = 0;
    // In rounds, to see where the held-out loss turns.
    for round in 1..=4 {
        let steps = args.steps / 4;
        let stats = train::train(&network, &mut optimizer, Round { buffer: &buffer, window: buffer.len(), steps, learning_rate: args.learning_rate }, &config.training, &mut rng, &|_| {});
        trained += stats.steps;
        println!("round {round}: {trained} steps, training policy {:.4}, value {:.4}, {:.0} s", stats.policy_loss, stats.value_loss, stats.seconds);
        report_both(&format!("after {trained} steps"), &network);
    }
    if let Some(out) = &args.out {
        // The rules the network plays carry over from the start (`export` and the default agent's
        // choice read them); the rest says what was done.
        let mut extra: BTreeMap<String, String> = init_metadata.into_iter().filter(|(key, _)| key == "rules").collect();
        extra.insert("init".into(), args.init.display().to_string());
        let names = |paths: &[PathBuf]| paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(",");
        extra.insert("trained_on".into(), names(&args.train));
        if !args.anchor.is_empty() {
            extra.insert("anchored_on".into(), names(&args.anchor));
        }
        extra.insert("match_value_steps".into(), trained.to_string());
        extra.insert("learning_rate".into(), args.learning_rate.to_string());
        network.save(out, &extra)?;
        println!("wrote {}", out.display());
    }
    Ok(())
}
