import Foundation

/// Locations the tests read from. Tests never copy `../shared/feeds` into the project; they
/// read the recorded real responses where they are.
public enum TestPaths {
    /// The package root (the directory holding Package.swift).
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)  // Tests/TestSupport/Paths.swift
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// `../shared/feeds` beside the checkout: recorded real provider responses.
    public static let sharedFeeds: URL = packageRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/feeds")

    /// A recorded real response, e.g. `sharedFeed("gg_gits/getIncidentInfo_20230321.xml")`.
    public static func sharedFeed(_ relativePath: String) -> URL {
        sharedFeeds.appendingPathComponent(relativePath)
    }

    /// The project's own fixtures under `Tests/Fixtures`.
    public static func fixture(_ relativePath: String) -> URL {
        packageRoot.appendingPathComponent("Tests/Fixtures").appendingPathComponent(relativePath)
    }

    /// A fresh empty directory under the system temporary directory.
    public static func temporaryDirectory(_ label: String = "test") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("trafficincidents-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
