//! How much memory the process holds, counted as it is allocated, and the bound a long
//! read stops at (`check-log --memory-max`).
//!
//! The process's allocator is the system's, wrapped to keep one running count of the
//! bytes held ([`in_use`]): a reader asks it between two entries and stops cleanly, naming
//! the bound, before the operating system would refuse an allocation (an abort, exit
//! 134, under `ulimit -v` or a container's limit). The count is of the heap the program
//! asked for, not of the pages the system gave it (the allocator's own slack, the stacks
//! and the binary are beside it): the default bound ([`default_max`]) leaves room for
//! them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system's allocator, counting the bytes it holds for the program.
pub struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is the system allocator's own, with the same layout; the count is
// a side effect that never touches the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation is).
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc` and `alloc`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            IN_USE.fetch_add(new_size, Ordering::Relaxed);
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

/// Bytes of heap the program holds now.
pub fn in_use() -> u64 {
    IN_USE.load(Ordering::Relaxed) as u64
}

/// The default bound of a long read's heap: three quarters of the least of the
/// process's address-space limit (`ulimit -v`, `prlimit --as`), its control group's
/// memory limit (`memory.max`: a container's) and the machine's memory, less 64 MiB
/// ([`RESERVE`]), and at least 16 MiB; 4 GiB where none is known. Less, because the
/// count is of the heap asked for: the allocator's slack, the stacks, the binary and the
/// buffers come on top.
pub fn default_max() -> u64 {
    let limits = [address_space_limit(), cgroup_limit(), machine_memory()];
    limits.into_iter().flatten().min().map_or(4 << 30, |least| {
        (least / 4 * 3).saturating_sub(RESERVE).max(16 << 20)
    })
}

/// What the default bound leaves beside the heap for the binary, the stacks and the
/// allocator's own.
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
    fn the_count_follows_what_is_held() {
        // Other tests allocate beside this one: the margin is wide.
        let before = in_use();
        let held = vec![1u8; 256 << 20];
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
