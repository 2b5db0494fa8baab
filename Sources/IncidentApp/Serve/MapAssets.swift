import Foundation
import IncidentCore
import IncidentHTTP
import IncidentJSON

/// `/map`: a live map of the incidents, with Debian's Leaflet (`libjs-leaflet`, the files
/// `incidents map` inlines) served by the server itself, so it works without the internet
/// (only the basemap tiles come from OpenStreetMap). The page loads the items of the visible
/// area (`bbox`, at most ``maxFeatures``) as GeoJSON through their `next` links, draws points as
/// circle markers coloured by category and lines as lines, and asks again every `refresh`
/// seconds (default 15): the request carries the last `ETag`, so until a poll lands the
/// answer is a `304` without a body, and when one lands the new incidents appear without a
/// reload. Feed text reaches the page only through `textContent`.
enum MapAssets {
    /// The files served under `/map/`, from `INCIDENTS_LEAFLET_DIR` or Debian's directory.
    static let files: [String: String] = ["leaflet.js": "text/javascript; charset=utf-8", "leaflet.css": "text/css; charset=utf-8"]
    /// The most features the map draws (pages of 1,000).
    static let maxFeatures = 10_000

    static func response(_ name: String) throws -> HTTPResponse {
        let directory = ProcessInfo.processInfo.environment["INCIDENTS_LEAFLET_DIR"] ?? MapPage.defaultAssetDirectory
        guard let type = files[name], let data = FileManager.default.contents(atPath: directory + "/" + name) else {
            throw Problem(404, "no map file \(ServerFilters.shown(name)) (install libjs-leaflet)")
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", type)], body: .bytes(Array(data)), route: "")
    }

    static func page(base: String) -> HTTPResponse {
        let colors = JSONText.array(IncidentCategory.allCases.map { "[\(JSONString.quoted($0.rawValue)), \(JSONString.quoted(MapPage.colors[$0] ?? "#7f7f7f"))]" })
        let html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(OGC.title): live map</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <link rel="stylesheet" href="\(MapPage.htmlEscaped(base))/map/leaflet.css">
            <script src="\(MapPage.htmlEscaped(base))/map/leaflet.js"></script>
            <style>html,body,#map{height:100%;margin:0}#info{position:absolute;z-index:1000;right:8px;bottom:20px;background:#fff;padding:4px 8px;font:13px sans-serif}</style>
            </head><body><div id="map"></div><div id="info">loading…</div>
            <script>
            "use strict";
            const base = \(MapPage.scriptSafe(JSONString.quoted(base)));
            const colors = new Map(\(MapPage.scriptSafe(String(colors.dropLast()))));
            const params = new URLSearchParams(location.search);
            const refresh = Math.max(1, Number(params.get("refresh")) || 15);
            const map = L.map("map").setView([36.5, 127.8], 7);
            L.tileLayer("\(MapPage.openStreetMapTiles)", {maxZoom: 19, attribution: '\(MapPage.openStreetMapAttribution)'}).addTo(map);
            const layer = L.geoJSON(null, {
              pointToLayer: (feature, at) => L.circleMarker(at, {radius: 6, weight: 1, color: "#333", className: "incident-point",
                fillColor: colors.get(feature.properties.category) || "#7f7f7f", fillOpacity: feature.properties.status === "active" ? 0.9 : 0.3}),
              style: feature => feature.geometry.type === "Point" ? {}
                : {color: colors.get(feature.properties.category) || "#7f7f7f", weight: 4, className: "incident-line"},
              onEachFeature: (feature, shape) => {
                shape.options.incidentId = feature.id;
                const text = document.createElement("div");
                const p = feature.properties;
                text.textContent = [p.category, p.status, p.road, p.description, p.started_at].filter(x => x).join(" · ");
                shape.bindPopup(text);
              }}).addTo(map);
            let tag = null, loadedView = null, loading = false;
            async function load(force) {
              if (loading) return;
              loading = true;
              try {
                const b = map.getBounds();
                const box = [Math.max(-180, b.getWest()), Math.max(-90, b.getSouth()), Math.min(180, b.getEast()), Math.min(90, b.getNorth())]
                  .map(x => x.toFixed(6)).join(",");
                let url = base + "/collections/incidents/items?f=json&limit=1000&bbox=" + box;
                const view = url;
                const first = await fetch(url, {headers: tag && loadedView === view && !force ? {"If-None-Match": tag} : {}, cache: "no-store"});
                if (first.status === 304) return;
                if (!first.ok) { document.getElementById("info").textContent = "error " + first.status; return; }
                const features = [];
                let page = await first.json();
                tag = first.headers.get("ETag");
                loadedView = view;
                while (true) {
                  features.push(...page.features);
                  const next = (page.links || []).find(l => l.rel === "next");
                  if (!next || features.length >= \(maxFeatures)) break;
                  page = await (await fetch(next.href, {cache: "no-store"})).json();
                }
                layer.clearLayers();
                layer.addData(features);
                document.body.dataset.features = String(features.length);
                document.body.dataset.ids = features.map(f => f.id).join(",");
                document.getElementById("info").textContent = features.length + " incidents · " + new Date().toLocaleTimeString();
              } catch (error) {
                document.getElementById("info").textContent = "cannot load: " + error;
              } finally {
                loading = false;
              }
            }
            map.on("moveend", () => load(true));
            setInterval(() => load(false), refresh * 1000);
            load(true);
            </script></body></html>

            """
        return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", text: html, route: "")
    }
}
