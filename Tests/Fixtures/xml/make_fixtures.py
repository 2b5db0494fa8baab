#!/usr/bin/env python3
"""Writes the IncidentXML test fixtures in this folder (run from anywhere; output is committed).

The shapes follow the recorded real responses in ../../../../shared/feeds (GITS getIncidentInfo,
ITS eventInfo/cctvInfo) and the envelopes described in shared/DESIGN.md; the values are made up
in the same style. Legacy-encoded twins are produced with Python's codecs so that the bytes are
exactly what an EUC-KR / CP949 server sends.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

def write(name, text, encoding="utf-8", newline="\n"):
    data = text.replace("\n", newline).encode(encoding)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)

GITS_HEAD = ('<?xml version="1.0" encoding="{enc}" standalone="yes"?><ServiceResult><comMsgHeader/>'
             '<msgHeader><headerCd>0</headerCd><headerMsg>정상적으로 처리되었습니다.</headerMsg>'
             '<itemCount>{n}</itemCount></msgHeader><msgBody>')

def gits_item(route, link, spot, seq, confirm, start, est, end, lanes, desc, p1, p2, x, y):
    return ("<itemList>"
            f"<routeId>{route}</routeId><linkId>{link}</linkId><spotId>{spot}</spotId><regSeq>{seq}</regSeq>"
            f"<confirmDate>{confirm}</confirmDate><startDate>{start}</startDate><estEndDate>{est}</estEndDate>"
            f"<endDate>{end}</endDate><restrictType>{lanes}</restrictType><inciDesc>{desc}</inciDesc>"
            f"<inciPlace1>{p1}</inciPlace1><inciPlace2>{p2}</inciPlace2><coord_x>{x}</coord_x><coord_y>{y}</coord_y>"
            "</itemList>")

GITS_ITEMS = [
    gits_item("", "2260142300", "", "202303220001", "2023-03-22 07:10:00", "2023-03-22 07:05:00",
              "2023-03-22 09:00:00", "", "1차로", "[사고] 경부고속도로 (부산방향) 신갈JC → 수원IC  1차로 통제, 사고처리 &amp; 후속 정체",
              "경부고속도로", "(부산방향) 신갈JC → 수원IC", "127.10483210", "37.28590312345678"),
    gits_item("", "1040000103", "", "202303220002", "2023-03-22 08:00:00", "2023-03-22 08:00:00",
              "2023-03-22 18:00:00", "2023-03-22 17:30:00", "갓길", "[공사] 강변북로 (구리방향) 청담대교 → 잠실대교  갓길 통제,  도로보수",
              "강변북로", "(구리방향) 청담대교 → 잠실대교", "127.08203126", "37.52739696162846"),
    # Self-closing and empty-pair spellings of empty values, as both appear in ITS/GITS bodies.
    "<itemList><routeId/><linkId>2810749100</linkId><spotId></spotId><regSeq>202303220003</regSeq>"
    "<confirmDate>2023-03-22 09:15:00</confirmDate><startDate>2023-03-22 09:15:00</startDate>"
    "<estEndDate/><endDate/><restrictType>전차로</restrictType>"
    "<inciDesc>[도로폐쇄] 중부고속도로 (대전방향) 일죽IC → 대소JC  전차로 통제, A&amp;B 구간</inciDesc>"
    "<inciPlace1>중부고속도로</inciPlace1><inciPlace2>(대전방향) 일죽IC → 대소JC</inciPlace2>"
    "<coord_x>127.47621187</coord_x><coord_y>37.04978869497523</coord_y></itemList>",
]

def gits_multi(enc):
    return GITS_HEAD.format(enc=enc, n=len(GITS_ITEMS)) + "".join(GITS_ITEMS) + "</msgBody></ServiceResult>"

write("gits_multi.xml", gits_multi("UTF-8"))
# The same document, pretty-printed with CRLF and tabs between elements.
pretty = gits_multi("UTF-8").replace("><itemList>", ">\n\t<itemList>").replace("</itemList>", "\n\t</itemList>") \
    .replace("<msgBody>", "\n<msgBody>").replace("</msgBody>", "\n</msgBody>\n").replace("<msgHeader>", "\n<msgHeader>")
for tag in ["routeId", "linkId", "spotId", "regSeq", "confirmDate", "startDate", "estEndDate", "endDate",
            "restrictType", "inciDesc", "inciPlace1", "inciPlace2", "coord_x", "coord_y"]:
    pretty = pretty.replace(f"<{tag}>", f"\n\t\t<{tag}>").replace(f"<{tag}/>", f"\n\t\t<{tag}/>")
write("gits_multi_crlf.xml", pretty, newline="\r\n")
# Legacy-encoded twins: valid EUC-KR (only KS X 1001 syllables above), and CP949.
write("gits_multi_euckr.xml", gits_multi("EUC-KR"), encoding="euc_kr")
write("gits_multi_cp949.xml", gits_multi("CP949"), encoding="cp949")
# CP949-only syllables (똠, 햏) in a document labeled EUC-KR, as Korean servers send them.
write("cp949_labeled_euckr.xml",
      '<?xml version="1.0" encoding="EUC-KR"?><ServiceResult><msgBody><itemList><regSeq>1</regSeq>'
      '<inciDesc>똠방각하 햏 강변북로</inciDesc></itemList></msgBody></ServiceResult>', encoding="cp949")
write("cp949_labeled_utf8_twin.xml",
      '<?xml version="1.0" encoding="UTF-8"?><ServiceResult><msgBody><itemList><regSeq>1</regSeq>'
      '<inciDesc>똠방각하 햏 강변북로</inciDesc></itemList></msgBody></ServiceResult>')
# A GITS error envelope: non-zero headerCd, sent with HTTP 200, no records.
write("gits_error_99.xml",
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><ServiceResult><comMsgHeader/><msgHeader>'
      '<headerCd>99</headerCd><headerMsg>SERVICE KEY IS NOT REGISTERED ERROR.</headerMsg><itemCount>0</itemCount>'
      '</msgHeader><msgBody/></ServiceResult>')
# A GITS response cut off in the middle of the second record (a dropped connection).
full = gits_multi("UTF-8")
cut = full.index("<inciDesc>", full.index("202303220002"))
write("gits_truncated.xml", full[:cut + len("<inciDesc>[공사] 강변")])

EVENTS = [
    dict(type="고속도로", eventType="교통사고", eventDetailType="추돌사고", startDate="20221220093317", endDate="",
         coordX="127.4226", coordY="36.4137", linkId="1870199600", roadName="경부선", roadNo="1",
         roadDrcType="기점", lanesBlockType="", lanesBlocked="1차로 차단", message="(1차로)추돌사고처리중 <주의> & 서행"),
    dict(type="고속도로", eventType="공사", eventDetailType="작업", startDate="20221220111308", endDate="20221220170000",
         coordX="127.3158", coordY="36.2949", linkId="1860631500", roadName="호남지선", roadNo="251",
         roadDrcType="종점", lanesBlockType="", lanesBlocked="2차로 차단", message="(2차로)노면보수작업중"),
    dict(type="국도", eventType="기타돌발", eventDetailType="고장", startDate="20221220090802", endDate="",
         coordX="127.3164", coordY="36.2853", linkId="1850324300", roadName="국도1호선", roadNo="1",
         roadDrcType="시점방향", lanesBlockType="", lanesBlocked="", message="(갓길)소형화물차고장처리중"),
]
CDATA_FIELDS = {"roadName", "message", "eventType", "eventDetailType"}

def event_xml(e, tag, indent):
    parts = []
    for k, v in e.items():
        if v == "":
            parts.append(f"{indent}\t<{k}/>" if k != "endDate" else f"{indent}\t<{k}></{k}>")
        elif k in CDATA_FIELDS:
            parts.append(f"{indent}\t<{k}><![CDATA[{v}]]></{k}>")
        else:
            parts.append(f"{indent}\t<{k}>{v}</{k}>")
    return f"{indent}<{tag}>\n" + "\n".join(parts) + f"\n{indent}</{tag}>"

write("its_eventinfo_items.xml",
      '<?xml version="1.0" encoding="UTF-8"?>\n<response>\n\t<header>\n\t\t<resultCode>0</resultCode>\n'
      '\t\t<resultMsg>success</resultMsg>\n\t</header>\n\t<body>\n\t\t<totalCount>3</totalCount>\n\t\t<items>\n'
      + "\n".join(event_xml(e, "item", "\t\t\t") for e in EVENTS)
      + "\n\t\t</items>\n\t</body>\n</response>\n", newline="\r\n")
write("its_eventinfo_data.xml",
      '<?xml version="1.0" encoding="UTF-8"?>\n<response>\n\t<coordtype>1</coordtype>\n\t<datacount>3</datacount>\n'
      + "\n".join(event_xml(e, "data", "\t") for e in EVENTS)
      + "\n</response>\n", newline="\r\n")
write("its_eventinfo_error.xml",
      '<?xml version="1.0" encoding="UTF-8"?>\n<response>\n\t<header>\n\t\t<resultCode>4005</resultCode>\n'
      '\t\t<resultMsg>Unregistered key</resultMsg>\n\t</header>\n\t<body>\n\t\t<items/>\n\t</body>\n</response>\n')
