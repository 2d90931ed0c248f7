//! A weighted average of two networks' weights, batch-norm statistics included, tensor by
//! tensor: `(1 - w) * A + w * B`. Networks fine-tuned from the same start stay close enough in weight
//! space for the average to be a network between them rather than noise (Wortsman et al. 2022,
//! "Model soups"); of unrelated networks it is noise.
//!
//! `cargo run --release --example soup -- A B --weight W --out PATH`
//!
//! Written because the two agents session 48 and 49 fine-tuned from `distill-6x64-gpu-step26000`
//! on its lineage's matches against alphabeta sit at the two ends of one trade: without the
//! anchor (`match-values-6x64-step1200`) it scored more against alphabeta and 28% head to head
//! against the agent it came from; with it (`anchored-values-6x64-step1600`) less against
//! alphabeta and 55% head to head. Their average is the cheapest point between, with no
//! training at all.

use clap::Parser;
use epaminondas::nn::Network;
use std::collections::BTreeMap;
use std::path::PathBuf;
use tch::Device;

#[derive(Parser)]
struct Args {
    /// The first network (weight 1 - W).
    a: PathBuf,
    /// The second network (weight W); it must be of the first one's shape.
    b: PathBuf,
    /// The second network's weight, in [0, 1].
    #[arg(long, default_value_t = 0.5)]
    weight: f64,
    #[arg(long)]
    out: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    anyhow::ensure!((0.0..=1.0).contains(&args.weight), "--weight must be in [0, 1], not {}", args.weight);
    let (soup, a_meta) = Network::load(&args.a, Device::Cpu)?;
    let (b, _) = Network::load(&args.b, Device::Cpu)?;
    anyhow::ensure!(soup.config == b.config, "{} and {} are networks of different shapes", args.a.display(), args.b.display());
    let others = b.vs.variables();
    tch::no_grad(|| {
        for (name, mut variable) in soup.vs.variables() {
            let other = &others[&name];
            let mixed = &variable * (1.0 - args.weight) + other * args.weight;
            variable.copy_(&mixed);
        }
    });
    let mut meta = BTreeMap::new();
    meta.insert("soup".to_string(), format!("{} x {} + {} x {}", 1.0 - args.weight, args.a.display(), args.weight, args.b.display()));
    for key in ["rules", "init"] {
        if let Some(value) = a_meta.get(key) {
            meta.insert(key.to_string(), value.clone());
        }
    }
    soup.save(&args.out, &meta)?;
    println!("wrote {}: {}", args.out.display(), meta["soup"]);
    Ok(())
}
