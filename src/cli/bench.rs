//! `bench`: the benchmark table, printed and written as CSV.

use crate::bench::{self, BenchRow};
use crate::config::Config;
use crate::nn::{configure_threads, DeviceChoice, Network, Precision};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The training config whose network, search and self-play settings are measured.
    #[arg(long, default_value = "configs/default.toml")]
    pub config: PathBuf,
    /// A checkpoint to measure instead of a freshly initialised network (its games are more
    /// like a trained agent's).
    #[arg(long)]
    pub network: Option<PathBuf>,
    /// Network batch sizes to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32,128,256")]
    pub batches: Vec<usize>,
    /// Self-play games to time (default: the config's games per generation).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub games: Option<u32>,
    /// Seconds per throughput measurement.
    #[arg(long, default_value_t = 3.0, value_parser = super::positive_number)]
    pub seconds: f64,
    /// Depth of the move-generation count (perft) from the start position.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(0..=super::MAX_PERFT_DEPTH))]
    pub perft_depth: u32,
    /// Where the table goes as CSV.
    #[arg(long, default_value = "bench.csv")]
    pub csv: PathBuf,
    /// Overrides the config's device.
    #[arg(long, value_enum)]
    pub device: Option<DeviceChoice>,
    /// Overrides the config's precision for the network's forward passes and self-play
    /// (training steps are always f32).
    #[arg(long, value_enum)]
    pub precision: Option<Precision>,
    /// Overrides the config's ply cap (shorter games make shorter self-play measurements).
    #[arg(long)]
    pub ply_cap: Option<u16>,
    /// Only self-play's speed quiet, beside one busy process, and quiet again (see
    /// `bench::contended_rows`).
    #[arg(long)]
    pub contended: bool,
}

fn print_row(row: &BenchRow) {
    let batch = row.batch.map(|b| b.to_string()).unwrap_or_default();
    let fraction =
        row.fraction.map(|f| format!("{:>6.1}% {}", 100.0 * f, row.reference)).unwrap_or_default();
    println!(
        "{:<72} {:>5} {:>14.0} {:<14} {}",
        row.benchmark, batch, row.value, row.unit, fraction
    );
}

pub fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let mut config = Config::load(&args.config)?;
    config.run.override_device(args.device, args.precision);
    if let Some(cap) = args.ply_cap {
        anyhow::ensure!(cap > 0, "--ply-cap must be at least 1: self-play games must end");
        config.rules.ply_cap = Some(cap);
    }
    let most = crate::config::MAX_BATCH_SIZE;
    if let Some(batch) = args.batches.iter().find(|&&batch| batch == 0 || batch > most) {
        anyhow::bail!("--batches must each be 1..={most}, not {batch}");
    }
    let device = config.run.device.resolve()?;
    configure_threads(config.run.threads());
    let _ = rayon::ThreadPoolBuilder::new().num_threads(config.run.threads()).build_global();
    let network = match &args.network {
        Some(path) => {
            // Self-play and training rows need the network built for the config's game.
            crate::players::check_net_rules(path, &config.rules)?;
            Network::load(path, device)?.0
        }
        None => Network::new(&config.net_config()?, device, Some(config.run.seed))?,
    };
    let cores = crate::config::available_cores();
    let mut inference = network.inference_copy(config.run.precision)?;
    println!(
        "{} threads ({} cores, idle libtorch threads: {}), device {device:?}, search in {:?}, network {:?}{}",
        config.run.threads(),
        cores,
        crate::nn::wait_policy(),
        inference.kind(),
        network.config,
        args.network.as_ref().map(|p| format!(" from {}", p.display())).unwrap_or_default()
    );
    let mut rows = Vec::new();
    let mut emit = |row: BenchRow| {
        print_row(&row);
        rows.push(row);
    };
    let games = args.games.map_or(config.selfplay.games_per_generation, |games| games as usize);
    if args.contended {
        for row in bench::contended_rows(&network, &config, games)? {
            emit(row);
        }
        return write_table(&args.csv, &rows);
    }
    emit(bench::perft_row(config.rules, args.perft_depth));
    // The limits in float32 and in bfloat16 (half precision, as search may compute); the
    // network's rows are set against the limit of the kind it computes in.
    let mut flops = 0.0;
    for (kind, name) in [(tch::Kind::Float, "float32"), (tch::Kind::BFloat16, "bfloat16")] {
        let (side, limit) = bench::matmul_limit(device, kind, args.seconds);
        if kind == inference.kind() {
            flops = limit;
        }
        emit(BenchRow {
            benchmark: format!("matrix product {side}x{side} {name} (the machine's limit)"),
            batch: None,
            value: limit / 1e9,
            unit: "GFLOP/s".into(),
            fraction: None,
            reference: String::new(),
        });
    }
    for row in bench::network_rows(&mut inference, config.rules, &args.batches, args.seconds, flops)
    {
        emit(row);
    }
    for row in bench::selfplay_and_training_rows(network, &config, games, args.seconds)? {
        emit(row);
    }
    write_table(&args.csv, &rows)
}

/// The table as CSV, one row a measurement.
fn write_table(path: &std::path::Path, rows: &[BenchRow]) -> anyhow::Result<()> {
    let mut table = csv::Writer::from_writer(Vec::new());
    for row in rows {
        table.serialize(row)?;
    }
    super::save_csv(path, table)?;
    println!("written to {}", path.display());
    Ok(())
}
