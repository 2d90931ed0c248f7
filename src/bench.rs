//! The benchmark: everything that decides training speed, measured the same way every time and
//! set against the machine's own limit (the FLOP/s libtorch reaches on a large matrix product).

use crate::config::Config;
use crate::evaluator::{EvalRequest, Evaluator};
use crate::game::{self, Position};
use crate::nn::optim::Optimizer;
use crate::nn::{encode_batch, NetError, Network};
use crate::replay::ReplayBuffer;
use crate::selfplay;
use crate::train::{self, Round};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::time::{Duration, Instant};
use tch::{Device, Kind, Tensor};

/// One line of the benchmark table.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    pub benchmark: String,
    /// Network batch, where one applies.
    pub batch: Option<usize>,
    pub value: f64,
    pub unit: String,
    /// The value against its reference (see `reference`), as a fraction.
    pub fraction: Option<f64>,
    pub reference: String,
}

impl BenchRow {
    fn new(benchmark: &str, batch: Option<usize>, value: f64, unit: &str) -> BenchRow {
        BenchRow {
            benchmark: benchmark.into(),
            batch,
            value,
            unit: unit.into(),
            fraction: None,
            reference: String::new(),
        }
    }

    fn against(mut self, fraction: f64, reference: &str) -> BenchRow {
        self.fraction = Some(fraction);
        self.reference = reference.into();
        self
    }
}

/// Runs `f` repeatedly for about `seconds` after one warm-up call; returns calls per second.
fn rate(seconds: f64, mut f: impl FnMut()) -> f64 {
    f();
    let started = Instant::now();
    let mut calls = 0u64;
    while started.elapsed() < Duration::from_secs_f64(seconds) || calls < 3 {
        f();
        calls += 1;
    }
    calls as f64 / started.elapsed().as_secs_f64()
}

/// Positions from random games: realistic piece counts for the network and search to chew on.
pub fn sample_positions(rules: game::Rules, count: usize, seed: u64) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut positions = Vec::with_capacity(count);
    while positions.len() < count {
        let mut position = Position::start(rules).expect("validated rules");
        for _ in 0..80 {
            if position.status() != game::Status::Ongoing {
                break;
            }
            positions.push(position);
            position =
                position.play_unchecked(*position.legal_moves().choose(&mut rng).expect("ongoing"));
        }
    }
    positions.truncate(count);
    positions
}

/// Single-threaded move generation: perft from the start position.
pub fn perft_row(rules: game::Rules, depth: u32) -> BenchRow {
    let start = Position::start(rules).expect("validated rules");
    let started = Instant::now();
    let nodes = game::perft(&start, depth);
    let seconds = started.elapsed().as_secs_f64();
    BenchRow::new(
        &format!("perft {depth} (start, 1 thread, {nodes} leaves, {seconds:.2} s)"),
        None,
        nodes as f64 / seconds,
        "leaves/s",
    )
}

/// The side of the square matrices whose product measures `device`'s limit: 2048 fills a CPU's
/// vector units, but on a GPU a product that small finishes in tens of microseconds and the
/// launch and the wait for it would be timed instead of the arithmetic.
pub fn matmul_side(device: Device) -> i64 {
    if device.is_cuda() {
        8192
    } else {
        2048
    }
}

/// The longest one product of the limit's matrices may take: at least 16 are timed.
const LONGEST_PRODUCT_SECONDS: f64 = 0.5;

/// The side at which to measure a limit, from the time one product of side `probe` took: the
/// full side, halved while a product of that side would take longer than half a second (a
/// product of twice the side costs eight times as much). Only bfloat16 on a CPU without bf16
/// instructions shrinks it: libtorch computes that in plain loops, hundreds of times slower,
/// where float32 at the full side takes a few tenths of a second even on two cores.
pub fn product_side(full: i64, probe: i64, probe_seconds: f64) -> i64 {
    let mut side = full;
    while side > probe && probe_seconds * ((side / probe) as f64).powi(3) > LONGEST_PRODUCT_SECONDS
    {
        side /= 2;
    }
    side
}

