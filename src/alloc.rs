//! The global allocator: mimalloc, called the way a C program calls it.
//!
//! The checker clones a world per generated state and the simulator builds a choice list
//! per step: small, short-lived allocations, where mimalloc is several times faster than
//! the system allocator (measured with `payhub-verify bench`).
//!
//! The `mimalloc` crate's allocator asks for every block through `mi_malloc_aligned`,
//! even when the alignment is the one `mi_malloc` guarantees anyway. When the page of a
//! size class runs out of free blocks, that aligned path falls back to over-allocating
//! from a larger size class for every size that is not a power of two, so the size
//! class's own page never fills again and a third of the checker's allocations took the
//! slow path (callgrind: `mi_theap_malloc_zero_aligned_at_overalloc`). This shim uses
//! the plain calls whenever their alignment suffices, as the system allocator does.

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// The alignment `mi_malloc` gives blocks of at least this size (`MI_MAX_ALIGN_SIZE`,
/// `alignof(max_align_t)`, as C's `malloc` must); smaller blocks are aligned to any
/// power of two that fits in them. In mimalloc 3 (libmimalloc-sys 0.1.49, pinned in
/// Cargo.toml) this holds because block sizes of two words or more are rounded to a
/// multiple of two words and every page's first block is 16-aligned (`page-queue.c`,
/// `MI_PAGE_MIN_START_BLOCK_ALIGN`), which mimalloc asserts in `alloc.c`; the test below
/// checks it across size classes and page refills. Re-check on an upgrade.
const MALLOC_ALIGN: usize = 16;

/// mimalloc, with plain `mi_malloc`/`mi_realloc` where they give the alignment asked for.
pub struct MiMalloc;

/// The allocator `main.rs` installs: this shim, or with the feature `crate-mimalloc` the
/// `mimalloc` crate's, to measure one against the other (`payhub-verify bench --crates`;
/// docs/performance.md, "mimalloc, called plainly").
#[cfg(not(feature = "crate-mimalloc"))]
pub use self::MiMalloc as Installed;
#[cfg(feature = "crate-mimalloc")]
pub use mimalloc::MiMalloc as Installed;

/// Whether the plain calls give `align` for a block of `size` bytes.
fn plain(align: usize, size: usize) -> bool {
    align <= MALLOC_ALIGN && align <= size
}

// SAFETY: every block comes from mimalloc and goes back to it (`mi_free` takes blocks of
// the plain and the aligned calls alike); `plain` asks for the plain calls only where
// mimalloc documents that their blocks have at least the alignment the layout needs.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the layout's size is non-zero (GlobalAlloc's contract).
        unsafe {
            if plain(layout.align(), layout.size()) {
                mi::mi_malloc(layout.size()) as *mut u8
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if plain(layout.align(), layout.size()) {
                mi::mi_zalloc(layout.size()) as *mut u8
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (GlobalAlloc's contract).
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`; `new_size` is non-zero.
        unsafe {
            if plain(layout.align(), new_size) {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks from the plain and the aligned paths have the alignment asked for, keep
    /// their contents when grown, and are freed.
    #[test]
    fn blocks_are_aligned_and_survive_realloc() {
        let a = MiMalloc;
        for (size, align) in [
            (1, 1),
            (8, 8),
            (24, 8),
            (48, 16),
            (40, 8),
            (8, 32),
            (100, 64),
        ] {
            let layout = Layout::from_size_align(size, align).unwrap();
            // SAFETY: non-zero sizes; every block is freed with its layout.
            unsafe {
                let p = a.alloc(layout);
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0, "{size}/{align}");
                p.write(7);
                let q = a.realloc(p, layout, size * 3);
                assert_eq!(q as usize % align, 0, "{size}/{align} grown");
                assert_eq!(q.read(), 7);
                a.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                let z = a.alloc_zeroed(layout);
                assert_eq!(z.read(), 0);
                a.dealloc(z, layout);
            }
        }
    }

    /// Every plain-path size class keeps the alignment `plain` relies on, also once its
    /// pages ran out and were refilled: thousands of blocks per size, half freed and
    /// allocated again.
    #[test]
    fn the_plain_path_is_aligned_in_every_size_class() {
        let a = MiMalloc;
        for size in (8..=4096).step_by(8) {
            let align = if size >= MALLOC_ALIGN {
                MALLOC_ALIGN
            } else {
                size.next_power_of_two().min(8)
            };
            let layout = Layout::from_size_align(size, align).unwrap();
            assert!(plain(align, size));
            let n = (256 * 1024 / size).clamp(64, 4096);
            // SAFETY: non-zero sizes; every block is freed with its layout.
            unsafe {
                let mut blocks: Vec<*mut u8> = (0..n).map(|_| a.alloc(layout)).collect();
                for (i, b) in blocks.iter_mut().enumerate() {
                    if i % 2 == 0 {
                        a.dealloc(*b, layout);
                        *b = a.alloc(layout);
                    }
                }
                for b in blocks {
                    assert!(!b.is_null());
                    assert_eq!(b as usize % align, 0, "size {size}");
                    a.dealloc(b, layout);
                }
            }
        }
    }
}
