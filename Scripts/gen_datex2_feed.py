#!/usr/bin/env python3
"""Write a synthetic DATEX II 3 SituationPublication of about SIZE megabytes, for Scripts/bench-datex.

The shape follows the recorded real publications in ../shared/feeds/datex2_*: an NDW-style
mc:messageContainer (snapshotPull, its exchangeInformation after the payload) holding one
mc:payload xsi:type="sit:SituationPublication" with sit:situation elements of one or two
sit:situationRecord each. Records mix the kinds Fintraffic and NDW publish (roadworks, lane
closures, accidents, obstructions, congestion, weather, bridge openings), with creation and
version times (0, 6 or 9 fractional digits, as NDW writes them), probability, severity, validity,
a multi-line comment in Finnish and often English, and a linear location: coordinates for
display, road information, a gmlLineString of 4 to 12 positions, ALERT-C codes and a
linearWithinLinearElement with the road name. Values vary per record so that no parser can
shortcut them. Deterministic for a given seed.

usage: gen_datex2_feed.py SIZE_MB OUT.xml [--seed S]     prints the number of records on stdout
"""
import random
import sys

KINDS = [("MaintenanceWorks", "roadMaintenanceType", "resurfacingWork"),
         ("ConstructionWorks", "constructionWorkType", "constructionWork"),
         ("RoadOrCarriagewayOrLaneManagement", "roadOrCarriagewayOrLaneManagementType", "laneClosures"),
         ("Accident", "accidentType", "collision"),
         ("VehicleObstruction", "vehicleObstructionType", "brokenDownVehicle"),
         ("AbnormalTraffic", "abnormalTrafficType", "queuingTraffic"),
         ("WeatherRelatedRoadConditions", "roadSurfaceConditionMeasurements", None),
         ("GeneralNetworkManagement", "generalNetworkManagementType", "bridgeSwingInOperation")]
ROADS = [("3", "Tampereen Läntinen Kehätie"), ("1", "Turunväylä"), ("4", "Lahdenväylä"), ("9", "Jyväskyläntie"),
         ("A2", "Rijksweg 2"), ("A10", "Ring Amsterdam"), ("N201", "Provinciale weg"), ("E18", "Kehä III")]
FI = ["Tietyö. Yksi kaista suljettu.", "Onnettomuus. Liikenne on jonoutunut.", "Ajoneuvo rikki ajoradalla.",
      "Liukas ajokeli. Aja varovasti.", "Silta avattu laivaliikenteelle.", "Kaistajärjestelyjä &amp; kiertotie."]
EN = ["Road works. One lane closed.", "Accident. Queuing traffic.", "Broken-down vehicle on the carriageway.",
      "Slippery road. Drive carefully.", "Bridge open for shipping.", "Lane changes &amp; diversion."]


def stamp(rnd, day, hour):
    fraction = rnd.choice(["", f".{rnd.randrange(10**6):06d}", f".{rnd.randrange(10**9):09d}"])
    return f"2026-04-{day:02d}T{hour:02d}:{rnd.randrange(60):02d}:{rnd.randrange(60):02d}{fraction}Z"