/// The machine's limit in `kind` (float32, or bfloat16 as half-precision search computes):
/// products of square matrices on `device`, four at a time between waits for the device, so
/// that on a GPU the next product is queued while one computes. Their side is
/// [`matmul_side`]'s, or on a CPU smaller where a product that large would be slow (see
/// [`product_side`]). Returns the side and the FLOP/s.
pub fn matmul_limit(device: Device, kind: Kind, seconds: f64) -> (i64, f64) {
    const PRODUCTS_PER_WAIT: i64 = 4;
    const PROBE: i64 = 256;
    let matrices =
        |n: i64| (0..2).map(move |_| Tensor::randn([n, n], (Kind::Float, device)).to_kind(kind));
    let full = matmul_side(device);
    // A GPU computes every kind fast, and a small product there times the launch, not the
    // arithmetic: only a CPU probes.
    let n = if device.is_cuda() {
        full
    } else {
        let probe: Vec<Tensor> = matrices(PROBE).collect();
        let product = || {
            let _ = probe[0].matmul(&probe[1]).double_value(&[0, 0]);
        };
        product(); // warm-up
        let started = Instant::now();
        product();
        product_side(full, PROBE, started.elapsed().as_secs_f64())
    };
    let [a, b]: [Tensor; 2] = matrices(n).collect::<Vec<_>>().try_into().expect("two matrices");
    let per_second = rate(seconds, || {
        let mut c = a.matmul(&b);
        for _ in 1..PRODUCTS_PER_WAIT {
            c = a.matmul(&b);
        }
        let _ = c.double_value(&[0, 0]); // waits for the work on asynchronous devices
    });
    (n, per_second * (PRODUCTS_PER_WAIT * 2 * n * n * n) as f64)
}

/// Network throughput at each batch: forward passes alone (the FLOP/s figure) and through the
/// `Evaluator` search uses (encoding and legal-move softmax included).
pub fn network_rows(
    network: &mut Network,
    rules: game::Rules,
    batches: &[usize],
    seconds: f64,
    machine_flops: f64,
) -> Vec<BenchRow> {
    let mut rows = Vec::new();
    let largest = batches.iter().copied().max().unwrap_or(1);
    let positions = sample_positions(rules, largest, 1);
    let flops_per_eval = 2.0
        * network.config.macs_per_square() as f64
        * (rules.width as usize * rules.height as usize) as f64;
    for &batch in batches {
        let refs: Vec<&Position> = positions[..batch].iter().collect();
        let inputs = encode_batch(&refs, network.config.inputs());
        let xs = network.upload(&inputs, batch, rules.width, rules.height);
        let forward = batch as f64 * rate(seconds, || network.forward_and_wait(&xs));
        let flops = forward * flops_per_eval;
        rows.push(BenchRow::new("network forward", Some(batch), forward, "evals/s").against(
            flops / machine_flops,
            &format!("{:.1} GFLOP/s of the matrix-product limit", flops / 1e9),
        ));
        let requests: Vec<EvalRequest> = positions[..batch]
            .iter()
            .map(|p| EvalRequest { position: *p, moves: p.legal_moves() })
            .collect();
        let evaluate = batch as f64
            * rate(seconds, || {
                let _ = network.evaluate(&requests);
            });
        rows.push(
            BenchRow::new(
                "network evaluate (encode + forward + priors)",
                Some(batch),
                evaluate,
                "evals/s",
            )
            .against(evaluate / forward, "of forward"),
        );
    }
    rows
}

/// One generation's self-play of `games` games under `config`, from seed 1, on the config's
/// lanes; with the share of network evaluations its caches answered.
fn play_selfplay(
    network: &Network,
    config: &Config,
    games: usize,
) -> Result<(selfplay::SelfPlayOutput, f64), NetError> {
    let selfplay_config =
        crate::config::SelfPlayConfig { games_per_generation: games, ..config.selfplay.clone() };
    let lanes = selfplay_config.lanes(config.run.threads());
    let mut evaluators = network.lane_copies(config.run.precision, lanes, 200_000)?;
    let Ok(output) = selfplay::play_games(
        &mut evaluators,
        config.rules,
        &config.search,
        &selfplay_config,
        1,
        "bench",
        Vec::new(),
        &mut |_, _| Ok::<(), std::convert::Infallible>(()),
        &mut |_| {},
    );
    let (hits, misses) = evaluators.iter().fold((0, 0), |(h, m), e| (h + e.hits, m + e.misses));
    Ok((output, hits as f64 / (hits + misses).max(1) as f64))
}

