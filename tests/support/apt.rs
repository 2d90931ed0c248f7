//! Programs a test needs from Debian's packages: found on PATH (or in /usr/sbin, where daemons
//! go), else installed with apt-get (as root, or through passwordless sudo) within a time limit.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn find_program(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> =
        std::env::split_paths(&path).chain([PathBuf::from("/usr/sbin")]).collect();
    names.iter().find_map(|name| dirs.iter().map(|dir| dir.join(name)).find(|p| p.is_file()))
}

/// Runs a command to completion or kills it at the deadline; the error says which and why.
pub fn run_until(command: &mut Command, deadline: Instant) -> Result<(), String> {
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            if status.success() {
                return Ok(());
            }
            let mut stderr = String::new();
            let _ = std::io::Read::read_to_string(
                &mut child.stderr.take().expect("piped"),
                &mut stderr,
            );
            let tail: String = stderr.lines().rev().take(3).collect::<Vec<_>>().join(" / ");
            return Err(format!("{shown} failed ({status}): {tail}"));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{shown} took longer than the test allows"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Installs `packages` with apt-get within `budget`, unless `found` already finds what they
/// provide; returns what `found` finds, or why it cannot be had.
pub fn ensure<T>(
    packages: &[&str],
    budget: Duration,
    found: impl Fn() -> Option<T>,
) -> Result<T, String> {
    if let Some(found) = found() {
        return Ok(found);
    }
    let wanted = packages.join(" ");
    if find_program(&["apt-get"]).is_none() {
        return Err(format!("{wanted}: not installed, and there is no apt-get to install them"));
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
    let sudo = !root
        && Command::new("sudo")
            .args(["-n", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !root && !sudo {
        return Err(format!(
            "{wanted}: not installed, and installing needs root or passwordless sudo"
        ));
    }
    let apt = |args: &[&str]| {
        let mut command = if sudo { Command::new("sudo") } else { Command::new("apt-get") };
        if sudo {
            command.args(["-n", "apt-get"]);
        }
        command.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        command
    };
    eprintln!("installing {wanted} with apt-get (once) ...");
    let deadline = Instant::now() + budget;
    run_until(&mut apt(&["update", "-qq"]), deadline)?;
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend_from_slice(packages);
    run_until(&mut apt(&install), deadline)?;
    found()
        .ok_or_else(|| format!("apt-get installed {wanted}, but its programs are not to be found"))
}
