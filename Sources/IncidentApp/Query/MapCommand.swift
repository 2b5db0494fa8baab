import Foundation
import IncidentCore

/// `incidents map`: the incidents a `list` would show, on one self-contained HTML map (``MapPage``).
enum MapCommand {
    static let output = ValueOption<String>("output", short: "o", placeholder: "file.html",
                                            help: "The HTML file to write (replaced if it exists; - for stdout).")
    static let tiles = ValueOption<Tiles>(
        "tiles", placeholder: "url", help: "Basemap tile URL template with {z}, {x}, {y}, or none for a plain background.",
        default: "OpenStreetMap, \(MapPage.openStreetMapTiles)", what: "a tile URL (http or https, with {z}, {x} and {y}) or none"
    ) { text in
        if text == "none" { return .plain }
        guard let url = URL(string: text.replacingOccurrences(of: "{", with: "%7B").replacingOccurrences(of: "}", with: "%7D")),
              ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil,
              ["{z}", "{x}", "{y}"].allSatisfy(text.contains) else { return nil }
        return .url(text, host: url.host ?? "")
    }

    static let timeline = Flag("timeline", help: "Play the incidents back: a time slider draws each while its source listed it as active (the transition log, as list --at).")

    enum Tiles: Sendable {
        /// No basemap.
        case plain
        case url(String, host: String)
    }

    static func command(_ context: Context) -> Command {
        Command(
            name: "map",
            abstract: "Write the incidents a list would show as one self-contained HTML map.",
            discussion: """
            Markers are coloured by category and clustered; a popup shows the incident (times in --tz); a work zone's
            line is drawn when the provider gives one. The page inlines Leaflet from Debian's libjs-leaflet and
            libjs-leaflet.markercluster (read from \(MapPage.defaultAssetDirectory), or $INCIDENTS_LEAFLET_DIR), so it
            needs nothing but the basemap tiles, and shows the markers over a plain background without them.
            Open file.html#incident-ID to open that incident's popup. With --timeline, a slider (and a play
            button) goes from the first appearance to the last change of the incidents selected, a minute a step,
            and draws those their source listed as active at its instant: what `incidents list` lists as of that instant.

            Examples:
              incidents map --active --output active.html
              incidents map --road 경부 --since 1d --tiles none -o gyeongbu.html
              incidents map --timeline --since 7d --tz KST -o week.html
            """,
            options: QueryTool.databaseOptions + QueryTool.filterOptions
                + [ListCommand.order, ListCommand.limit, output, tiles, timeline, CommonOptions.timeZone],
            // A read that never suspends nor checks for cancellation: nothing for a signal to cancel.
            cancellable: false, run: { arguments in try run(arguments, context) })
    }

    static func run(_ arguments: ParsedArguments, _ context: Context) throws {
        let (query, zone) = try ListCommand.listQuery(arguments, context)
        let path = try arguments.required(output, "the HTML file to write")
        var settings: MapPage.Settings
        let title = MapPage.title(query, zone: zone)
        switch try arguments.value(tiles) ?? .url(MapPage.openStreetMapTiles, host: "tile.openstreetmap.org") {
        case .plain:
            settings = MapPage.Settings(title: title, tiles: nil, attribution: "")
        case .url(let url, let host):
            settings = MapPage.Settings(title: title, tiles: url, attribution: url == MapPage.openStreetMapTiles
                                        ? MapPage.openStreetMapAttribution : "tiles: " + MapPage.htmlEscaped(host))
        }
        settings.near = query.near
        settings.radiusMeters = query.near == nil ? nil : query.radiusMeters
        let assets = try MapPage.Assets(directory: context.environment["INCIDENTS_LEAFLET_DIR"] ?? MapPage.defaultAssetDirectory)
        try OutputFile.write(path, context) { out in
            try QueryTool.reading(arguments, context) { reader in
                let spans: [Int64: [MapPage.Span]]? = try arguments[timeline] ? MapPage.activeSpans(reader, query) : nil
                var writer = try MapWriter(out, assets: assets, settings: settings, zone: zone, spans: spans)
                try IncidentReads.list(reader, query) { try writer.write($0) }
                try writer.finish()
            }
        }
    }
}

/// Writing a command's output to a file named on the command line: into a temporary file
/// beside it, renamed over it once complete, so that a failure never leaves half a file, nor
/// does a signal (removed by the signal handler, ``ProcessSignals/removedOnSignal(_:_:)``).
/// A path that is not a regular file (`/dev/null`, `/dev/stdout`, a named pipe, a device) is
/// written to as it is, never replaced; a symbolic link's target is the file replaced, the
/// link stays.
enum OutputFile {
    /// Runs `body` with a buffer that writes to `path` (stdout for `-`); `body` flushes it.
    /// Then completes the file.
    /// - Throws: ``OutputFailure`` when the file cannot be created or written; what `body` throws.
    static func write(_ path: String, _ context: Context, _ body: (OutputBuffer) throws -> Void) throws {
        if path == "-" { return try body(OutputBuffer(context)) }
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            return try writeInPlace(path, body)
        }
        // A link to a file that exists is followed (realpath); a dangling one is replaced.
        let file = realpath(path, nil).map { resolved in defer { free(resolved) }; return String(cString: resolved) } ?? path
        let temporary = file + ".partial-\(getpid())"
        try ProcessSignals.removedOnSignal(temporary) { try write(file, temporary, body) }
    }

    /// Writes to what `path` names (a device, a pipe) without creating or renaming anything.
    private static func writeInPlace(_ path: String, _ body: (OutputBuffer) throws -> Void) throws {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw OutputFailure(path: path, reason: String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try body(OutputBuffer(FileSink(handle: handle, path: path)))
    }

    private static func write(_ path: String, _ temporary: String, _ body: (OutputBuffer) throws -> Void) throws {
        guard FileManager.default.createFile(atPath: temporary, contents: nil), let handle = FileHandle(forWritingAtPath: temporary) else {
            throw OutputFailure(path: path, reason: "cannot create \(temporary) (does the directory exist and is it writable?)")
        }
        do {
            try body(OutputBuffer(FileSink(handle: handle, path: path)))
            try handle.synchronize()
            try? handle.close()
            guard rename(temporary, path) == 0 else {
                throw OutputFailure(path: path, reason: String(cString: strerror(errno)))
            }
        } catch {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }
}

/// A file being written: each chunk appended.
struct FileSink: ByteSink {
    let handle: FileHandle
    let path: String
    /// - Throws: ``OutputFailure`` naming the file.
    func write(_ chunk: [UInt8]) throws {
        do { try handle.write(contentsOf: chunk) } catch {
            throw OutputFailure(path: path, reason: error.localizedDescription)
        }
    }
}

/// An output file could not be written (exit 1); nothing is left half-written.
struct OutputFailure: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "cannot write \(path): \(reason)" }
}
