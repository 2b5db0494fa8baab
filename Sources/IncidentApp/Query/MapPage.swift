import Foundation
import IncidentCore
import IncidentFeeds
import IncidentJSON

/// The self-contained HTML page of `incidents map`: Leaflet and Leaflet.markercluster inlined
/// (read at run time from Debian's `libjs-leaflet` and `libjs-leaflet.markercluster`), the
/// incidents as a JSON data block written row by row, and a small script that draws them:
/// circle markers coloured by category in clusters (hollow and dashed when the incident is not
/// active: planned, suspended, ended or cleared), the incident's own geometry when it is not a
/// point, popups, a legend with a line per state that is not active, a scale, a labelled
/// graticule, and the `--near` point with its radius. Only the basemap tiles come from the
/// network; without them the markers show over the graticule on a plain background.
///
/// Feed text is hostile: it reaches the page only inside the JSON data block, with `<`, `>`,
/// `&`, U+2028 and U+2029 escaped as `\uXXXX` (so no `</script>` can end the block and no
/// markup can start), and the script puts it into the page with `textContent`, never as HTML.
/// Text in the page's markup (the title) is HTML-escaped.
///
/// With `--timeline` (playback) each incident also carries the intervals in which its source
/// listed it as active (``activeSpans(_:_:)``), a time slider shows the incidents active at
/// its instant, and the data block is the same JSON gzip-compressed and in base64 (RFC 1952,
/// RFC 4648), which the page inflates with the browser's `DecompressionStream`: a page of
/// 10,000 incidents would otherwise be several megabytes of popups.
enum MapPage {
    /// Where Debian's packages put the files; `INCIDENTS_LEAFLET_DIR` overrides it.
    static let defaultAssetDirectory = "/usr/share/javascript/leaflet"
    static let scripts = ["leaflet.min.js", "leaflet.markercluster.min.js"]
    static let styles = ["leaflet.css", "MarkerCluster.css", "MarkerCluster.Default.css"]

    /// OpenStreetMap's standard tile layer and the attribution its tile usage policy asks for.
    static let openStreetMapTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    static let openStreetMapAttribution = "&copy; <a href=\"https://www.openstreetmap.org/copyright\">OpenStreetMap</a> contributors"

    /// Marker colour of each category (sRGB hex), also the legend's.
    static let colors: [IncidentCategory: String] = [
        .accident: "#d62728", .breakdown: "#ff7f0e", .roadwork: "#e6ab02", .closure: "#9467bd", .obstruction: "#8c564b",
        .weather: "#1f77b4", .congestion: "#e377c2", .event: "#2ca02c", .other: "#7f7f7f",
    ]

    /// The inlined library files, read from `directory`.
    struct Assets {
        var scripts: [String]
        var styles: [String]

