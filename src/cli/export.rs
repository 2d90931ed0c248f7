//! `export`: a checkpoint becomes a self-contained playing agent (weights, network config, the
//! rules it was trained for and what is known of its training and strength), plus a TorchScript
//! module and a draft card.

use crate::coach::rating::read_ratings;
use crate::coach::read_metrics;
use crate::config::Config;
use crate::nn::export::export_torchscript;
use crate::nn::Network;
use crate::util::generation_name;
use anyhow::Context;
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// A checkpoint (RUN/checkpoints/gen-N.safetensors) or another network file.
    pub checkpoint: PathBuf,
    /// The agent file to write, e.g. models/NAME.safetensors. The TorchScript module goes beside
    /// it as NAME.pt and a draft card as NAME.md (an existing card is left alone).
    #[arg(long)]
    pub out: PathBuf,
    /// Skip the TorchScript module.
    #[arg(long)]
    pub no_torchscript: bool,
    /// Replace an agent (or TorchScript module) already at --out; without it one is refused.
    #[arg(long)]
    pub force: bool,
}

/// What the run directory knows about a checkpoint in its `checkpoints/` folder.
fn training_facts(checkpoint: &Path, generation: Option<u32>) -> BTreeMap<String, String> {
    let mut facts = BTreeMap::new();
    let Some(run) =
        checkpoint.parent().filter(|p| p.ends_with("checkpoints")).and_then(Path::parent)
    else {
        return facts;
    };
    let Some(generation) = generation else { return facts };
    if let Ok(metrics) = read_metrics(&run.join("metrics.csv"), generation) {
        if let Some(row) = metrics.iter().rfind(|r| r.generation == generation) {
            facts.insert("training_games".into(), row.total_games.to_string());
            facts.insert("training_positions".into(), row.total_positions.to_string());
            facts.insert("training_hours".into(), format!("{:.2}", row.wall_seconds / 3600.0));
        }
    }
    if let Ok(ratings) = read_ratings(&run.join("ratings").join("ratings.csv")) {
        if let Some(row) = ratings.iter().find(|r| r.player == generation_name(generation)) {
            facts.insert("elo".into(), format!("{:.0}", row.elo));
            facts.insert("elo_error".into(), format!("{:.0}", row.error));
            facts.insert("elo_reference".into(), "training rating games: random = 0, checkpoints at the run's evaluation simulations".into());
        }
    }
    if let Ok(config) = std::fs::read_to_string(run.join("config.toml")) {
        // Written again by this version, so that a run saved by an older one shows its f32
        // options as written (0.2, not 0.20000000298023224); kept as it is if it does not parse.
        let config =
            Config::parse_stored(&config, "config.toml").map(|c| c.to_toml()).unwrap_or(config);
        facts.insert("training_config".into(), config);
    }
    facts
}

/// Where an agent came from, as its metadata and card say it: a run's checkpoint by its run's
/// folder name (`default/checkpoints/gen-000134.safetensors`), any other file by its name. Not
/// the whole path, which is of the exporting machine only and goes with the agent wherever it
/// is shared.
fn source_name(checkpoint: &Path) -> String {
    let names: Vec<Option<String>> = checkpoint
        .components()
        .map(|c| match c {
            std::path::Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    match names.as_slice() {
        [.., Some(run), Some(folder), Some(file)] if folder == "checkpoints" => {
            format!("{run}/{folder}/{file}")
        }
        [.., Some(file)] => file.clone(),
        _ => checkpoint.display().to_string(),
    }
}

pub fn export(args: ExportArgs) -> anyhow::Result<()> {
    let (mut network, metadata) = Network::load(&args.checkpoint, tch::Device::Cpu)?;
    // The board the TorchScript module is traced on; checked before anything is written.
    let rules: crate::game::Rules = match metadata.get("rules") {
        None => crate::game::Rules::default(),
        Some(text) => serde_json::from_str::<crate::game::Rules>(text)
            .map_err(|e| e.to_string())
            .and_then(|rules| rules.validate().map(|()| rules).map_err(|e| e.to_string()))
            .map_err(|problem| {
                anyhow::anyhow!("{}: its rules metadata: {problem}", args.checkpoint.display())
            })?,
    };
    let module = (!args.no_torchscript).then(|| args.out.with_extension("pt"));
    if !args.force {
        if let Some(existing) = std::iter::once(&args.out).chain(&module).find(|p| p.exists()) {
            anyhow::bail!(
                "{} exists: export under another name, or pass --force to replace it",
                existing.display()
            );
        }
    }
    let generation: Option<u32> = metadata.get("generation").and_then(|g| g.parse().ok());
    let mut agent = metadata.clone();
    agent.remove("format");
    agent.remove("net_config");
    agent.extend(training_facts(&args.checkpoint, generation));
    agent.insert("source".into(), source_name(&args.checkpoint));
    agent.insert("exported_by".into(), format!("epaminondas {}", env!("CARGO_PKG_VERSION")));
    if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    network.save(&args.out, &agent)?;
    println!("agent: {}", args.out.display());

    if let Some(module) = module {
        export_torchscript(&mut network, &module, rules.width, rules.height)?;
        println!("TorchScript: {}", module.display());
    }
    let card = args.out.with_extension("md");
    if !card.exists() {
        let name =
            args.out.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut text = format!(
            "# {name}\n\nExported from `{}` by epaminondas {}.\n\n",
            source_name(&args.checkpoint),
            env!("CARGO_PKG_VERSION")
        );
        text += &format!("- Network: {:?}\n- Rules: {rules}\n", network.config);
        for key in [
            "generation",
            "training_games",
            "training_positions",
            "training_hours",
            "elo",
            "elo_error",
        ] {
            if let Some(value) = agent.get(key) {
                text += &format!("- {}: {value}\n", key.replace('_', " "));
            }
        }
        text += "\n## Strength\n\nTo be measured with `epaminondas match` (at least 100 games per opponent) and recorded here.\n";
        if let Some(config) = agent.get("training_config") {
            text += &format!("\n## Training configuration\n\n```toml\n{config}```\n");
        }
        crate::util::write_atomically(&card, text.as_bytes())
            .with_context(|| format!("cannot write {}", card.display()))?;
        println!("card: {}", card.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::source_name;
    use std::path::Path;

    #[test]
    fn a_source_is_named_by_its_run_folder_or_its_file_never_the_whole_path() {
        let cases = [
            (
                "/home/someone/runs/default/checkpoints/gen-000134.safetensors",
                "default/checkpoints/gen-000134.safetensors",
            ),
            (
                "runs/8x8/checkpoints/gen-000070.safetensors",
                "8x8/checkpoints/gen-000070.safetensors",
            ),
            ("./checkpoints/gen-000001.safetensors", "gen-000001.safetensors"),
            ("/tmp/agents/best.safetensors", "best.safetensors"),
        ];
        for (path, name) in cases {
            assert_eq!(source_name(Path::new(path)), name, "{path}");
        }
    }
}