/// Self-play's speed beside another busy program, measured in one run: quiet, then with one
/// busy process (a shell loop) on the machine, then quiet again. The busy row's fraction is of
/// the mean of the two quiet ones; the two quiet rows show how steady the machine was.
pub fn contended_rows(
    network: &Network,
    config: &Config,
    games: usize,
) -> std::io::Result<Vec<BenchRow>> {
    let rate = || -> std::io::Result<f64> {
        let (output, _) = play_selfplay(network, config, games).map_err(std::io::Error::other)?;
        Ok(output.stats.simulations as f64 / output.stats.seconds.max(1e-9))
    };
    let before = rate()?;
    let mut busy = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn()?;
    let beside = rate();
    let _ = busy.kill();
    let _ = busy.wait();
    let beside = beside?;
    let after = rate()?;
    let quiet = (before + after) / 2.0;
    let label = |what: &str| {
        format!("self-play {what} ({games} games, ply cap {})", config.rules.ply_cap.unwrap_or(0))
    };
    Ok(vec![
        BenchRow::new(&label("quiet"), None, before, "sims/s"),
        BenchRow::new(&label("beside one busy process"), None, beside, "sims/s")
            .against(beside / quiet, "of quiet"),
        BenchRow::new(&label("quiet again"), None, after, "sims/s")
            .against(after / before, "of the first"),
    ])
}

/// Self-play with the config's settings: simulations per second (against the network's own
/// evaluations per second at the self-play batch), games and positions per hour; then training
/// steps on the samples it produced.
pub fn selfplay_and_training_rows(
    network: Network,
    config: &Config,
    games: usize,
    seconds: f64,
) -> Result<Vec<BenchRow>, NetError> {
    let mut rows = Vec::new();
    // The network is compared at the batch a lane's games send it: fewer games than
    // `parallel_games` play in a smaller lockstep (4 games of 2 leaves: 8, not 64), and the
    // lanes share the games.
    let lanes = config.selfplay.lanes(config.run.threads());
    let batch = config.selfplay.parallel_games.min(games).max(1).div_ceil(lanes)
        * config.selfplay.leaves_per_game;
    // Against the network's forward passes at that batch: how near self-play comes to keeping
    // the network busy.
    let inference = network.inference_copy(config.run.precision)?;
    let positions = sample_positions(config.rules, batch, 2);
    let refs: Vec<&Position> = positions.iter().collect();
    let inputs = encode_batch(&refs, inference.config.inputs());
    let xs = inference.upload(&inputs, batch, config.rules.width, config.rules.height);
    let network_rate = batch as f64 * rate(seconds, || inference.forward_and_wait(&xs));
    drop(inference);
    let (output, hits) = play_selfplay(&network, config, games)?;
    let stats = output.stats;
    let sims = stats.simulations as f64 / stats.seconds;
    let label = format!("self-play search ({lanes} lane{})", if lanes == 1 { "" } else { "s" });
    rows.push(BenchRow::new(&label, Some(batch), sims, "sims/s").against(
        sims / network_rate,
        &format!("of network forward at batch {batch} ({network_rate:.0}/s)"),
    ));
    rows.push(BenchRow::new(
        &format!(
            "self-play games ({} games, {:.0} plies/game, {:.0}% cache hits)",
            stats.games,
            stats.plies as f64 / stats.games.max(1) as f64,
            100.0 * hits
        ),
        None,
        stats.games as f64 / stats.seconds * 3600.0,
        "games/hour",
    ));
    rows.push(BenchRow::new(
        "self-play positions",
        None,
        stats.plies as f64 / stats.seconds * 3600.0,
        "positions/hour",
    ));
    rows.push(BenchRow::new(
        "self-play training samples",
        None,
        output.samples.len() as f64 / stats.seconds * 3600.0,
        "samples/hour",
    ));

    let network = &network;
    let mut buffer = ReplayBuffer::default();
    let window = output.samples.len();
    buffer.push(1, output.samples);
    let mut optimizer = Optimizer::new(network, config.training.optimizer_settings());
    let mut rng = StdRng::seed_from_u64(3);
    let lr = config.training.learning_rate_at(1);
    let _ = train::train(
        network,
        &mut optimizer,
        Round { buffer: &buffer, window, steps: 2, learning_rate: lr },
        &config.training,
        &mut rng,
        &|_| {},
    );
    let started = Instant::now();
    let mut samples = 0;
    while started.elapsed().as_secs_f64() < seconds || samples == 0 {
        samples += train::train(
            network,
            &mut optimizer,
            Round { buffer: &buffer, window, steps: 5, learning_rate: lr },
            &config.training,
            &mut rng,
            &|_| {},
        )
        .samples;
    }
    let batch_size = config.training.batch_size;
    rows.push(BenchRow::new(
        "training steps (mirror augmentation, forward + backward + AdamW)",
        Some(batch_size),
        samples as f64 / started.elapsed().as_secs_f64(),
        "samples/s",
    ));
    Ok(rows)
}
