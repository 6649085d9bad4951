//! How much memory the process holds, and the bound a long read stops at
//! (`check-log --memory-max`).
//!
//! What is counted is the process's resident memory (`/proc/self/statm`), read between
//! two entries: a reader stops cleanly, naming the bound, before the operating system
//! would refuse an allocation (an abort, exit 134, under `ulimit -v` or a container's
//! limit). It is read from the system rather than counted by a wrapped allocator, which
//! would put an atomic add on every allocation of every command (the checker's above
//! all); a read every few hundred entries costs nothing measurable. Where the system
//! does not tell (not Linux), nothing is counted and the bound never stops a read.

/// Bytes of memory the process holds now (resident), or 0 where the system does not tell.
pub fn in_use() -> u64 {
    resident().unwrap_or(0)
}

/// The resident pages of `/proc/self/statm`, in bytes.
#[cfg(unix)]
fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf reads a constant of the system and touches no memory of ours.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|p| *p > 0)?)
}

#[cfg(not(unix))]
fn resident() -> Option<u64> {
    None
}

/// The default bound of a long read's resident memory: three quarters of the least of the
/// process's address-space limit (`ulimit -v`, `prlimit --as`), its control group's
/// memory limit (`memory.max`: a container's) and the machine's memory, less 64 MiB
/// ([`RESERVE`]), and at least 16 MiB; 4 GiB where none is known. Less, because an
/// address-space limit counts what is reserved and never touched (thread stacks, the
/// allocator's arenas) beside what is resident.
pub fn default_max() -> u64 {
    let limits = [address_space_limit(), cgroup_limit(), machine_memory()];
    limits.into_iter().flatten().min().map_or(4 << 30, |least| {
        (least / 4 * 3).saturating_sub(RESERVE).max(16 << 20)
    })
}

/// What the default bound leaves for what is reserved beside what is resident.
pub const RESERVE: u64 = 64 << 20;

#[cfg(unix)]
fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes the struct it is given and nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

#[cfg(not(unix))]
fn address_space_limit() -> Option<u64> {
    None
}

/// `memory.max` of this process's control group (version 2), if it sets one.
fn cgroup_limit() -> Option<u64> {
    let group = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = group.lines().find_map(|l| l.strip_prefix("0::"))?;
    let max = std::fs::read_to_string(format!("/sys/fs/cgroup{}/memory.max", path.trim())).ok()?;
    max.trim().parse().ok()
}

/// `MemTotal` of `/proc/meminfo`.
fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A size as given on the command line: bytes, or with `K`, `M`, `G` (powers of 1024;
/// `KiB`, `MB`… read the same), fractions allowed (`1.5G`).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    if number.is_empty() {
        return Err(format!("'{s}' is not a size (512M, 1.5G, 1073741824)"));
    }
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        other => return Err(format!("'{other}' is not a unit of size (K, M, G, T)")),
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("'{s}' is not a size (512M, 1.5G, 1073741824)"))?;
    let bytes = n * (1u64 << shift) as f64;
    if !(1.0..=u64::MAX as f64).contains(&bytes) {
        return Err(format!("'{s}': a size of at least one byte"));
    }
    Ok(bytes as u64)
}

/// `1.5 GiB`, `320.0 MiB`, `12.3 KiB`.
pub fn show(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KiB", b / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.1} MiB", b / 1_048_576.0),
        _ => format!("{:.2} GiB", b / 1_073_741_824.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_and_without_units() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("64 kb"), Ok(64 << 10));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5X").is_err());
        assert!(parse_size("0").is_err());
        assert_eq!(show(3 << 29), "1.50 GiB");
        assert_eq!(show(1536), "1.5 KiB");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_count_follows_what_is_held() {
        // Other tests allocate beside this one: the margin is wide. A large block is
        // its own mapping, given back to the system when freed.
        let before = in_use();
        // Kept from the optimiser, which would never allocate a block nothing reads.
        let held = std::hint::black_box(vec![1u8; 256 << 20]);
        assert!(
            in_use() >= before + (192 << 20),
            "{} then {}",
            before,
            in_use()
        );
        drop(held);
        assert!(in_use() < before + (64 << 20));
    }

    #[test]
    fn a_default_bound_is_always_given() {
        assert!(default_max() >= 1 << 20);
    }
}
