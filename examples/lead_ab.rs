//! Whether the lead head teaches the trunk something the value head can use: one network trained
//! on the same batches with and without the head, then scored on games it never saw.
//! `cargo run --release --example lead_ab -- --init AGENT --runs RUN,RUN --held-out RUN:GEN
//!     --matches RECORDS,RECORDS [--steps N] [--weight W] [--learning-rate R]`
//!
//! The runs' replay chunks are the training samples. Chunks written before the piece leads were
//! kept get them here from the runs' own game records (a sample's position found in its
//! generation's games; a position found in two games with different leads is left without).
//! One chunk is held out. Both arms start from AGENT (the lead arm with a fresh head), use the
//! runs' training settings, and draw the same batches. Reported for each: the policy and value
//! losses on the held-out chunk, and on every position of the match records (games against
//! other players, the positions where the agents go wrong), the value's cross-entropy and Brier
//! score against each game's result, by stage of the game.

use clap::Parser;
use epaminondas::config::Config;
use epaminondas::game::{GameRecord, Position};
use epaminondas::nn::optim::Optimizer;
use epaminondas::nn::{configure_threads, encode_batch, Network};
use epaminondas::replay::{chunk_path, outcome_for, read_chunk, PieceLeads, ReplayBuffer, Sample};
use epaminondas::train::{self, held_out_losses, Round};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Parser)]
struct Args {
    /// The network both arms start from.
    #[arg(long)]
    init: PathBuf,
    /// Runs whose replay chunks are the training samples (comma-separated).
    #[arg(long, value_delimiter = ',')]
    runs: Vec<PathBuf>,
    /// RUN:GENERATION, the chunk held out of training.
    #[arg(long)]
    held_out: String,
    /// Match records (comma-separated) whose positions score the value.
    #[arg(long, value_delimiter = ',')]
    matches: Vec<PathBuf>,
    #[arg(long, default_value_t = 400)]
    steps: usize,
    /// The lead arm's `lead_loss_weight`.
    #[arg(long, default_value_t = 0.25)]
    weight: f64,
    /// Overrides the first run's learning rate (its last).
    #[arg(long)]
    learning_rate: Option<f64>,
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Train only the lead arm (the control's numbers known from an earlier call with the same
    /// arguments: its batches do not depend on the weight).
    #[arg(long)]
    lead_only: bool,
}

/// The samples of `generation` of `run`, with their piece leads taken from the generation's
/// records where the chunk lacks them.
fn samples_with_leads(run: &Path, generation: u32, config: &Config) -> Result<(Vec<Sample>, usize), Box<dyn std::error::Error>> {
    let mut samples = read_chunk(&run.join("replay"), generation, &config.rules)?;
    if samples.iter().all(|s| s.leads.is_some()) {
        return Ok((samples, 0));
    }
    let records = GameRecord::parse_all(&std::fs::read_to_string(run.join("games").join(format!("gen-{generation:06}.txt")))?)?;
    // By Zobrist hash and ply (a position's identity for this purpose).
    let key = |p: &Position| (p.hash(), p.ply());
    let mut leads: HashMap<(u64, u16), Option<PieceLeads>> = HashMap::new();
    for record in &records {
        let positions = record.positions();
        for (index, position) in positions.iter().enumerate() {
            let found = PieceLeads::at(&positions, index);
            leads.entry(key(position)).and_modify(|known| *known = known.filter(|k| *k == found)).or_insert(Some(found));
        }
    }
    let mut missing = 0;
    for sample in &mut samples {
        sample.leads = sample.leads.or_else(|| leads.get(&key(&sample.position)).copied().flatten());
        missing += sample.leads.is_none() as usize;
    }
    Ok((samples, missing))
}

/// Value scores over the positions of match games, by stage.
struct ValueScores {
    /// Per stage: (positions, summed cross-entropy, summed Brier).
    stages: [(usize, f64, f64); 3],
}

const STAGES: [&str; 3] = ["plies 1-40", "plies 41-80", "plies 81-"];

fn score_matches(network: &Network, positions: &[(Position, f32)]) -> ValueScores {
    let mut stages = [(0, 0.0, 0.0); 3];
    for chunk in positions.chunks(256) {
        let refs: Vec<&Position> = chunk.iter().map(|(p, _)| p).collect();
        let first = refs[0].rules();
        let inputs = encode_batch(&refs, network.config.inputs());
        let (_, wdl) = network.infer(&inputs, refs.len(), first.width, first.height);
        for (i, (position, score)) in chunk.iter().enumerate() {
            let (win, draw, loss) = (wdl[3 * i] as f64, wdl[3 * i + 1] as f64, wdl[3 * i + 2] as f64);
            let chance = match *score {
                s if s > 0.75 => win,
                s if s < 0.25 => loss,
                _ => draw,
            };
            let expected = win + draw / 2.0;
            let stage = match position.ply() {
                0..=40 => 0,
                41..=80 => 1,
                _ => 2,
            };
            stages[stage].0 += 1;
            stages[stage].1 -= chance.max(1e-7).ln();
            stages[stage].2 += (expected - *score as f64).powi(2);
        }
    }
    ValueScores { stages }
}

fn report(name: &str, network: &Network, held_out: &[Sample], share: f64, positions: &[(Position, f32)]) {
    let losses = held_out_losses(network, held_out, share).expect("a held-out chunk with samples");
    let lead = losses.lead.map_or(String::new(), |l| format!(", lead {l:.4}"));
    println!("{name}: held-out chunk policy {:.4}, value {:.4}{lead}", losses.policy, losses.value);
    let scores = score_matches(network, positions);
    for (stage, (n, entropy, brier)) in STAGES.iter().zip(scores.stages) {
        println!("  match positions, {stage}: {n} positions, value cross-entropy {:.4}, Brier {:.4}", entropy / n as f64, brier / n as f64);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    configure_threads(args.threads);
    let (held_run, held_generation) = args.held_out.rsplit_once(':').ok_or("--held-out is RUN:GENERATION")?;
    let (held_run, held_generation) = (Path::new(held_run), held_generation.parse::<u32>()?);
    let first = args.runs.first().ok_or("--runs names no run")?;
    let mut config = Config::load(&first.join("config.toml"))?;
    let (held_out, _) = samples_with_leads(held_run, held_generation, &Config::load(&held_run.join("config.toml"))?)?;
    let mut buffer = ReplayBuffer::default();
    let mut missing = 0;
    let held_run_path = held_run.canonicalize()?;
    for run in &args.runs {
        let run_config = Config::load(&run.join("config.toml"))?;
        let is_held_run = run.canonicalize()? == held_run_path;
        for generation in (1..).take_while(|&g| chunk_path(&run.join("replay"), g).exists()) {
            if is_held_run && generation == held_generation {
                continue;
            }
            let (samples, lacking) = samples_with_leads(run, generation, &run_config)?;
            missing += lacking;
            buffer.push(generation, samples);
        }
    }
    let mut positions = Vec::new();
    for path in &args.matches {
        for record in GameRecord::parse_all(&std::fs::read_to_string(path)?)? {
            for position in record.positions().into_iter().skip(1) {
                // The result for the side to move: 1, 1/2 or 0.
                positions.push((position, (outcome_for(record.result, position.side_to_move()) as f32 + 1.0) / 2.0));
            }
        }
    }
    println!("{} training samples ({missing} without leads), {} held out, {} match positions", buffer.len(), held_out.len(), positions.len());
    // What the lead loss is worth: the loss of predicting that nothing changes (a zero output,
    // where the head starts) on the held-out chunk.
    let unchanged: Vec<f64> = held_out.iter().filter_map(train::lead_target).map(|[later, end]| (later.powi(2) + end.powi(2)) as f64 / 2.0).collect();
    println!("held-out lead loss of predicting no change: {:.4}", unchanged.iter().sum::<f64>() / unchanged.len().max(1) as f64);
    let share = config.training.search_value_share;
    let learning_rate = args.learning_rate.unwrap_or_else(|| config.training.learning_rate.last().expect("a rate").1);
    let (init, _) = Network::load(&args.init, tch::Device::Cpu)?;
    report("start", &init, &held_out, share, &positions);
    let arms = if args.lead_only { vec![args.weight] } else { vec![0.0, args.weight] };
    for weight in arms {
        let mut net_config = init.config.clone();
        net_config.leads = weight > 0.0;
        let mut network = Network::new(&net_config, tch::Device::Cpu, Some(1))?;
        network.init_from(&init)?;
        config.training.lead_loss_weight = weight;
        let mut optimizer = Optimizer::new(&network, config.training.optimizer_settings());
        let mut rng = StdRng::seed_from_u64(7);
        let window = buffer.len();
        let stats = train::train(&network, &mut optimizer, Round { buffer: &buffer, window, steps: args.steps, learning_rate }, &config.training, &mut rng, &|_| {});
        let lead = stats.lead_loss.map_or(String::new(), |l| format!(", lead {l:.4}"));
        println!("trained with lead weight {weight}: {} steps, window policy {:.4}, value {:.4}{lead}, {:.0} s", stats.steps, stats.policy_loss, stats.value_loss, stats.seconds);
        report(&format!("lead weight {weight}"), &network, &held_out, share, &positions);
    }
    Ok(())
}
