//! What machine the numbers come from.

use std::fmt;

/// The machine, as `/proc/cpuinfo` and the scheduler see it.
#[derive(Clone, Debug)]
pub struct Machine {
    /// CPU model (`model name` of `/proc/cpuinfo`), or `"unknown"`.
    pub model: String,
    /// CPUs this process may run on (`available_parallelism`).
    pub cpus: usize,
    /// `processor` entries in `/proc/cpuinfo` (0 if unreadable).
    pub cpuinfo_processors: usize,
    /// 1, 5 and 15 minute load averages from `/proc/loadavg` when detected: anything well above
    /// zero means other work competed for the CPUs.
    pub loadavg: Option<String>,
}

impl Machine {
    /// Reads the current machine.
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |line: &str, key: &str| -> Option<String> {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_owned())
        };
        let model = cpuinfo
            .lines()
            .find_map(|l| field(l, "model name"))
            .unwrap_or_else(|| "unknown".to_owned());
        let cpuinfo_processors = cpuinfo
            .lines()
            .filter(|l| field(l, "processor").is_some())
            .count();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let loadavg = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
        Machine {
            model,
            cpus,
            cpuinfo_processors,
            loadavg,
        }
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cpus available ({} in /proc/cpuinfo), {}",
            self.cpus, self.cpuinfo_processors, self.model
        )?;
        if let Some(load) = &self.loadavg {
            write!(f, "; load average {load}")?;
        }
        Ok(())
    }
}
