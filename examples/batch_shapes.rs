//! Times `Network::evaluate` at batch sizes around the self-play batch, on positions from random
//! games, for a fresh network: the check behind the README's note on batch 64.
//! `cargo run --release --example batch_shapes -- [THREADS]`

use epaminondas::evaluator::{EvalRequest, Evaluator};
use epaminondas::game::{Position, Status};
use epaminondas::nn::{configure_threads, model::NetConfig, Network};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use std::time::Instant;

fn main() {
    let threads = std::env::args().nth(1).and_then(|t| t.parse().ok()).unwrap_or(2);
    configure_threads(threads);
    let mut rng = StdRng::seed_from_u64(1);
    let mut positions = Vec::new();
    while positions.len() < 256 {
        let mut p = Position::standard();
        while p.status() == Status::Ongoing && positions.len() < 256 {
            positions.push(p);
            p = p.play_unchecked(*p.legal_moves().choose(&mut rng).unwrap());
        }
    }
    let mut net = Network::new(&NetConfig::named("small").unwrap(), tch::Device::Cpu, Some(1)).unwrap();
    for batch in [32, 60, 62, 63, 64, 65, 66, 68, 96, 128] {
        let requests: Vec<EvalRequest> = positions[..batch].iter().map(|p| EvalRequest { position: *p, moves: p.legal_moves() }).collect();
        net.evaluate(&requests);
        let started = Instant::now();
        let calls = 20;
        for _ in 0..calls {
            net.evaluate(&requests);
        }
        let per_call = started.elapsed().as_secs_f64() / calls as f64;
        println!("batch {batch:4}: {:7.2} ms per call, {:7.0} evals/s", per_call * 1e3, batch as f64 / per_call);
    }
}
