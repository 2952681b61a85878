//! Reading processes from `/proc`, for benchmarks that report memory.

/// A `kB` field of `/proc/PID/status` (`VmRSS:`, `VmHWM:` …), in KiB; 0
/// when it cannot be read.
pub fn status_kib(pid: u32, field: &str) -> u64 {
    fs_err::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Every process below `pid`.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        // Children belong to the thread that started them.
        let tasks = fs_err::read_dir(format!("/proc/{parent}/task"))
            .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
            .unwrap_or_default();
        for task in tasks {
            let children = fs_err::read_to_string(task.join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                found.push(child);
                queue.push(child);
            }
        }
    }
    found
}
