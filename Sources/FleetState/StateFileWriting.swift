import FoundationEssentials
import Glibc

/// Replaces a file's content. The store writes through this so tests can count writes and
/// simulate a crash mid-write.
public protocol StateFileWriting: Sendable {
    /// Replaces `file` with `data`. After a throw, `file` holds its previous content.
    func write(_ data: Data, to file: URL) throws(StateStoreError)
}
