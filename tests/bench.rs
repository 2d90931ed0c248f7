//! The benchmark command runs end to end and writes its table (numbers are not judged here:
//! speed is recorded in docs/performance.md, not asserted in tests).

use std::process::Command;

#[test]
fn bench_writes_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bench.csv");
    let output = Command::new(env!("CARGO_BIN_EXE_epaminondas"))
        .args([
            "bench",
            "--config",
            concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml"),
            "--batches",
            "1,4",
            "--games",
            "2",
            "--seconds",
            "0.05",
            "--perft-depth",
            "2",
            "--csv",
        ])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let names: Vec<&str> = rows.iter().map(|r| r.get(0).unwrap()).collect();
    for expected in [
        "perft 2",
        "matrix product",
        "network forward",
        "network evaluate",
        "self-play search",
        "self-play games",
        "training steps",
    ] {
        assert!(names.iter().any(|n| n.starts_with(expected)), "no {expected:?} row in {names:?}");
    }
    assert_eq!(
        names.iter().filter(|n| n.starts_with("network forward")).count(),
        2,
        "one row per batch size"
    );
    for kind in ["float32", "bfloat16"] {
        assert!(
            names.iter().any(|n| n.starts_with("matrix product") && n.contains(kind)),
            "no {kind} limit in {names:?}"
        );
    }
    for row in &rows {
        let value: f64 = row.get(2).unwrap().parse().unwrap();
        assert!(value.is_finite() && value > 0.0, "{row:?}");
    }
    assert!(
        rows[0].get(0).unwrap().contains("1 thread")
            && rows[0].get(2).unwrap().parse::<f64>().unwrap() > 0.0
    );
}

/// `bench --contended` measures self-play quiet, beside one busy process, and quiet again, in
/// one run, each row against its reference.
#[test]
fn bench_measures_selfplay_beside_a_busy_process() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bench.csv");
    let output = Command::new(env!("CARGO_BIN_EXE_epaminondas"))
        .args(["bench", "--contended", "--games", "2", "--ply-cap", "12", "--config"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml"))
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let rows: Vec<csv::StringRecord> =
        csv::Reader::from_path(&csv).unwrap().records().map(|r| r.unwrap()).collect();
    let names: Vec<&str> = rows.iter().map(|r| r.get(0).unwrap()).collect();
    assert_eq!(
        names,
        [
            "self-play quiet (2 games, ply cap 12)",
            "self-play beside one busy process (2 games, ply cap 12)",
            "self-play quiet again (2 games, ply cap 12)"
        ]
    );
    for row in &rows {
        let value: f64 = row.get(2).unwrap().parse().unwrap();
        assert!(value.is_finite() && value > 0.0, "{row:?}");
    }
    let fraction = |row: &csv::StringRecord| row.get(4).unwrap().parse::<f64>().unwrap();
    let quiet = (rows[0][2].parse::<f64>().unwrap() + rows[2][2].parse::<f64>().unwrap()) / 2.0;
    assert!((fraction(&rows[1]) - rows[1][2].parse::<f64>().unwrap() / quiet).abs() < 1e-9);
    // No process is left spinning.
    let busy = Command::new("pgrep").args(["-f", "while :; do :; done"]).output().unwrap();
    assert!(busy.stdout.is_empty(), "{}", String::from_utf8_lossy(&busy.stdout));
}

/// Numbers that cannot be a duration are refused by name before anything runs: seconds per
/// measurement, and seconds a move in matches and play.
#[test]
fn durations_below_zero_or_not_finite_are_refused() {
    for (args, flag) in [
        (&["bench", "--seconds=-1"][..], "--seconds"),
        (&["bench", "--seconds", "inf"][..], "--seconds"),
        (&["match", "random", "random", "--time", "0"][..], "--time"),
        (&["play", "--time", "nan"][..], "--time"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_epaminondas")).args(args).output().unwrap();
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(
            error.contains(flag) && error.contains("is not a number above 0"),
            "{args:?}: {error}"
        );
    }
}

/// The limit's matrices keep their full side unless a product that large would be slow: a
/// 256-side product of 0.5 ms (float32 on two cores) keeps 2048 (0.26 s a product); one of
/// 67 ms (bfloat16 in libtorch's plain loops) measures at 256, where 2048 would take 34 s.
#[test]
fn the_limit_shrinks_its_matrices_only_where_a_product_would_be_slow() {
    use epaminondas::bench::product_side;
    assert_eq!(product_side(2048, 256, 0.0005), 2048);
    assert_eq!(product_side(2048, 256, 0.067), 256);
    assert_eq!(product_side(2048, 256, 0.005), 1024, "a 2048 product would take 2.6 s");
    assert_eq!(product_side(8192, 256, 0.00001), 8192);
    assert_eq!(product_side(128, 128, 10.0), 128, "never below the probe");
}

/// Sizes the commands would allocate for up front, or loop on, are refused by name.
#[test]
fn bench_and_perft_refuse_sizes_out_of_range() {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/smoke.toml");
    for (args, named) in [
        (vec!["bench", "--config", config, "--games", "0"], "--games"),
        (vec!["bench", "--config", config, "--perft-depth", "4000000000"], "--perft-depth"),
        (vec!["bench", "--config", config, "--batches", "1,100000000"], "--batches"),
        (vec!["perft", "--depth", "4000000000"], "--depth"),
    ] {
        refused(&args, named);
    }
}

/// A network of the other variant cannot play the config's games: refused before anything runs.
#[test]
fn bench_refuses_a_network_of_the_other_variant() {
    let stones = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/stones.toml");
    let standard = concat!(env!("CARGO_MANIFEST_DIR"), "/models/scratch-8h.safetensors");
    refused(&["bench", "--config", stones, "--network", standard], "stones variant");
}

/// Runs the program with `args` and checks that it fails with `named` in its error.
fn refused(args: &[&str], named: &str) {
    let output = Command::new(env!("CARGO_BIN_EXE_epaminondas")).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.code().is_some_and(|code| code != 0) && stderr.contains(named),
        "{args:?}: {:?} {stderr}",
        output.status
    );
}
