/// The version wearfleetd reports on its control interface and wearfleetctl prints.
public enum WearfleetVersion {
    public static let current = "0.1.0"
}
