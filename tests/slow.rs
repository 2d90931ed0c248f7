//! The slow tier: real training, minutes not seconds, so left out of the default run. Run it with
//! `cargo test --release --test slow -- --ignored`.

use epaminondas::arena::{play_match, MatchSettings};
use epaminondas::coach::{checkpoint_path, Run, Silent};
use epaminondas::config::Config;
use epaminondas::nn::DeviceChoice;
use epaminondas::players::{Limit, PlayerKind, PlayerSpec};
use std::path::Path;

/// configs/8x8.toml from scratch: after a few generations its newest
/// checkpoint beats the random player clearly.
#[test]
#[ignore = "trains for several minutes: cargo test --release --test slow -- --ignored"]
fn crossings_board_learns_to_beat_random() {
    let mut config =
        Config::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/8x8.toml"))).unwrap();
    // Rating games are not needed here; the match below is the check.
    config.evaluation.every = 1_000;
    let dir = tempfile::tempdir().unwrap();
    let generations = 8;
    Run::open(dir.path(), Some(config.clone())).unwrap().train(Some(generations), &Silent).unwrap();

    let agent = PlayerSpec::new(
        PlayerKind::Net(checkpoint_path(dir.path(), generations)),
        Limit { nodes: Some(64), ..Limit::default() },
        "trained".into(),
    );
    let random: PlayerSpec = "random".parse().unwrap();
    let settings = MatchSettings {
        rules: config.rules,
        games: 40,
        opening_plies: 2,
        seed: 5,
        parallel: 2,
        limit: Limit::default(),
        sprt: None,
    };
    let result = play_match(&agent, &random, DeviceChoice::Cpu, &settings, &|_, _| {}).unwrap();
    assert!(result.tally.score() >= 0.8, "after {generations} generations: {:?}", result.tally);
}
