import CSocketSupport

/// How the daemon asks glibc's malloc to hold memory: process-wide, so set once by the
/// executable that runs the fleet (wearfleetd, and fleet-bench's agent that stands in for it),
/// never by a library on its own.
public enum HeapPolicy {
    /// Buffers of 128 KiB and more are mapped on their own and unmapped when freed. glibc's
    /// default threshold rises each time such a mapping is freed, after which large short-lived
    /// buffers (a dictionary's storage regrown as devices pass by, arrays of a burst's actions)
    /// come from the heap and leave free pages between live data that `malloc_trim` cannot give
    /// back. Measured with fleet-bench's churn section (3,000 passers-by over 120 s): RSS at rest
    /// afterwards 2.4 MB above the start with the dynamic threshold, 1.6 MB with this (NOTES.md).
    public static let mmapThreshold: Int32 = 128 * 1024

    /// Applies the policy; call before the fleet starts.
    public static func apply() {
        wearfleet_fix_mmap_threshold(mmapThreshold)
    }
}
