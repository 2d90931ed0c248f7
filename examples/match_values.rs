//! Whether the agent's value learns from its own matches against alphabeta what self-play did not
//! teach it: the network trained on every position of the match records in `--train`, value
//! target each game's result and policy target the starting network's own priors (so the policy
//! stays put and only the value moves), then scored on the positions of the matches in
//! `--held-out` (other openings) by value cross-entropy against their games' results, by stretch
//! of the game, before and after.
//!
//! `cargo run --release --example match_values -- --init AGENT --config CONFIG
//!     --train RECORDS,... --held-out RECORDS,... [--steps N] [--learning-rate R] [--out PATH]`
//!
//! Written because the default agent's won and lost games against alphabeta at 1 s a move are
//! alike in pieces up to ply 40 (both about three down), and its value tells them apart only
//! weakly there (mean +0.39 in the games it wins, +0.25 in those it loses): the games are
//! decided by whether its race for the far row lands, which is what its matches' results say
//! and its self-play, against itself and alphabeta at depth 4, could not. It made
//! `match-values-6x64-step1200` in session 48: 1,200 steps on the matches of two sets of
//! openings took the default agent from 61.7% to 81.5% against alphabeta at 1 s on two others,
//! and to 28% head to head against itself: the value learned the opponent (README, "Values
//! learned from the agent's own matches against alphabeta").

use clap::Parser;
use epaminondas::config::Config;
use epaminondas::encode::move_index;
use epaminondas::evaluator::{EvalRequest, Evaluator};
use epaminondas::game::{GameRecord, Position, RecordResult};
use epaminondas::nn::optim::Optimizer;
use epaminondas::nn::{configure_threads, encode_batch, Network, Precision};
use epaminondas::replay::{outcome_for, PieceLeads, ReplayBuffer, Sample};
use epaminondas::train::{self, Round};
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

/// A position of a match game and what its game says about it.
struct MatchPosition {
    position: Position,
    /// The game's result for the side to move: +1, 0, -1.
    outcome: i8,
    leads: PieceLeads,
}

/// Every position of the finished games in `paths` at which the side to move has a move.
fn match_positions(paths: &[PathBuf]) -> Result<Vec<MatchPosition>, Box<dyn std::error::Error>> {
    let mut found = Vec::new();
    for path in paths {
        for record in GameRecord::parse_all(&std::fs::read_to_string(path)?)? {
            if record.result == RecordResult::Unfinished {
                continue;
            }
            let positions = record.positions();
            for (index, position) in positions.iter().enumerate() {
                if !position.side_to_move_has_won() && position.has_legal_move() {
                    found.push(MatchPosition { position: *position, outcome: outcome_for(record.result, position.side_to_move()), leads: PieceLeads::at(&positions, index) });
                }
            }
        }
    }
    Ok(found)
}

const STAGES: [(&str, u16, u16); 4] = [("plies 1-40", 0, 40), ("41-80", 41, 80), ("81-", 81, u16::MAX), ("all", 0, u16::MAX)];

/// Value cross-entropy (nats) of `network`'s win/draw/loss against the results, by stretch.
fn value_losses(network: &Network, positions: &[MatchPosition]) -> [f64; 4] {
    let mut sums = [(0.0, 0usize); 4];
    for chunk in positions.chunks(256) {
        let refs: Vec<&Position> = chunk.iter().map(|m| &m.position).collect();
        let rules = refs[0].rules();
        let (_, wdl) = network.infer(&encode_batch(&refs, network.config.inputs()), refs.len(), rules.width, rules.height);
        for (i, MatchPosition { position, outcome, .. }) in chunk.iter().enumerate() {
            let chance = wdl[3 * i + (1 - *outcome as i64) as usize] as f64;
            for (sum, &(_, from, to)) in sums.iter_mut().zip(&STAGES) {
                if (from..=to).contains(&position.ply()) {
                    sum.0 -= chance.max(1e-7).ln();
                    sum.1 += 1;
                }
            }
        }
    }
    sums.map(|(sum, n)| sum / n.max(1) as f64)
}

fn report(name: &str, network: &Network, positions: &[MatchPosition]) {
    let cells: Vec<String> = STAGES.iter().zip(value_losses(network, positions)).map(|((stage, _, _), loss)| format!("{stage} {loss:.4}")).collect();
    println!("{name}: held-out value cross-entropy {}", cells.join(", "));
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    configure_threads(args.threads);
    let config = Config::load(&args.config)?;
    let (init, init_metadata) = Network::load(&args.init, tch::Device::Cpu)?;
    let training = match_positions(&args.train)?;
    let held_out = match_positions(&args.held_out)?;
    println!("{} training positions, {} held out", training.len(), held_out.len());

    // Policy targets: the starting network's priors, so the policy loss holds the policy where
    // it was and what changes is the value.
    let mut teacher = init.inference_copy(Precision::F32)?;
    let mut samples = Vec::with_capacity(training.len());
    for chunk in training.chunks(256) {
        let requests: Vec<EvalRequest> = chunk.iter().map(|m| EvalRequest { position: m.position, moves: m.position.legal_moves() }).collect();
        for ((request, evaluation), known) in requests.iter().zip(teacher.evaluate(&requests)).zip(chunk) {
            let policy = request.moves.iter().zip(evaluation.priors).map(|(&mv, p)| (move_index(&request.position, mv) as u16, p)).collect();
            samples.push(Sample { position: request.position, policy, outcome: known.outcome, searched: None, leads: Some(known.leads) });
        }
    }
    let mut buffer = ReplayBuffer::default();
    buffer.push(1, samples);

    report("start", &init, &held_out);
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
        report(&format!("after {trained} steps"), &network, &held_out);
    }
    if let Some(out) = &args.out {
        // The rules the network plays carry over from the start (`export` and the default agent's
        // choice read them); the rest says what was done.
        let mut extra: BTreeMap<String, String> = init_metadata.into_iter().filter(|(key, _)| key == "rules").collect();
        extra.insert("init".into(), args.init.display().to_string());
        extra.insert("trained_on".into(), args.train.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(","));
        extra.insert("match_value_steps".into(), trained.to_string());
        extra.insert("learning_rate".into(), args.learning_rate.to_string());
        network.save(out, &extra)?;
        println!("wrote {}", out.display());
    }
    Ok(())
}
