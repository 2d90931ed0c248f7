//! Whether a run's network learns its games or memorises them: the losses of networks on
//! replay chunks they have and have not trained on.
//! `cargo run --release --example fresh_loss -- RUN [GENERATIONS] [THREADS] [HELD_OUT.bin ...]`
//!
//! For each of the run's last GENERATIONS generations g (default 10), the chunk that
//! generation's self-play wrote, scored by three networks: checkpoint g-1, which played those
//! games and never trained on them (the fresh loss); checkpoint g, after one round of training
//! with them in the window; and the newest checkpoint, after every round since. The training
//! losses in `metrics.csv` are on the window, mostly on samples seen several times before, so
//! they cannot tell these apart (the trainer now records the fresh loss there too, as
//! fresh_policy_loss and fresh_value_loss, but not what later networks make of old games). A
//! newest network that fits old chunks much better than the fresh loss says is memorising the
//! window (too many passes over it); one that fits them about as well as fresh ones has room for
//! more training per game.
//!
//! With chunk files of games no checkpoint of RUN trained on (another run's `replay/` chunks,
//! say a copy of RUN trained on differently from an earlier generation), it instead scores
//! those samples with each of RUN's last GENERATIONS checkpoints: a loss that keeps falling
//! there is learning that carries over to games it has not seen, where one that stalls while
//! the window's losses fall is memorisation.
//!
//! Losses are in evaluation mode (batch-norm running statistics, as in play), unmirrored, with
//! the run's value target (its `search_value_share`).

use epaminondas::coach::checkpoint_path;
use epaminondas::config::Config;
use epaminondas::nn::{configure_threads, Network};
use epaminondas::replay::{read_chunk, read_samples, Sample};
use epaminondas::train::held_out_losses;
use std::path::Path;

/// Mean (policy loss, value loss) of `network` over `samples` (NaN for none, the mean of
/// nothing).
fn mean_losses(network: &Network, samples: &[Sample], search_value_share: f64) -> (f64, f64) {
    held_out_losses(network, samples, search_value_share).map_or((f64::NAN, f64::NAN), |l| (l.policy, l.value))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let run = Path::new(args.get(1).ok_or("usage: fresh_loss RUN [GENERATIONS] [THREADS]")?);
    let count: u32 = args.get(2).map(|n| n.parse()).transpose()?.unwrap_or(10);
    configure_threads(args.get(3).map(|n| n.parse()).transpose()?.unwrap_or(2));
    let config = Config::load(&run.join("config.toml"))?;
    let share = config.training.search_value_share;
    let newest = (1..).take_while(|&g| checkpoint_path(run, g).exists()).last().ok_or("the run has no checkpoints past generation 0")?;
    let load = |generation: u32| Network::load(&checkpoint_path(run, generation), tch::Device::Cpu).map(|(network, _)| network);
    let first = newest.saturating_sub(count.max(1) - 1).max(1);
    let held_out = args.get(4..).unwrap_or_default();
    if !held_out.is_empty() {
        let mut samples = Vec::new();
        for path in held_out {
            samples.extend(read_samples(Path::new(path), &config.rules)?);
        }
        println!("checkpoint,held_out_samples,policy,value");
        for generation in first - 1..=newest {
            let (policy, value) = mean_losses(&load(generation)?, &samples, share);
            println!("{generation},{},{policy:.4},{value:.4}", samples.len());
        }
        return Ok(());
    }
    let newest_network = load(newest)?;
    println!("generation,samples,fresh_policy,fresh_value,after_one_policy,after_one_value,newest_policy,newest_value");
    for generation in first..=newest {
        let samples = read_chunk(&run.join("replay"), generation, &config.rules)?;
        let fresh = mean_losses(&load(generation - 1)?, &samples, share);
        let after_one = mean_losses(&load(generation)?, &samples, share);
        let latest = mean_losses(&newest_network, &samples, share);
        println!(
            "{generation},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4}",
            samples.len(),
            fresh.0,
            fresh.1,
            after_one.0,
            after_one.1,
            latest.0,
            latest.1
        );
    }
    Ok(())
}
