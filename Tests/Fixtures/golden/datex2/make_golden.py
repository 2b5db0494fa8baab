#!/usr/bin/env python3
"""Expected incidents for the real DATEX II samples, computed independently of the Swift code.

Reads ../shared/feeds/datex2_*/*.xml with Python's xml.etree.ElementTree (namespaces by URI)
and writes one TSV per sample here: one line per situationRecord, the columns of HEADER.
The rules are the ones DATEX2Mapper documents (ids, times in UTC, the end decision, the
description, location text, geometry), written again from the DATEX II schemas; the category is
read from a table of only the kinds these samples hold, so a new kind fails loudly.

usage: Tests/Fixtures/golden/datex2/make_golden.py   (run from anywhere; rewrites the TSVs)
"""
import datetime as dt
import os
import re
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
FEEDS = os.path.normpath(os.path.join(HERE, "../../../../../shared/feeds"))
SAMPLES = [
    "datex2_fi_digitraffic/situation_v2_2_accident_20170810.xml",
    "datex2_fi_digitraffic/situation_v3_5_GUID50456943.xml",
    "datex2_nl_ndw/brugopeningen_v2_soap_snapshot_20220509.xml",
    "datex2_nl_ndw/brugopeningen_v2_soap_push_lifecycle_end_20220512.xml",
    "datex2_nl_ndw/brugopeningen_v3_messagecontainer_20260402_first20.xml",
    "datex2_nl_ndw/brugopeningen_v3_statefulpush_putDataInput_20260405.xml",
]
HEADER = ["external_id", "category", "provider_category", "started_at", "confirmed_at", "expected_end_at", "ended_at",
          "geometry", "longitude", "latitude", "road", "location", "direction", "description"]
D2 = "http://datex2.eu/schema/2/2_0"
SIT = "http://datex2.eu/schema/3/situation"
COM = "http://datex2.eu/schema/3/common"
LOC = "http://datex2.eu/schema/3/locationReferencing"
XSI = "{http://www.w3.org/2001/XMLSchema-instance}type"
# Only the kinds in these samples (DATEX II 2.2.3 / 3.1 SituationRecord subtypes).
CATEGORY = {"Accident": "accident", "AbnormalTraffic": "congestion", "RoadOrCarriagewayOrLaneManagement": "closure",
            "TransitInformation": "other"}


def utc(text):
    """xs:dateTime with Z or an offset -> RFC 3339 UTC, seconds truncated."""
    if text is None:
        return ""
    text = text.strip()
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)", text)
    assert m, text
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    moment = dt.datetime.fromisoformat(m.group(1) + zone)
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def local(qname):
    return None if qname is None else qname.split(":")[-1]


def text(element, path, ns):
    found = element.find(path, ns)
    return None if found is None or found.text is None or not found.text.strip() else found.text.strip()


def rows(path):
    root = ET.parse(os.path.join(FEEDS, path)).getroot()
    v3 = root.find(f".//{{{SIT}}}situationRecord") is not None
    ns = {"r": SIT if v3 else D2, "c": COM if v3 else D2, "l": LOC if v3 else D2}
    publication = utc(text(root, ".//c:publicationTime", ns))
    for situation in root.iter(f"{{{ns['r']}}}situation"):
        for record in situation.findall("r:situationRecord", ns):
            kind = local(record.get(XSI))
            category = CATEGORY.get(kind)
            if kind == "GeneralNetworkManagement":
                assert text(record, "r:generalNetworkManagementType", ns) == "bridgeSwingInOperation"
                category = "closure"
            assert category, kind
            start = utc(text(record, "r:validity/c:validityTimeSpecification/c:overallStartTime", ns))
            end = utc(text(record, "r:validity/c:validityTimeSpecification/c:overallEndTime", ns))
            ended = text(record, "r:management/r:lifeCycleManagement/r:end", ns) == "true" or (
                text(record, "r:validity/c:validityStatus", ns) == "definedByValidityTimeSpec" and end and end <= publication)
            if ended and not end:
                end = utc(text(record, "r:situationRecordVersionTime", ns))
            location = record.find("r:groupOfLocations" if not v3 else "r:locationReference", ns)
            lon = lat = ""
            geometry = ""
            if location is not None:
                for where in ["l:pointByCoordinates/l:pointCoordinates", "l:locationForDisplay" if not v3 else "l:coordinatesForDisplay"]:
                    point = location.find(where, ns)
                    if point is not None:
                        geometry, lat, lon = "Point", text(point, "l:latitude", ns), text(point, "l:longitude", ns)
                        break
            places = []
            for ref in record.iter(f"{{{ns['l']}}}externalReferencing"):
                places.append(f"{text(ref, 'l:externalReferencingSystem', ns)} {text(ref, 'l:externalLocationCode', ns)}")
            direction = ""
            alert = next(iter(record.iter(f"{{{ns['l']}}}alertCDirection")), None)
            if alert is not None:
                direction = text(alert, "l:alertCDirectionCoded", ns)
                parent = next(e for e in record.iter() if alert in list(e))
                codes = [e.text.strip() for e in parent.iter(f"{{{ns['l']}}}specificLocation")]
                table = f"{text(parent, 'l:alertCLocationCountryCode', ns)}/{text(parent, 'l:alertCLocationTableNumber', ns)}"
                places.append(f"ALERT-C {table} v{text(parent, 'l:alertCLocationTableVersion', ns)}: {' → '.join(codes)}")
            comments = []
            for value in record.findall("r:generalPublicComment/r:comment/c:values/c:value", ns):
                comments.append("\n".join(line.strip(" \t\r") for line in value.text.strip().split("\n")))
            assert len(comments) <= 1, "one language per comment in these samples"
            yield [f"{situation.get('id')}/{record.get('id')}", category, kind, start, utc(text(record, "r:situationRecordCreationTime", ns)),
                   "" if ended else end, end if ended else "", geometry, lon, lat, "", "; ".join(places), direction,
                   "\\n".join(comments[0].split("\n")) if comments else ""]


def main():
    for path in SAMPLES:
        out = os.path.join(HERE, os.path.basename(path).replace(".xml", ".tsv"))
        with open(out, "w", encoding="utf-8") as f:
            f.write("\t".join(HEADER) + "\n")
            for row in rows(path):
                assert not any("\t" in cell for cell in row)
                f.write("\t".join(row) + "\n")
        print(out, file=sys.stderr)


if __name__ == "__main__":
    main()
