#!/usr/bin/env python3
"""Peer for Scripts/bench-json-ingest: what a data engineer would write in Python for a WZDx feed:
json.load of the whole document, the fields incident-scheduler stores, and a sqlite3 executemany
upsert keyed by (source, external_id), in one transaction, WAL, synchronous=NORMAL.

usage: peer_wzdx_python.py FEED.json DB        prints "records N"
Fields as the product maps them (Sources/IncidentFeeds/WZDx/WZDxMapper.swift): category and provider
category from event_type and vehicle_impact, roads joined, cross streets and mileposts, lanes in the
restriction text, start/end dates. The position is the geometry's first point (the product takes the
point halfway along a line, which costs it more).
"""
import json, sqlite3, sys

COLUMNS = ["source", "external_id", "category", "provider_category", "description", "road", "location", "direction",
           "restriction", "latitude", "longitude", "started_at", "expected_end_at", "ended_at"]

def span(a, b, prefix=""):
    if a is not None and b is not None: return f"{prefix}{a} → {b}"
    if a is not None: return f"{prefix}{a}"
    if b is not None: return f"{prefix}→ {b}"
    return None

def row(feature):
    p = feature["properties"]; c = p["core_details"]
    impact = p.get("vehicle_impact")
    category = "closure" if impact == "all-lanes-closed" else "roadwork"
    provider = "/".join(x for x in (c.get("event_type"), impact) if x)
    location = ", ".join(x for x in (span(p.get("beginning_cross_street"), p.get("ending_cross_street")),
                                     span(p.get("beginning_milepost"), p.get("ending_milepost"), "milepost ")) if x) or None
    parts = [impact] if impact else []
    if p.get("lanes"):
        parts.append("lanes: " + ", ".join(" ".join(str(l[k]) for k in ("order", "type", "status") if k in l) for l in p["lanes"]))
    lon, lat = (feature.get("geometry") or {}).get("coordinates", [[None, None]])[0]
    ended = p.get("end_date") if p.get("is_end_date_verified") else None
    return ("wzdx", feature["id"], category, provider, c.get("description"), "; ".join(c.get("road_names", [])) or None,
            location, c.get("direction"), "; ".join(parts) or None, lat, lon, p.get("start_date"), p.get("end_date"), ended)

with open(sys.argv[1], "rb") as f:
    document = json.load(f)
db = sqlite3.connect(sys.argv[2])
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=NORMAL")
db.execute("CREATE TABLE IF NOT EXISTS incidents(%s, PRIMARY KEY(source, external_id)) WITHOUT ROWID" % ", ".join(COLUMNS))
sql = "INSERT INTO incidents VALUES(%s) ON CONFLICT(source, external_id) DO UPDATE SET %s" % (
    ",".join("?" * len(COLUMNS)), ", ".join(f"{c}=excluded.{c}" for c in COLUMNS[2:]))
with db:
    db.executemany(sql, (row(f) for f in document["features"]))
print("records", db.execute("select count(*) from incidents").fetchone()[0])
