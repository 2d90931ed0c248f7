//! `worker`: plays self-play games for a learner through a NATS server (docs/cluster.md), and
//! the connection settings `train --cluster` shares with it.

use crate::cluster::worker::{self, WorkerSettings};
use crate::cluster::ClusterOptions;
use crate::nn::{DeviceChoice, Precision};
use clap::Args;
use std::path::PathBuf;

/// The environment variable a password is read from (a command line is visible to every user
/// of the machine).
const PASSWORD_VARIABLE: &str = "EPAMINONDAS_NATS_PASSWORD";

/// Credentials and TLS settings for the NATS server.
#[derive(Args, Debug, Clone, Default)]
pub struct ClusterAuth {
    /// User name on the server; the password is read from the environment variable
    /// EPAMINONDAS_NATS_PASSWORD, or from --password-file.
    #[arg(long)]
    pub user: Option<String>,
    /// A file holding the user's password (its first line).
    #[arg(long, value_name = "FILE", requires = "user")]
    pub password_file: Option<PathBuf>,
    /// A NATS credentials file (JWT and nkey seed), for servers run with accounts.
    #[arg(long, value_name = "FILE")]
    pub creds: Option<PathBuf>,
    /// A file holding an nkey seed, for servers that list users by nkey.
    #[arg(long, value_name = "FILE")]
    pub nkey: Option<PathBuf>,
    /// The CA certificate (PEM) to check the server's certificate against; requires TLS.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// A client certificate (PEM), for servers that verify clients; needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl ClusterAuth {
    /// The options for reaching `url` as `name`.
    pub fn options(&self, url: &str, name: &str) -> anyhow::Result<ClusterOptions> {
        let password = match (&self.user, &self.password_file) {
            (None, _) => None,
            (Some(_), Some(file)) => {
                let text = std::fs::read_to_string(file).map_err(|e| {
                    anyhow::anyhow!("--password-file {}: {e}", file.display())
                })?;
                Some(text.lines().next().unwrap_or("").to_string())
            }
            (Some(user), None) => Some(std::env::var(PASSWORD_VARIABLE).map_err(|_| {
                anyhow::anyhow!(
                    "--user {user} needs a password: set {PASSWORD_VARIABLE} or give --password-file"
                )
            })?),
        };
        Ok(ClusterOptions {
            url: url.to_string(),
            user: self.user.clone(),
            password,
            credentials: self.creds.clone(),
            nkey: self.nkey.clone(),
            tls_ca: self.tls_ca.clone(),
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
            name: name.to_string(),
        })
    }
}

#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The NATS server the learner uses: nats://HOST:PORT (tls://HOST:PORT for TLS).
    #[arg(long, value_name = "URL")]
    pub cluster: String,
    #[command(flatten)]
    pub auth: ClusterAuth,
    /// The name this worker's games carry (default: the machine's host name).
    #[arg(long)]
    pub name: Option<String>,
    /// Overrides the run config's device.
    #[arg(long, value_enum)]
    pub device: Option<DeviceChoice>,
    /// Overrides the run config's precision for search.
    #[arg(long, value_enum)]
    pub precision: Option<Precision>,
    /// Threads for tree work and libtorch (default: every core this process may use).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Leave after publishing this many games (default: play until stopped), as a batch job
    /// of a fixed size does.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub games: Option<u64>,
}

pub fn worker(args: WorkerArgs) -> anyhow::Result<()> {
    let name = args.name.clone().unwrap_or_else(host_name);
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        anyhow::bail!("--name {name:?}: use letters, digits, '-', '_' and '.'");
    }
    let options = args.auth.options(&args.cluster, &format!("worker {name}"))?;
    let settings = WorkerSettings {
        name,
        device: args.device,
        precision: args.precision,
        threads: args.threads.map(usize::from),
        games: args.games,
    };
    worker::run(&options, &settings);
    Ok(())
}

/// The machine's host name, as a worker's default name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "-"))
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "worker".into())
}
