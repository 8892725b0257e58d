//! `memskill`: the command-line front end of memskill.

use std::io::Write;

/// Keeps freed memory in the process instead of handing it back to the OS at every free.
/// The controller's tensors (burn) and the encoder's buffers allocate and free the same large
/// blocks over and over; with glibc's defaults those blocks can be `mmap`ed and `munmap`ed
/// each time, and every reuse then page-faults its memory in again (a PPO update measured
/// 64-70 ms that way against 30 ms with these settings, on the same machine and build).
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator thresholds; called before any other thread
    // exists.
    unsafe {
        // 32 MiB: glibc's maximum for the mmap threshold on 64-bit targets.
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

fn main() {
    keep_freed_memory();
    let status = memskill_cli::run_args(std::env::args_os());
    if status != 0 {
        let _ = std::io::stdout().flush();
        std::process::exit(status);
    }
}
