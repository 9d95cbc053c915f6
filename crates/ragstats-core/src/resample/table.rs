//! Buffers for the engine's row tables: memory the kernel is asked to back with huge pages
//! when a table is large.
//!
//! The engine reads a stratum's table at random, one row per draw. Past the TLB's reach
//! (a few MB with 4 KiB pages) nearly every such read first walks the page tables, and in
//! a virtual machine that walk is two-dimensional. With 2 MiB pages a 64 MB table needs
//! 32 TLB entries. Measured on the Zen 4 VM (docs/BENCHMARKS.md), 2 x 500,000 rows,
//! k = 16: 88 -> 114 M draws/s with the kernel's transparent huge pages on for all memory,
//! and 76 -> 92 M/s alternated with only these tables advised (the VM's setting is `madvise`).

use super::cpu::Walk;

/// Tables of at least this many bytes are advised for transparent huge pages: the size from
/// which the engine prefetches its rows, too (4 MiB), since both answer the same limit:
/// below it the rows fit the TLB's reach with 4 KiB pages.
pub const HUGE_PAGE_MIN_BYTES: usize = Walk::STEPS_MAX_BYTES;

/// Bytes in a transparent huge page on x86_64 and on aarch64 with 4 KiB base pages.
const HUGE_PAGE: usize = 2 << 20;

/// `values` (`len` of them, or fewer) collected into a table buffer: a vector whose memory,
/// when it holds at least [`HUGE_PAGE_MIN_BYTES`], was advised for transparent huge pages
/// (Linux: `madvise(MADV_HUGEPAGE)` over its 2 MiB-aligned part) before anything was
/// written to it. A hint only: where the kernel declines, or on other systems, the buffer
/// is an ordinary vector; the values are the same either way.
pub fn table_from(len: usize, values: impl IntoIterator<Item = f32>) -> Vec<f32> {
    let mut table = Vec::with_capacity(len);
    advise_huge_pages(&table);
    table.extend(values);
    table
}

/// Advises the 2 MiB-aligned part of `table`'s allocated (and not yet written) memory for
/// transparent huge pages, if it is at least [`HUGE_PAGE_MIN_BYTES`] long.
fn advise_huge_pages(table: &Vec<f32>) {
    let bytes = table.capacity() * std::mem::size_of::<f32>();
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    let start = table.as_ptr() as usize;
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end <= first {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: [first, end) lies inside the vector's own allocation, and MADV_HUGEPAGE only
    // changes how the kernel backs those pages, never their contents. Failure (a kernel
    // without THP) leaves them as they were, so the result is ignored.
    unsafe {
        libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (first, end);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `VmFlags` of the mapping of this process that holds `addr` (from
    /// /proc/self/smaps), if any.
    #[cfg(target_os = "linux")]
    fn vm_flags(addr: usize) -> Option<Vec<String>> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let head = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = head.split_once('-') {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = (lo..hi).contains(&addr);
                    continue;
                }
            }
            if inside {
                if let Some(flags) = line.strip_prefix("VmFlags:") {
                    return Some(flags.split_whitespace().map(String::from).collect());
                }
            }
        }
        None
    }

    #[test]
    fn a_table_holds_its_values_in_order() {
        for len in [0usize, 5, (HUGE_PAGE_MIN_BYTES / 4) + 3] {
            let table = table_from(len, (0..len).map(|i| i as f32 * 0.5));
            assert_eq!(table.len(), len);
            assert!(table.iter().enumerate().all(|(i, &x)| x == i as f32 * 0.5));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_large_table_is_advised_for_huge_pages() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            eprintln!("skipped: this kernel has no transparent huge pages");
            return;
        }
        // 9 MiB: at least three whole aligned huge pages inside the buffer. (A small table
        // is not checked the other way: the allocator may place it in memory that an
        // earlier, freed table of another test had advised.)
        let len = (9 << 20) / 4;
        let table = table_from(len, std::iter::repeat_n(1.0, len));
        let inner = (table.as_ptr() as usize).next_multiple_of(HUGE_PAGE);
        let flags = vm_flags(inner).expect("the table's mapping in /proc/self/smaps");
        assert!(flags.iter().any(|f| f == "hg"), "VmFlags {flags:?}");
    }
}