def record(rnd, sid, index):
    kind, detail, value = rnd.choice(KINDS)
    day = 1 + rnd.randrange(28)
    hour = rnd.randrange(20)
    number, name = rnd.choice(ROADS)
    lat, lon = 51.5 + rnd.random() * 10, 4.0 + rnd.random() * 24
    points = []
    for _ in range(rnd.randrange(4, 13)):
        lat += rnd.uniform(-0.004, 0.004)
        lon += rnd.uniform(0.0005, 0.006)
        points.append(f"{lat:.5f} {lon:.5f}")
    end = f"<com:overallEndTime>2026-04-{day:02d}T{hour + 4:02d}:00:00Z</com:overallEndTime>" if rnd.random() < 0.6 else ""
    values = f'<com:value lang="fi">{rnd.choice(FI)}\n                Tie {number}, {name}.</com:value>'
    if rnd.random() < 0.5:
        values += f'<com:value lang="en">{rnd.choice(EN)}</com:value>'
    detail_element = f"<sit:{detail}>{value}</sit:{detail}>" if value else ""
    first, second = 10000 + rnd.randrange(30000), 10000 + rnd.randrange(30000)
    return (f'<sit:situationRecord xsi:type="sit:{kind}" id="{sid}_{index:02d}" version="{1 + rnd.randrange(9)}">'
            f"<sit:situationRecordCreationTime>{stamp(rnd, day, hour)}</sit:situationRecordCreationTime>"
            f"<sit:situationRecordVersionTime>{stamp(rnd, day, hour)}</sit:situationRecordVersionTime>"
            f"<sit:probabilityOfOccurrence>{rnd.choice(['certain', 'probable', 'riskOf'])}</sit:probabilityOfOccurrence>"
            f"<sit:severity>{rnd.choice(['low', 'medium', 'high', 'unknown'])}</sit:severity>"
            "<sit:validity><com:validityStatus>definedByValidityTimeSpec</com:validityStatus><com:validityTimeSpecification>"
            f"<com:overallStartTime>2026-04-{day:02d}T{hour:02d}:{rnd.randrange(60):02d}:00Z</com:overallStartTime>{end}"
            "</com:validityTimeSpecification></sit:validity>"
            f"<sit:generalPublicComment><sit:comment><com:values>{values}</com:values></sit:comment></sit:generalPublicComment>"
            '<sit:locationReference xsi:type="loc:SingleRoadLinearLocation">'
            f"<loc:coordinatesForDisplay><loc:latitude>{lat:.5f}</loc:latitude><loc:longitude>{lon:.5f}</loc:longitude></loc:coordinatesForDisplay>"
            "<loc:supplementaryPositionalDescription><loc:roadInformation>"
            f"<loc:roadName>{name}</loc:roadName><loc:roadNumber>{number}</loc:roadNumber></loc:roadInformation></loc:supplementaryPositionalDescription>"
            f'<loc:gmlLineString srsName="EPSG:4326"><loc:posList>{" ".join(points)}</loc:posList></loc:gmlLineString>'
            '<loc:alertCLinear xsi:type="loc:AlertCMethod2Linear"><loc:alertCLocationCountryCode>6</loc:alertCLocationCountryCode>'
            "<loc:alertCLocationTableNumber>17</loc:alertCLocationTableNumber><loc:alertCLocationTableVersion>1.11.44</loc:alertCLocationTableVersion>"
            f"<loc:alertCDirection><loc:alertCDirectionCoded>{rnd.choice(['positive', 'negative', 'both'])}</loc:alertCDirectionCoded></loc:alertCDirection>"
            f"<loc:alertCMethod2PrimaryPointLocation><loc:alertCLocation><loc:specificLocation>{first}</loc:specificLocation></loc:alertCLocation></loc:alertCMethod2PrimaryPointLocation>"
            f"<loc:alertCMethod2SecondaryPointLocation><loc:alertCLocation><loc:specificLocation>{second}</loc:specificLocation></loc:alertCLocation></loc:alertCMethod2SecondaryPointLocation>"
            "</loc:alertCLinear></sit:locationReference>"
            f"{detail_element}</sit:situationRecord>")


def main():
    size = float(sys.argv[1]) * 1_000_000
    out = sys.argv[2]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    rnd = random.Random(seed)
    records = 0
    with open(out, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                '<mc:messageContainer xmlns:mc="http://datex2.eu/schema/3/messageContainer" xmlns:sit="http://datex2.eu/schema/3/situation" '
                'xmlns:com="http://datex2.eu/schema/3/common" xmlns:loc="http://datex2.eu/schema/3/locationReferencing" '
                'xmlns:ex="http://datex2.eu/schema/3/exchangeInformation" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="3">'
                '<mc:payload xsi:type="sit:SituationPublication" lang="fi" modelBaseVersion="3">'
                "<com:publicationTime>2026-04-02T12:03:00.001346644Z</com:publicationTime>"
                "<com:publicationCreator><com:country>fi</com:country><com:nationalIdentifier>BENCH</com:nationalIdentifier></com:publicationCreator>")
        written = f.tell()
        situation = 0
        while written < size:
            situation += 1
            sid = f"BENCH{situation:08d}"
            parts = [f'<sit:situation id="{sid}"><sit:overallSeverity>unknown</sit:overallSeverity>'
                     "<sit:headerInformation><com:confidentiality>noRestriction</com:confidentiality>"
                     "<com:informationStatus>real</com:informationStatus></sit:headerInformation>"]
            for index in range(1, 2 + (rnd.random() < 0.3)):
                parts.append(record(rnd, sid, index))
                records += 1
            parts.append("</sit:situation>")
            chunk = "".join(parts)
            f.write(chunk)
            written += len(chunk.encode("utf-8"))
        f.write('</mc:payload><mc:exchangeInformation modelBaseVersion="3"><ex:exchangeContext>'
                "<ex:codedExchangeProtocol>snapshotPull</ex:codedExchangeProtocol><ex:exchangeSpecificationVersion>3</ex:exchangeSpecificationVersion>"
                "<ex:supplierOrCisRequester><ex:internationalIdentifier><com:country>fi</com:country><com:nationalIdentifier>BENCH</com:nationalIdentifier>"
                "</ex:internationalIdentifier></ex:supplierOrCisRequester></ex:exchangeContext><ex:dynamicInformation>"
                "<ex:exchangeStatus>online</ex:exchangeStatus><ex:messageGenerationTimestamp>2026-04-02T12:03:00Z</ex:messageGenerationTimestamp>"
                "</ex:dynamicInformation></mc:exchangeInformation></mc:messageContainer>")
    print(records)


if __name__ == "__main__":
    main()
