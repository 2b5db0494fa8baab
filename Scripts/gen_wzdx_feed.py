#!/usr/bin/env python3
"""Write a synthetic WZDx 4.2 FeatureCollection of about BYTES bytes, laid out like CDOT's production
feed (../shared/feeds/wzdx/): feed_info, then work-zone features of ~2.7 KB each with core_details,
dates, verification flags, vehicle_impact, 2-4 lanes, cross streets, mileposts, types_of_work and a
LineString of 20 points with 14-decimal coordinates. Deterministic (fixed seed); ids are unique.

usage: gen_wzdx_feed.py OUT.json BYTES [POINTS]     prints the number of features written
POINTS (default 20) sets the positions of every LineString: 100000 gives long-corridor work zones.
Used by Scripts/bench-json and Scripts/bench-json-ingest.
"""
import json, random, re, sys, uuid
path, target = sys.argv[1], int(sys.argv[2])
points_per_line = int(sys.argv[3]) if len(sys.argv) > 3 else 20
rng = random.Random(20260918)
source_id = "d9823a41-891b-4f4d-8ee5-296acc016927"
roads = ["I-70", "I-25", "US-6", "CO-13", "US-285", "I-76", "CO-9", "US-40"]
directions = ["eastbound", "westbound", "northbound", "southbound"]
impacts = ["some-lanes-closed", "all-lanes-open", "all-lanes-closed", "alternating-one-way"]
works = ["surface-work", "roadway-creation", "barrier-work", "painting", "below-road-work"]
def coordinate(value):
    return float(f"{value:.14f}")
def feature(n):
    road = rng.choice(roads)
    direction = rng.choice(directions)
    start_mp = rng.randint(1, 400)
    lon, lat = rng.uniform(-109.0, -102.05), rng.uniform(37.0, 41.0)
    points = []
    for _ in range(points_per_line):
        lon += rng.uniform(-0.004, 0.004)
        lat += rng.uniform(-0.004, 0.004)
        points.append([coordinate(lon), coordinate(lat)])
    lanes = [{"order": i + 1, "type": "general", "status": rng.choice(["open", "closed"])}
             for i in range(rng.randint(2, 4))]
    day = rng.randint(1, 28)
    return {
        "id": str(uuid.UUID(int=rng.getrandbits(128))),
        "type": "Feature",
        "properties": {
            "core_details": {
                "event_type": "work-zone",
                "data_source_id": source_id,
                "road_names": [road],
                "direction": direction,
                "name": f"OpenTMS-Event{rng.randint(10**9, 10**10)}_{direction}",
                "description": f"Between Exit {start_mp}: Town {n % 97} and Exit {start_mp + 3}: Town {n % 89} from Mile Point {start_mp} to Mile Point {start_mp + 2}. Right lane closed due to concrete slab replacement. Starting May {day}, 2023 at 12:00AM MDT until May {day}, 2023 at about 11:59PM MDT.",
                "update_date": f"2023-05-{day:02d}T06:02:05Z",
            },
            "start_date": f"2023-05-{day:02d}T06:00:00Z",
            "end_date": f"2023-05-{day:02d}T23:59:00Z",
            "is_start_date_verified": False,
            "is_end_date_verified": False,
            "is_start_position_verified": False,
            "is_end_position_verified": False,
            "location_method": "channel-device-method",
            "work_zone_type": "static",
            "vehicle_impact": rng.choice(impacts),
            "lanes": lanes,
            "beginning_cross_street": f"Exit {start_mp}: Town {n % 97}",
            "ending_cross_street": f"Exit {start_mp + 3}: Town {n % 89}",
            "types_of_work": [{"type_name": rng.choice(works), "is_architectural_change": False}],
            "beginning_milepost": float(start_mp),
            "ending_milepost": float(start_mp + 2),
        },
        "geometry": {"type": "LineString", "coordinates": points},
    }
head = {"publisher": "CDOT", "version": "4.2", "license": "https://creativecommons.org/publicdomain/zero/1.0/",
        "data_sources": [{"data_source_id": source_id, "organization_name": "CDOT",
                          "update_date": "2023-05-20T03:46:17Z", "update_frequency": 300}],
        "update_date": "2023-05-22T23:40:06Z", "update_frequency": 300}
# Laid out like CDOT's feed (about 25 % whitespace): one line per point, lane and work type.
inline = [
    (re.compile(r'\[\n\s+(-?[\d.]+),\n\s+(-?[\d.]+)\n\s+\]'), r'[\1, \2]'),
    (re.compile(r'\{\n\s+("order": \d+),\n\s+("type": "\w+"),\n\s+("status": "\w+")\n\s+\}'), r'{ \1, \2, \3 }'),
    (re.compile(r'\[\n\s+\{\n\s+("type_name": "[\w-]+"),\n\s+("is_architectural_change": \w+)\n\s+\}\n\s+\]'), r'[{ \1, \2 }]'),
    (re.compile(r'\[\n\s+("[^"\n]*")\n\s+\]'), r'[\1]'),
]
def layout(value):
    text = json.dumps(value, indent=2)
    for pattern, replacement in inline:
        text = pattern.sub(replacement, text)
    return text
count = 0
written = 0
with open(path, "w", encoding="utf-8") as out:
    text = '{\n  "feed_info": ' + json.dumps(head, indent=2).replace("\n", "\n  ") + ',\n  "type": "FeatureCollection",\n  "features": [\n'
    out.write(text); written += len(text)
    while written < target:
        text = ("" if count == 0 else ",\n") + "    " + layout(feature(count)).replace("\n", "\n    ")
        out.write(text); written += len(text); count += 1
    out.write("\n  ]\n}\n")
print(count)