        /// - Throws: ``MapAssetsMissing`` naming the first file that cannot be read, or one
        ///   that could end the `<script>` or `<style>` element it is inlined in.
        init(directory: String) throws {
            func read(_ name: String) throws -> String {
                let path = directory + "/" + name
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw MapAssetsMissing(path: path) }
                let lower = text.lowercased()
                guard !lower.contains("</script"), !lower.contains("</style"), !lower.contains("<!--") else {
                    throw MapAssetsMissing(path: path, unsafe: true)
                }
                return text
            }
            scripts = try MapPage.scripts.map(read)
            styles = try MapPage.styles.map(read)
        }
    }

    /// Page settings.
    struct Settings {
        /// The title: what was asked for (the filters).
        var title: String
        /// A Leaflet tile URL template, nil for no basemap.
        var tiles: String?
        /// HTML for the attribution control (Leaflet writes it as HTML): already escaped.
        var attribution: String
        /// The `--near` point, drawn with its `--radius` circle (meters).
        var near: Coordinate? = nil
        var radiusMeters: Double? = nil
        /// Playback (`--timeline`): the time slider, and the data block compressed.
        var timeline = false
    }

    /// An interval in which an incident's source listed it as active: from `from` until
    /// `until` (excluded; nil while it still is), as `list --at` judges an instant.
    struct Span: Equatable {
        var from: UTCInstant
        var until: UTCInstant?
    }

    /// The intervals in which each incident `query` selects was listed as active, by the
    /// transition log (``Timeline/forEachListedInterval(_:through:_:)``), up to `query.now`.
    /// The provider's end and the first sighting, which `list --at` also applies, are applied
    /// by ``spans(_:of:)`` when the row is written.
    /// - Throws: ``QueryError`` for a store without a transition log; the store's errors.
    static func activeSpans(_ reader: any IncidentReader, _ query: IncidentQuery) throws -> [Int64: [Span]] {
        guard let log = reader as? any ChangeFeedReader else { throw QueryError("this store has no transition log") }
        var selected = Set<Int64>()
        try IncidentReads.list(reader, query) { selected.insert($0.stored.id) }
        var spans: [Int64: [Span]] = [:]
        try Timeline.forEachListedInterval(log, through: query.now) { id, from, until in
            if selected.contains(id) { spans[id, default: []].append(Span(from: from, until: until)) }
        }
        return spans
    }

    /// `logged` cut to what `list --at` counts for `stored`: not before its first sighting, and
    /// not from its provider's end on; empty intervals left out.
    static func spans(_ logged: [Span], of stored: StoredIncident) -> [Span] {
        logged.compactMap { span in
            let from = max(span.from, stored.firstSeenAt)
            let until = [span.until, stored.incident.endedAt].compactMap { $0 }.min()
            if let until, until <= from { return nil }
            return Span(from: from, until: until)
        }
    }

    /// A title for people from what was asked: `Active incidents on 경부 within 10 km of
    /// 37.2636, 127.0286, started since 2024-03-01 07:00 (+09:00)`; times in `zone`.
    static func title(_ query: IncidentQuery, zone: DisplayZone) -> String {
        func time(_ instant: UTCInstant) -> String { zone.shortTime(instant) + " (\(zone.label))" }
        var subject = "Incidents"
        if query.statuses == [.active] {
            subject = "Active incidents"
        } else if !query.statuses.isEmpty {
            subject += " (" + query.statuses.map(\.rawValue).joined(separator: ", ") + ")"
        }
        if !query.categories.isEmpty { subject = query.categories.map(\.rawValue).joined(separator: ", ") + ": " + subject.lowercased() }
        var parts = [subject]
        if !query.sources.isEmpty { parts.append("from " + query.sources.joined(separator: ", ")) }
        if let road = query.roadContains { parts.append("on " + road) }
        if let near = query.near {
            parts.append("within \(IncidentOutput.distanceText(query.radiusMeters)) of \(near.latitude), \(near.longitude)")
        }
        if let box = query.boundingBox {
            parts.append("in \(box.minLatitude)…\(box.maxLatitude)°N, \(box.minLongitude)…\(box.maxLongitude)°E")
        }
        if let search = query.search { parts.append("mentioning “\(search)”") }
        var clauses: [String] = []
        if let since = query.startedSince { clauses.append("started since " + time(since)) }
        if let until = query.startedUntil { clauses.append("started before " + time(until)) }
        if let seen = query.seenSince { clauses.append("seen since " + time(seen)) }
        if let limit = query.limit { clauses.append("first \(limit)") }
        return parts.joined(separator: " ") + (clauses.isEmpty ? "" : ", " + clauses.joined(separator: ", "))
    }

    /// `text` with `& < > " '` as HTML character references.
    static func htmlEscaped(_ text: String) -> String {
        replacing(text, ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;"])
    }

    /// JSON text made safe inside an HTML `<script>` element and as JavaScript source: `<`,
    /// `>`, `&`, U+2028 and U+2029 as `\uXXXX` escapes. They can occur only inside JSON
    /// strings, where the escapes mean the same characters.
    static func scriptSafe(_ json: String) -> String {
        replacing(json, ["<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u{2028}": "\\u2028", "\u{2029}": "\\u2029"])
    }

    /// `text` with each scalar that `replacements` names replaced by its text.
    private static func replacing(_ text: String, _ replacements: [Unicode.Scalar: String]) -> String {
        guard text.unicodeScalars.contains(where: { replacements[$0] != nil }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if let replacement = replacements[scalar] { out += replacement } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    /// Everything before the incidents: the head with the inlined libraries, the header, the
    /// map element, the settings, and the start of the data block.
    static func head(_ assets: Assets, _ settings: Settings, zone: DisplayZone) -> String {
        let palette = "{" + IncidentCategory.allCases.map { "\"\($0.rawValue)\": \"\(colors[$0] ?? "#7f7f7f")\"" }.joined(separator: ", ") + "}"
        let near = settings.near.map { "[\($0.latitude), \($0.longitude)]" } ?? "null"
        // The zone the slider's time is shown in: a fixed offset, or a tz database name for
        // the browser's Intl (daylight saving applied per instant, as `--tz` does).
        let zoneJSON = "{\"offset\": \(zone.fixedOffsetSeconds.map(String.init) ?? "null"), "
            + "\"name\": \(zone.fixedOffsetSeconds == nil ? JSONString.quoted(zone.zone.identifier) : "null"), \"label\": \(JSONString.quoted(zone.label))}"
        let settingsJSON = "{\"tiles\": \(settings.tiles.map { JSONString.quoted($0) } ?? "null"), "
            + "\"attribution\": \(JSONString.quoted(settings.attribution)), \"colors\": \(palette), "
            + "\"near\": \(near), \"radius\": \(settings.radiusMeters.map { String($0) } ?? "null"), "
            + "\"timeline\": \(settings.timeline), \"zone\": \(zoneJSON)}"
        let title = htmlEscaped(settings.title)
        return """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="generator" content="incidents \(htmlEscaped(BuildInfo.version))">
        <title>\(title)</title>
        \(assets.styles.map { "<style>\n\($0)\n</style>" }.joined(separator: "\n"))
        <style>
        html, body { height: 100%; margin: 0; }
        body { display: flex; flex-direction: column; font: 14px/1.4 system-ui, sans-serif; }
        header { padding: 6px 12px; border-bottom: 1px solid #ccc; }
        header h1 { font-size: 16px; margin: 0; }
        header p { margin: 2px 0 0; color: #444; }
        #map { flex: 1; background: #e8ecef; }
        .legend { background: #fff; padding: 6px 8px; border-radius: 4px; box-shadow: 0 1px 4px rgba(0,0,0,.3); }
        .legend div { white-space: nowrap; }
        .legend span { display: inline-block; width: 12px; height: 12px; border-radius: 6px; margin-right: 6px; border: 1px solid #222; vertical-align: -1px; }
        .popup th { text-align: left; padding-right: 8px; vertical-align: top; white-space: nowrap; }
        .popup td { max-width: 320px; overflow-wrap: anywhere; }
        /* Clusters in a neutral grey: markercluster's default yellow and orange are also category colours. */
        .marker-cluster-small, .marker-cluster-medium, .marker-cluster-large { background-color: rgba(84, 94, 104, 0.35); }
        .marker-cluster-small div, .marker-cluster-medium div, .marker-cluster-large div { background-color: rgba(84, 94, 104, 0.85); color: #fff; }
        .graticule-label { color: #3c4650; font-size: 11px; white-space: nowrap; text-shadow: 0 0 2px #fff, 0 0 2px #fff; }
        .graticule-lat { margin-top: -14px; margin-left: 4px; }
        .graticule-lon { margin-top: -16px; margin-left: 3px; }
        .timeline { background: #fff; padding: 6px 8px; border-radius: 4px; box-shadow: 0 1px 4px rgba(0,0,0,.3); display: flex; align-items: center; gap: 8px; }
        .timeline input[type=range] { width: min(60vw, 640px); }
        .timeline output { font-variant-numeric: tabular-nums; white-space: nowrap; }
        </style>
        \(assets.scripts.map { "<script>\n\($0)\n</script>" }.joined(separator: "\n"))
        </head>
        <body>
        <header><h1>\(title)</h1><p id="summary"></p></header>
        <div id="map"></div>
        <script type="application/json" id="settings">\(scriptSafe(settingsJSON))</script>
        \(settings.timeline ? "<script type=\"application/gzip\" id=\"incidents\">\n" : "<script type=\"application/json\" id=\"incidents\">[\n")
        """
    }

    /// The data of one incident with a position: `{"id", "status", "category", "lat", "lon",
    /// "geometry" (GeoJSON or null), "popup": [[label, text], …]}`, times in `zone`.
    /// With `spans` (playback), also `"spans": [[from, until or null], …]` in seconds since
    /// 1970 and an "active" line in the popup.
    static func incidentJSON(_ row: ListedIncident, position: Coordinate, zone: DisplayZone, spans: [Span]? = nil) -> String {
        let stored = row.stored, i = row.stored.incident
        func time(_ instant: UTCInstant?) -> String? { instant.map { zone.shortTime($0) + " " + zone.label } }
        var popup: [(String, String?)] = [
            ("id", String(stored.id)), ("status", row.status.rawValue), ("category", i.category.rawValue),
            ("provider category", i.providerCategory), ("source", i.source), ("road", i.road), ("location", i.location),
            ("direction", i.direction), ("restriction", i.restriction), ("description", i.description),
            ("started", time(i.startedAt)), ("expected end", time(i.expectedEndAt)), ("ended", time(i.endedAt)),
            ("first seen", time(stored.firstSeenAt)), ("last seen", time(stored.lastSeenAt)), ("cleared", time(stored.clearedAt)),
        ]
        if let meters = row.distanceMeters { popup.insert(("distance", IncidentOutput.distanceText(meters)), at: 1) }
        var spansJSON = ""
        if let spans {
            let active = spans.map { span in
                span.until.map { zone.shortTime(span.from) + " – " + zone.shortTime($0) } ?? "from " + zone.shortTime(span.from)
            }.joined(separator: ", ")
            popup.insert(("active", active + " " + zone.label), at: 2)
            spansJSON = ", \"spans\": [" + spans.map { "[\($0.from.secondsSince1970), \($0.until.map { String($0.secondsSince1970) } ?? "null")]" }
                .joined(separator: ", ") + "]"
        }
        let pairs = popup.compactMap { label, value in value.map { "[\(JSONString.quoted(label)), \(JSONString.quoted($0))]" } }
        return scriptSafe("{\"id\": \(stored.id), \"status\": \"\(row.status.rawValue)\", \"category\": \"\(i.category.rawValue)\", \"lat\": \(position.latitude), "
            + "\"lon\": \(position.longitude), \"geometry\": \(i.geometry?.geoJSON ?? "null"), \"popup\": ["
            + pairs.joined(separator: ", ") + "]" + spansJSON + "}")
    }

    /// Everything after the incidents: the end of the data block, the count of incidents
    /// without a position, and the script that draws the map.
    static func tail(unplaced: Int, timeline: Bool) -> String {
        """

        \(timeline ? "" : "]")</script>
        <script type="application/json" id="totals">{"unplaced": \(unplaced)}</script>
        <script>
        \(script)
        </script>
        </body>
        </html>

        """
    }

    /// Draws the map from the data blocks. When done, `<body>` carries `data-markers` (markers
    /// added), `data-shapes` (geometries drawn), `data-ready="true"` and `data-not-active` (the
    /// markers of each state other than active: `planned 2, suspended 1`); `#incident-ID` in the
    /// address opens that incident's popup. On the playback page, the slider (`#timeline`, an
    /// `<input type=range>` of seconds since 1970) sets `data-at` and `data-drawn` (the ids of
    /// the incidents drawn, ascending) at each move.
    static let script = #"""
    (function () {
      "use strict";
      function data(id) { return JSON.parse(document.getElementById(id).textContent); }
      // The playback page's incidents: gzip in base64 (MapPage), inflated by the browser.
      function inflated(id) {
        var text = document.getElementById(id).textContent.replace(/\s+/g, ""), binary = atob(text);
        var bytes = new Uint8Array(binary.length);
        for (var k = 0; k < binary.length; k++) { bytes[k] = binary.charCodeAt(k); }
        var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
        return new Response(stream).text().then(JSON.parse);
      }
      var settings = data("settings"), totals = data("totals");
      var map = L.map("map", { maxZoom: 19, zoomSnap: 0.25 });
      if (settings.tiles) {
        L.tileLayer(settings.tiles, { maxZoom: 19, attribution: settings.attribution }).addTo(map);
      }
      L.control.scale({ imperial: false }).addTo(map);
      // A graticule with labels, so that the map reads without tiles (offline, --tiles none):
      // about 3 to 10 lines each way at a round step, redrawn as the view changes.
      var graticule = L.layerGroup().addTo(map);
      function drawGraticule() {
        graticule.clearLayers();
        var b = map.getBounds(), span = Math.max(b.getNorth() - b.getSouth(), b.getEast() - b.getWest());
        var steps = [30, 10, 5, 2, 1, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001], step = steps[steps.length - 1];
        for (var k = 0; k < steps.length; k++) { if (span / steps[k] >= 3) { step = steps[k]; break; } }
        var digits = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)), lines = 0;
        var style = { color: "#7d8891", weight: 1, opacity: 0.7, interactive: false };
        function label(text, latlng, kind) {
          L.marker(latlng, { interactive: false, keyboard: false,
            icon: L.divIcon({ className: "graticule-label graticule-" + kind, html: text, iconSize: null }) }).addTo(graticule);
        }
        for (var i = Math.ceil(Math.max(-90, b.getSouth()) / step); i * step <= Math.min(90, b.getNorth()); i++) {
          var lat = i * step;
          L.polyline([[lat, b.getWest()], [lat, b.getEast()]], style).addTo(graticule);
          label(Math.abs(lat).toFixed(digits) + "°" + (lat < 0 ? "S" : "N"), [lat, b.getWest()], "lat");
          lines += 1;
        }
        for (var j = Math.ceil(b.getWest() / step); j * step <= b.getEast(); j++) {
          var lon = j * step;
          L.polyline([[b.getSouth(), lon], [b.getNorth(), lon]], style).addTo(graticule);
          label(Math.abs(lon).toFixed(digits) + "°" + (lon < 0 ? "W" : "E"), [b.getSouth(), lon], "lon");
          lines += 1;
        }
        document.body.dataset.graticule = String(lines);
      }
      function colorOf(category) { return settings.colors[category] || settings.colors.other; }
      function popup(incident) {
        var table = document.createElement("table");
        table.className = "popup";
        incident.popup.forEach(function (pair) {
          var row = table.insertRow(), label = document.createElement("th"), value = row.insertCell();
          label.textContent = pair[0];
          value.textContent = pair[1];
          row.insertBefore(label, value);
        });
        return table;
      }
      // An instant (seconds since 1970) as 2024-03-01 08:00 in the zone of --tz, with its label.
      function timeText(t) {
        var zone = settings.zone;
        if (zone.offset !== null) {
          return new Date((t + zone.offset) * 1000).toISOString().slice(0, 16).replace("T", " ") + " " + zone.label;
        }
        var parts = {};
        new Intl.DateTimeFormat("en-US", { timeZone: zone.name, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
          hour: "2-digit", minute: "2-digit" }).formatToParts(new Date(t * 1000)).forEach(function (part) { parts[part.type] = part.value; });
        return parts.year + "-" + parts.month + "-" + parts.day + " " + parts.hour + ":" + parts.minute + " " + zone.label;
      }
      function draw(incidents) {
        var cluster = L.markerClusterGroup({ maxClusterRadius: 40, disableClusteringAtZoom: 17 });
        var shapes = L.featureGroup();
        var byId = {}, counts = {}, shapeCount = 0, notActive = {}, markers = [], outlines = [];
        incidents.forEach(function (incident) {
          // On the playback page an incident is drawn only while it was active.
          var color = colorOf(incident.category), active = settings.timeline || incident.status === "active";
          // What is not in force now (planned, suspended, ended, cleared): hollow, dashed.
          if (!active) { notActive[incident.status] = (notActive[incident.status] || 0) + 1; }
          var marker = L.circleMarker([incident.lat, incident.lon],
            { radius: 8, color: "#222222", weight: 1, fillColor: color, fillOpacity: active ? 1 : 0.25, dashArray: active ? null : "3 3",
              incidentId: incident.id });
          marker.bindPopup(function () { return popup(incident); });
          cluster.addLayer(marker);
          markers.push(marker);
          byId[incident.id] = incident;
          counts[incident.category] = (counts[incident.category] || 0) + 1;
          var outline = null;
          if (incident.geometry && incident.geometry.type !== "Point") {
            outline = L.geoJSON(incident.geometry, {
              style: { color: color, weight: 5, opacity: 0.8, dashArray: active ? null : "8 8" },
              pointToLayer: function (feature, latlng) {
                return L.circleMarker(latlng, { radius: 5, color: color, weight: 2, fillColor: color, fillOpacity: 0.6 });
              }
            }).bindPopup(function () { return popup(incident); }).addTo(shapes);
            shapeCount += 1;
          }
          outlines.push(outline);
        });
        shapes.addTo(map);
        cluster.addTo(map);
        var bounds = L.latLngBounds([]);
        // The --near circle's box from the point (the map has no view yet to project it).
        if (settings.near) { bounds.extend(L.latLng(settings.near).toBounds(2 * settings.radius)); }
        if (incidents.length) { bounds.extend(cluster.getBounds()); }
        if (shapeCount) { bounds.extend(shapes.getBounds()); }
        if (bounds.isValid()) { map.fitBounds(bounds, { padding: [30, 30], maxZoom: 15 }); }
        else { map.setView([36.5, 127.8], 7); }
        // Drawn once the view is set (a path added while the first view is being set finds no
        // renderer bounds), then again after each move.
        drawGraticule();
        map.on("moveend", drawGraticule);
        if (settings.near) {
          // The --near point and its --radius: what the query covered.
          L.circle(settings.near, { radius: settings.radius, color: "#1a5fb4", weight: 2, fill: false, dashArray: "6 4",
                                    interactive: false }).addTo(map);
          L.circleMarker(settings.near, { radius: 4, color: "#1a5fb4", weight: 2, fillColor: "#ffffff", fillOpacity: 1,
                                          interactive: false }).addTo(map);
          document.body.dataset.queryCircle = String(settings.radius);
        }
        var legend = L.control({ position: "bottomright" });
        legend.onAdd = function () {
          var box = L.DomUtil.create("div", "legend");
          Object.keys(settings.colors).forEach(function (category) {
            if (!counts[category]) { return; }
            var line = document.createElement("div"), swatch = document.createElement("span");
            swatch.style.background = settings.colors[category];
            line.appendChild(swatch);
            line.appendChild(document.createTextNode(category + " " + counts[category]));
            box.appendChild(line);
          });
          Object.keys(notActive).sort().forEach(function (status) {
            var line = document.createElement("div"), swatch = document.createElement("span");
            swatch.style.borderStyle = "dashed";
            line.appendChild(swatch);
            line.appendChild(document.createTextNode(status + " " + notActive[status]));
            box.appendChild(line);
          });
          return box;
        };
        legend.addTo(map);
        var summary = incidents.length + " incident" + (incidents.length === 1 ? "" : "s")
          + " on the map" + (totals.unplaced ? "; " + totals.unplaced + " without a position not shown" : "");
        document.getElementById("summary").textContent = summary;
        function openFromAddress() {
          var match = /^#incident-(\d+)$/.exec(window.location.hash), incident = match && byId[match[1]];
          if (!incident) { return; }
          map.setView([incident.lat, incident.lon], Math.max(map.getZoom(), 17), { animate: false });
          L.popup().setLatLng([incident.lat, incident.lon]).setContent(popup(incident)).openOn(map);
        }
        window.addEventListener("hashchange", openFromAddress);
        openFromAddress();
        if (settings.timeline) { playback(incidents, markers, outlines, cluster, shapes, summary); }
        document.body.dataset.markers = String(incidents.length);
        document.body.dataset.shapes = String(shapeCount);
        document.body.dataset.ready = "true";
        document.body.dataset.notActive = Object.keys(notActive).sort().map(function (status) { return status + " " + notActive[status]; }).join(", ");
      }
      // The time slider: from the first appearance to the last change of the incidents on the
      // map, a minute a step; at each instant only the incidents active then are drawn
      // (`data-at` and `data-drawn`, their ids, on <body>). Play steps through it.
      function playback(incidents, markers, outlines, cluster, shapes, summary) {
        var first = Infinity, last = -Infinity;
        incidents.forEach(function (incident) {
          incident.spans.forEach(function (span) {
            first = Math.min(first, span[0]);
            last = Math.max(last, span[0], span[1] === null ? span[0] : span[1]);
          });
        });
        if (first === Infinity) { first = last = Math.floor(Date.now() / 1000); }
        var control = L.control({ position: "bottomleft" }), slider, time, play, timer = null;
        control.onAdd = function () {
          var box = L.DomUtil.create("div", "timeline");
          play = L.DomUtil.create("button", "", box);
          play.type = "button";
          play.textContent = "▶";
          play.title = "Play";
          slider = L.DomUtil.create("input", "", box);
          slider.type = "range";
          slider.id = "timeline";
          slider.min = String(Math.floor(first / 60) * 60);
          slider.max = String(Math.max(Math.ceil(last / 60) * 60, Number(slider.min) + 60));
          slider.step = "60";
          slider.value = slider.max;
          time = L.DomUtil.create("output", "", box);
          L.DomEvent.disableClickPropagation(box);
          L.DomEvent.disableScrollPropagation(box);
          return box;
        };
        control.addTo(map);
        function activeAt(incident, t) {
          return incident.spans.some(function (span) { return span[0] <= t && (span[1] === null || t < span[1]); });
        }
        // Every marker is in the cluster at first; each move adds and removes only the difference.
        var shown = incidents.map(function () { return true; });
        function show(t) {
          var added = [], removed = [], active = 0;
          incidents.forEach(function (incident, i) {
            var now = activeAt(incident, t);
            if (now) { active += 1; }
            if (now === shown[i]) { return; }
            shown[i] = now;
            (now ? added : removed).push(markers[i]);
            if (outlines[i]) { if (now) { shapes.addLayer(outlines[i]); } else { shapes.removeLayer(outlines[i]); } }
          });
          cluster.removeLayers(removed);
          cluster.addLayers(added);
          time.textContent = timeText(t);
          document.getElementById("summary").textContent = summary + "; " + active + " active at " + timeText(t);
          document.body.dataset.at = new Date(t * 1000).toISOString().replace(".000Z", "Z");
          document.body.dataset.drawn = cluster.getLayers().map(function (marker) { return marker.options.incidentId; })
            .sort(function (a, b) { return a - b; }).join(" ");
        }
        slider.addEventListener("input", function () { show(Number(slider.value)); });
        play.addEventListener("click", function () {
          if (timer !== null) { clearInterval(timer); timer = null; play.textContent = "▶"; return; }
          if (Number(slider.value) >= Number(slider.max)) { slider.value = slider.min; }
          // About 20 seconds from start to end, a minute a step at least.
          var step = Math.max(60, Math.ceil((Number(slider.max) - Number(slider.min)) / 200 / 60) * 60);
          play.textContent = "❚❚";
          timer = setInterval(function () {
            slider.value = String(Math.min(Number(slider.max), Number(slider.value) + step));
            show(Number(slider.value));
            if (Number(slider.value) >= Number(slider.max)) { clearInterval(timer); timer = null; play.textContent = "▶"; }
          }, 100);
        });
        show(Number(slider.value));
      }
      if (settings.timeline) {
        inflated("incidents").then(draw).catch(function (error) { document.body.dataset.error = String(error); });
      } else {
        draw(data("incidents"));
      }
    })();
    """#
}

/// Writes the map page row by row (``IncidentWriter``): incidents without a position are
/// counted, not drawn.
struct MapWriter: IncidentWriter {
    private var out: OutputBuffer
    let zone: DisplayZone
    private var placed = 0
    private var unplaced = 0
    /// Playback: each incident's intervals of activity (``MapPage/activeSpans(_:_:)``), and the
    /// data block's compression; an incident with no interval is never drawn, so not written.
    private let spans: [Int64: [MapPage.Span]]?
    private var compressed: CompressedBlock?

    /// Writes the head at once. With `spans`, the page plays back (`settings.timeline`).
    init(_ out: OutputBuffer, assets: MapPage.Assets, settings: MapPage.Settings, zone: DisplayZone,
         spans: [Int64: [MapPage.Span]]? = nil) throws {
        self.out = out
        self.zone = zone
        self.spans = spans
        var settings = settings
        settings.timeline = spans != nil
        if spans != nil { compressed = try CompressedBlock() }
        try self.out.write(MapPage.head(assets, settings, zone: zone))
    }

    mutating func write(_ row: ListedIncident) throws {
        guard let position = row.stored.incident.coordinate else { unplaced += 1; return }
        var active: [MapPage.Span]?
        if let spans {
            active = MapPage.spans(spans[row.stored.id] ?? [], of: row.stored)
            if active?.isEmpty ?? true { return }
        }
        let json = (placed == 0 ? "" : ",\n") + MapPage.incidentJSON(row, position: position, zone: zone, spans: active)
        placed += 1
        guard compressed != nil else { return try out.write(json) }
        let lines = try compressed?.add(Array(((placed == 1 ? "[" : "") + json).utf8)) ?? ""
        try out.write(lines)
    }

    mutating func finish() throws {
        if compressed != nil {
            let lines = try compressed?.finish(Array(((placed == 0 ? "[" : "") + "]").utf8)) ?? ""
            try out.write(lines)
        }
        try out.write(MapPage.tail(unplaced: unplaced, timeline: spans != nil))
        try out.flush()
    }
}

/// Bytes gzip-compressed (``GzipDeflater``) and written as base64 lines (RFC 4648 §4), as they
/// come: the playback page's data block.
struct CompressedBlock {
    private let deflater: GzipDeflater
    /// Compressed bytes not yet written: fewer than 3, or a line's worth to come.
    private var pending: [UInt8] = []

    init() throws {
        deflater = try GzipDeflater(level: 9)
    }

    /// Base64 lines of what is ready to write (empty while zlib keeps the input).
    mutating func add(_ bytes: [UInt8]) throws -> String {
        pending += try bytes.withUnsafeBytes { try deflater.deflate($0, finish: false) }
        return lines(final: false)
    }

    /// The last lines, with `bytes` and the end of the gzip stream.
    mutating func finish(_ bytes: [UInt8]) throws -> String {
        pending += try bytes.withUnsafeBytes { try deflater.deflate($0, finish: true) }
        return lines(final: true)
    }

    /// Base64 of `pending` in lines of 76 characters (57 bytes), the rest kept for the next
    /// call unless `final`.
    private mutating func lines(final: Bool) -> String {
        let whole = final ? pending.count : pending.count / 57 * 57
        guard whole > 0 else { return "" }
        let text = Data(pending[0..<whole]).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed]) + "\n"
        pending.removeFirst(whole)
        return text
    }
}

/// Leaflet's files are missing (exit 66): the map needs Debian's packages.
struct MapAssetsMissing: Error, CustomStringConvertible {
    var path: String
    /// The file exists but holds text that would end the element it is inlined in.
    var unsafe = false
    var description: String {
        unsafe
            ? "\(path) holds </script>, </style> or <!--, so it cannot be inlined in the map page; reinstall libjs-leaflet"
            : "cannot read \(path): `incidents map` inlines Leaflet from Debian's packages; install them with "
                + "`apt-get install libjs-leaflet libjs-leaflet.markercluster` (or set INCIDENTS_LEAFLET_DIR to a directory holding "
                + (MapPage.scripts + MapPage.styles).joined(separator: ", ") + ")"
    }
}
