//! The machine the figures come from: CPU model, cores, memory.

pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub mem_gib: f64,
}

impl Machine {
    pub fn detect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown CPU".into());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let mem_kib: f64 = meminfo
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        Machine {
            cpu,
            cores,
            mem_gib: mem_kib / 1048576.0,
        }
    }

    /// One line for the report header.
    pub fn long(&self) -> String {
        format!(
            "{}, {} cores (nproc), {:.1} GiB RAM",
            self.cpu, self.cores, self.mem_gib
        )
    }

    /// A table cell.
    pub fn short(&self) -> String {
        format!("{}c/{:.0}G", self.cores, self.mem_gib)
    }
}
