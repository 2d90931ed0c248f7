//! `serve`: play against an agent in the browser. Builds the agent once and serves the page and
//! its JSON API (see `crate::serve`) until stopped.

use super::play::AgentArgs;
use crate::serve::{Api, Server};
use clap::Args;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
    /// The port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// The address to listen on; the default keeps the game to this machine.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Threads answering requests: enough that the page loads while the agent thinks.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: u16,
}

pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let (spec, rules) = args.agent.resolve()?;
    let agent = spec.build(args.agent.choice.device, std::process::id() as u64)?;
    let name = agent.name();
    // --sims/--time become the strength of games that ask for none; resolve() put them in the spec.
    let api = Arc::new(Api::new(agent, name.clone(), rules, spec.limit));
    let server = Server::start(api, &format!("{}:{}", args.host, args.port), args.workers.into())?;
    // The first line names the address, so scripts (and the tests) can find a port picked by 0.
    println!("serving {} on {rules} at {}", name, server.url());
    println!("open it in a browser; Ctrl-C stops the server");
    server.wait();
    Ok(())
}
