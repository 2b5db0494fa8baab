#!/usr/bin/env python3
"""The client side of Scripts/bench-serve (standard library only).

usage: bench_serve.py latency NAME URL_TEMPLATE CLIENTS REQUESTS   p50/p95 of URL_TEMPLATE (with {minlon} {minlat} {maxlon}
                                                                   {maxlat} {from} {until}) from CLIENTS threads
       bench_serve.py walk NAME START_URL KIND [PID]                a walk through next links (KIND: ogc or datasette);
                                                                   features/s, and with PID the peak RSS of that process
Prints one JSON line per measurement.
"""
import json, random, statistics, sys, threading, time, urllib.request


def fetch(url):
    with urllib.request.urlopen(url, timeout=600) as response:
        return response.status, response.read()


def latency(name, template, clients, requests, max_seconds=300):
    """p50/p95 over REQUESTS requests, or over those answered in max_seconds (a slow peer: pygeoapi
    reads a million-row GeoPackage without a spatial index), which the line says as "stopped_after_s"."""
    def boxes(rng, count):
        # A box of about 20 km around a random point of the generated feeds' area (Korea), and a
        # day-long interval within their ten days of starts.
        made = []
        for _ in range(count):
            lon, lat = rng.uniform(126.2, 129.2), rng.uniform(34.5, 38.0)
            day = rng.randint(0, 9)
            made.append(template.format(minlon=f"{lon:.4f}", minlat=f"{lat:.4f}", maxlon=f"{lon + 0.2:.4f}", maxlat=f"{lat + 0.2:.4f}",
                                        **{"from": f"2023-03-{day + 1:02d}T00:00:00Z", "until": f"2023-03-{day + 2:02d}T00:00:00Z"}))
        return made
    urls = boxes(random.Random(21), requests)
    times, failures, lock = [], [], threading.Lock()
    queue = list(urls)

    def client():
        while True:
            with lock:
                if not queue or time.perf_counter() - wall > max_seconds:
                    return
                url = queue.pop()
            start = time.perf_counter()
            try:
                status, body = fetch(url)
                ok = status == 200 and len(body) > 0
            except Exception as error:  # a failure is reported, never timed
                ok, status = False, repr(error)[:200]
            elapsed = time.perf_counter() - start
            with lock:
                (times.append(elapsed) if ok else failures.append(str(status)))

    # Warm-up, not timed: 100 other boxes and days, so that each server answers from the
    # operating system's page cache as a server that has been running does (the first requests
    # of a server started on a cold file read it from disk: p95 84 ms, against 5 ms at p50).
    for url in boxes(random.Random(22), 100):
        fetch(url)
    wall = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads: t.start()
    for t in threads: t.join()
    wall = time.perf_counter() - wall
    times.sort()
    q = statistics.quantiles(times, n=100) if len(times) >= 2 else [float("nan")] * 99
    print(json.dumps({"measure": "latency", "name": name, "ok": len(times), "failed": len(failures),
                      "p50_ms": round(q[49] * 1000, 1), "p95_ms": round(q[94] * 1000, 1),
                      "requests_per_s": round(len(times) / wall, 1), "failures": failures[:3],
                      **({"stopped_after_s": round(wall)} if queue else {})}), flush=True)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def walk(name, url, kind, pid=None, max_seconds=300):
    features, pages, start = 0, 0, time.perf_counter()
    rss = []
    while url:
        status, body = fetch(url)
        document = json.loads(body)
        pages += 1
        if kind == "ogc":
            features += len(document["features"])
            url = next((link["href"] for link in document.get("links", []) if link.get("rel") == "next"), None)
        else:  # datasette's table JSON: rows and next_url
            features += len(document["rows"])
            url = document.get("next_url")
        if pid:
            rss.append(rss_kib(pid))
        if time.perf_counter() - start > max_seconds:
            break
    seconds = time.perf_counter() - start
    result = {"measure": "walk", "name": name, "features": features, "pages": pages, "seconds": round(seconds, 2),
              "features_per_s": round(features / seconds), "complete": url is None}
    if rss:
        result.update({"peak_rss_mib": round(max(rss) / 1024, 1), "rss_after_first_page_mib": round(rss[0] / 1024, 1)})
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "latency":
        latency(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "walk":
        walk(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else None)
    else:
        sys.exit("usage: see the docstring")
