//! How much faster a network evaluates positions once its convolution weights are laid out
//! channels-last, as `Network::into_inference` does for f32 on a CPU, and whether training
//! would gain from it too: the check behind that method's doc.
//! `cargo run --release --example layout -- AGENT.safetensors [THREADS]`

use epaminondas::bench::sample_positions;
use epaminondas::game::{Position, Rules};
use epaminondas::nn::{configure_threads, encode_batch, Network, Precision};
use std::time::Instant;
use tch::{Kind, Tensor};

/// Calls per second of `pass` over half a second, after one call to warm up.
fn calls_per_second(pass: &mut dyn FnMut()) -> f64 {
    pass();
    let started = Instant::now();
    let mut calls = 0;
    while started.elapsed().as_secs_f64() < 0.5 {
        pass();
        calls += 1;
    }
    calls as f64 / started.elapsed().as_secs_f64()
}

/// The median rates of `a` and `b` over `ROUNDS` interleaved measurements: a shared machine's
/// speed drifts by tens of percent from one second to the next, so the two are taken in turns.
fn interleaved(a: &mut dyn FnMut(), b: &mut dyn FnMut()) -> (f64, f64) {
    const ROUNDS: usize = 9;
    let (mut rates_a, mut rates_b): (Vec<f64>, Vec<f64>) = (0..ROUNDS).map(|_| (calls_per_second(a), calls_per_second(b))).unzip();
    let median = |rates: &mut Vec<f64>| {
        rates.sort_by(f64::total_cmp);
        rates[ROUNDS / 2]
    };
    (median(&mut rates_a), median(&mut rates_b))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = std::path::Path::new(args.get(1).expect("usage: layout AGENT.safetensors [THREADS]"));
    configure_threads(args.get(2).and_then(|t| t.parse().ok()).unwrap_or(1));
    let (usual, _) = Network::load(path, tch::Device::Cpu).unwrap();
    let searching = Network::load(path, tch::Device::Cpu).unwrap().0.into_inference(Precision::F32);
    let positions = sample_positions(Rules::default(), 256, 1);
    let refs: Vec<&Position> = positions.iter().collect();
    let planes = usual.config.input_planes() as i64;
    let inputs = Tensor::from_slice(&encode_batch(&refs, usual.config.inputs())).view([256, planes, 12, 14]);

    let (policy, value) = tch::no_grad(|| usual.model.forward_t(&inputs, false));
    let (policy_nhwc, value_nhwc) = tch::no_grad(|| searching.model.forward_t(&inputs, false));
    let gap = |a: &Tensor, b: &Tensor| (a - b).abs().max().double_value(&[]);
    println!("largest output gap: policy logits {:.1e}, value logits {:.1e}", gap(&policy, &policy_nhwc), gap(&value, &value_nhwc));

    for batch in [1, 8, 16, 64] {
        let xs = inputs.narrow(0, 0, batch);
        let (before, after) = tch::no_grad(|| {
            interleaved(&mut || drop(usual.model.forward_t(&xs, false)), &mut || drop(searching.model.forward_t(&xs, false)))
        });
        let (before, after) = (before * batch as f64, after * batch as f64);
        println!("batch {batch:>3}: {before:>6.0} evals/s, channels-last {after:>6.0} ({:.2}x)", after / before);
    }

    // Training: forward and backward at batch 256, the default configs' batch.
    let mut trained = Network::load(path, tch::Device::Cpu).unwrap().0;
    let step = |network: &Network, xs: &Tensor| {
        let (policy, value) = network.model.forward_t(xs, true);
        (policy.square().mean(Kind::Float) + value.square().mean(Kind::Float)).backward();
    };
    trained.lay_out_channels_last();
    let (before, after) = interleaved(&mut || step(&usual, &inputs), &mut || step(&trained, &inputs));
    let (before, after) = (before * 256.0, after * 256.0);
    println!("training at batch 256: {before:.0} samples/s, channels-last {after:.0} ({:.2}x)", after / before);
}
