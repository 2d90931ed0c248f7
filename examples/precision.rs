//! How far bf16 search moves a trained network's outputs from f32's, and how much faster it
//! runs, in the usual layout and channels-last (as a network that searches on the CPU is laid
//! out): the check behind `Precision`'s doc and the README's numbers.
//! `cargo run --release --example precision -- AGENT.safetensors [THREADS]`
//! (pin it with `taskset -c 0` for the one-core figure a match player gets).

use epaminondas::bench::sample_positions;
use epaminondas::game::{Position, Rules};
use epaminondas::nn::{configure_threads, encode_batch, Network, Precision};
use std::time::Instant;
use tch::{Kind, Tensor};

/// Forward passes per second at `batch` over two seconds, the inputs in `kind`.
fn evals_per_second(network: &Network, kind: Kind, inputs: &Tensor, batch: i64) -> f64 {
    tch::no_grad(|| {
        let xs = inputs.narrow(0, 0, batch).to_kind(kind);
        let _ = network.model.forward_t(&xs, false);
        let started = Instant::now();
        let mut calls = 0;
        while started.elapsed().as_secs_f64() < 2.0 {
            let _ = network.model.forward_t(&xs, false);
            calls += 1;
        }
        calls as f64 * batch as f64 / started.elapsed().as_secs_f64()
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: precision AGENT.safetensors [THREADS]");
    configure_threads(args.get(2).and_then(|t| t.parse().ok()).unwrap_or(1));
    let (f32_net, _) = Network::load(std::path::Path::new(path), tch::Device::Cpu).unwrap();
    // The copies for search are channels-last; the usual layout is the loaded network's, so
    // the bf16 one in the usual layout is converted by hand.
    let (searching_f32, bf16_nhwc) = (f32_net.inference_copy(Precision::F32).unwrap(), f32_net.inference_copy(Precision::Bf16).unwrap());
    let mut bf16_net = f32_net.try_clone().unwrap();
    bf16_net.vs.bfloat16();
    let positions = sample_positions(Rules::default(), 256, 1);
    let refs: Vec<&Position> = positions.iter().collect();
    let planes = f32_net.config.input_planes() as i64;
    let inputs = Tensor::from_slice(&encode_batch(&refs, f32_net.config.inputs())).view([256, planes, 12, 14]);

    let outputs = |network: &Network| {
        let (policy, value) = tch::no_grad(|| network.model.forward_t(&inputs.to_kind(network.kind()), false));
        let wdl = value.softmax(-1, Kind::Float);
        (policy.softmax(-1, Kind::Float), wdl.select(1, 0) - wdl.select(1, 2))
    };
    let (f32_policy, f32_value) = outputs(&f32_net);
    let (bf16_policy, bf16_value) = outputs(&bf16_nhwc);
    let variation = (&f32_policy - &bf16_policy).abs().sum_dim_intlist(-1, false, Kind::Float) * 0.5;
    let value_gap = (&f32_value - &bf16_value).abs();
    let same_top = f32_policy.argmax(-1, false).eq_tensor(&bf16_policy.argmax(-1, false)).to_kind(Kind::Float).mean(Kind::Float);
    println!(
        "policy total variation mean {:.4} max {:.4}; value gap mean {:.4} max {:.4}; same top move {:.1}%",
        variation.mean(Kind::Float).double_value(&[]),
        variation.max().double_value(&[]),
        value_gap.mean(Kind::Float).double_value(&[]),
        value_gap.max().double_value(&[]),
        100.0 * same_top.double_value(&[])
    );
    for batch in [1, 8, 16, 64] {
        let rate = |network: &Network, kind: Kind| evals_per_second(network, kind, &inputs, batch);
        let (f32_rate, bf16_rate) = (rate(&f32_net, Kind::Float), rate(&bf16_net, Kind::BFloat16));
        let (f32_cl, bf16_cl) = (rate(&searching_f32, Kind::Float), rate(&bf16_nhwc, Kind::BFloat16));
        println!("batch {batch:>3}: f32 {f32_rate:>6.0} evals/s, bf16 {bf16_rate:>6.0} evals/s ({:.2}x); channels-last f32 {f32_cl:>6.0}, bf16 {bf16_cl:>6.0} ({:.2}x)", bf16_rate / f32_rate, bf16_cl / f32_cl);
    }
}
