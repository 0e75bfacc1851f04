import TOML
import Glibc

/// What a path names, following symbolic links (as opening it would).
enum PathKind: Equatable {
    /// Nothing is there, or it cannot be looked at (a dangling link, a denied search).
    case missing
    case directory
    /// A regular file or anything else that is not a directory.
    case other

    init(of path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            self = .missing
            return
        }
        self = info.st_mode & S_IFMT == S_IFDIR ? .directory : .other
    }
}
