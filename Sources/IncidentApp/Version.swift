/// The release of this package: the one version both executables report (`--version`), send
/// in their HTTP `User-Agent`, write into their man pages and export as the
/// `trafficincidents_build_info` metric. Change it here only.
public enum BuildInfo {
    public static let version = "0.1.0"

    /// The commit the binaries were built from (`git describe --always --dirty`), written into
    /// `GeneratedCommit.swift` by `Scripts/install`; "unknown" in a plain `swift build`.
    public static let commit = generatedCommit

    /// `0.1.0 (commit 5d71f0d)`: what `--version` and the start log line say.
    public static var description: String { "\(version) (commit \(commit))" }

    /// The `User-Agent` of every HTTP request (RFC 9110 §10.1.5: product/version, then a
    /// comment): `incident-scheduler/0.1.0 (TrafficIncidents)`.
    static let userAgent = "incident-scheduler/\(version) (TrafficIncidents)"
}
