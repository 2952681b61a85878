//! How many threads generate: the physical cores (hyper-threads slow
//! llama.cpp down), leaving one free on machines with more than four so
//! the rest of the machine stays responsive.

/// The default thread count on this machine.
pub fn default_threads() -> u32 {
    let logical = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let physical = fs_err::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| physical_cores(&info))
        .unwrap_or(logical)
        .min(logical);
    choose(physical)
}

fn choose(physical: u32) -> u32 {
    if physical > 4 {
        physical - 1
    } else {
        physical.max(1)
    }
}

/// Distinct (package, core) pairs in `/proc/cpuinfo`; `None` when it does
/// not say (some virtual machines and architectures).
fn physical_cores(cpuinfo: &str) -> Option<u32> {
    let mut cores = std::collections::BTreeSet::new();
    let mut package = None;
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "physical id" => package = Some(value.trim().to_owned()),
            "core id" => {
                cores.insert((package.clone(), value.trim().to_owned()));
            }
            _ => {}
        }
    }
    (!cores.is_empty()).then_some(cores.len() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hyperthreads_count_once() {
        let info = "processor\t: 0\nphysical id\t: 0\ncore id\t: 0\n\nprocessor\t: 1\nphysical id\t: 0\ncore id\t: 0\n\nprocessor\t: 2\nphysical id\t: 0\ncore id\t: 1\n";
        assert_eq!(physical_cores(info), Some(2));
        assert_eq!(physical_cores("processor : 0\n"), None);
        assert_eq!(choose(2), 2);
        assert_eq!(choose(8), 7);
        assert!(default_threads() >= 1);
    }
}
