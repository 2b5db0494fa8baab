#!/usr/bin/env python3
"""Helper for Scripts/bench: JSON files, statistics, the results table and the targets.

Python 3 standard library only. Scripts/bench is the entry point; this file only
  bench_lib.py routes OUT.json PATH=FEED ...     loopback_server.py routes, one per feed
  bench_lib.py config OUT.json NAME URL         incident-scheduler configuration
  bench_lib.py report RESULTS.tsv [options]     print the table and the targets

RESULTS.tsv has one line per run, written by Scripts/bench:
  contender <TAB> records <TAB> round <TAB> ok|FAILED <TAB> wall_s <TAB> peak_rss_kib <TAB> note
`report` exits 1 when a run of the product itself failed, else 0 (slow is not a failure).
"""
import argparse
import json
import statistics
import sys

# Table order; the product's three modes first after the ceiling they are compared with.
CONTENDERS = [
    ("ceiling", "ceiling: C, libxml2 SAX + sqlite"),
    ("ingest", "product: ingest --file, fresh DB"),
    ("reingest", "product: re-ingest, all unchanged"),
    ("http", "product: run --once, loopback HTTP"),
    ("python", "peer: Python ElementTree"),
    ("xmlparser", "peer: Swift Foundation XMLParser"),
]
PRODUCT = {"ingest", "reingest", "http"}
LABEL = dict(CONTENDERS)
SHORT = {"ceiling": "ceiling", "ingest": "file ingest", "python": "Python peer", "xmlparser": "XMLParser peer"}
TARGET_SIZE = 300000
SMALL_SIZE = 30000


def cmd_routes(args):
    routes = {}
    for pair in args.pairs:
        path, _, feed = pair.partition("=")
        routes[path] = [{"status": 200, "bodyFile": feed, "headers": {"Content-Type": "text/xml"}}]
    with open(args.out, "w") as f:
        json.dump(routes, f, indent=1)


def cmd_config(args):
    config = {"sources": [{"name": args.name, "provider": "gits", "keyEnv": "GITS_SERVICE_KEY", "baseURL": args.url}]}
    with open(args.out, "w") as f:
        json.dump(config, f)


class Cell:
    """All runs of one contender on one feed size."""

    def __init__(self, key, size):
        self.key, self.size = key, size
        self.walls, self.rss, self.failures = [], [], []

    @property
    def ok(self):
        return self.walls and not self.failures

    @property
    def wall(self):
        return statistics.median(self.walls)

    @property
    def rate(self):
        return self.size / self.wall if self.wall > 0 else float("inf")

    @property
    def rss_mib(self):
        return statistics.median(self.rss) / 1024.0

    @property
    def spread(self):
        """(max - min) / median of the wall times, in percent: the noise of this cell."""
        return 100.0 * (max(self.walls) - min(self.walls)) / self.wall if self.wall > 0 else 0.0


def load(path):
    cells = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            key, size, rnd, status, wall, rss, note = (line.split("\t") + [""] * 7)[:7]
            cell = cells.setdefault((key, int(size)), Cell(key, int(size)))
            if status == "ok":
                cell.walls.append(float(wall))
                cell.rss.append(float(rss))
            else:
                cell.failures.append("round %s: %s" % (rnd, note or "failed"))
    return cells


def ratio(value, base):
    if base is None or base == 0:
        return "-"
    return "%.2f" % (value / base)


def print_table(cells, sizes, rounds):
    header = ["records", "contender", "wall s", "x ceil", "records/s", "x ceil", "RSS MiB", "x ceil", "spread", "runs"]
    rows = []
    notes = []
    for size in sizes:
        ceiling = cells.get(("ceiling", size))
        base = ceiling if ceiling is not None and ceiling.ok else None
        for key, label in CONTENDERS:
            cell = cells.get((key, size))
            if cell is None:
                continue
            runs = "%d/%d" % (len(cell.walls), len(cell.walls) + len(cell.failures))
            if not cell.ok:
                rows.append(["{:,}".format(size), label, "FAILED", "", "", "", "", "", "", runs])
                notes.extend("  %s, %s records, %s" % (label, "{:,}".format(size), f) for f in cell.failures)
                continue
            rows.append([
                "{:,}".format(size), label,
                "%.2f" % cell.wall, ratio(cell.wall, base and base.wall),
                "{:,.0f}".format(cell.rate), ratio(cell.rate, base and base.rate),
                "%.1f" % cell.rss_mib, ratio(cell.rss_mib, base and base.rss_mib),
                "%.0f%%" % cell.spread, runs,
            ])
        rows.append(None)
    if rows and rows[-1] is None:
        rows.pop()
    widths = [max(len(str(r[i])) for r in [header] + [r for r in rows if r]) for i in range(len(header))]
    left = {0, 1}

    def fmt(row):
        return "  ".join(str(v).ljust(w) if i in left else str(v).rjust(w) for i, (v, w) in enumerate(zip(row, widths))).rstrip()

    print(fmt(header))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("" if row is None else fmt(row))
    if notes:
        print()
        print("FAILED runs (never used in the figures above):")
        for n in notes:
            print(n)


def print_targets(cells):
    print()
    print("targets (on the {:,}-record feed; informational):".format(TARGET_SIZE))
    lines = []

    def get(key, size=TARGET_SIZE):
        cell = cells.get((key, size))
        return cell if cell is not None and cell.ok else None

    def check(name, limit_text, value_text, passed):
        lines.append((name, value_text, limit_text, "PASS" if passed else "MISS"))

    def missing(name, limit_text, *keys):
        failed = [LABEL[k] + ("" if s == TARGET_SIZE else " ({:,})".format(s)) for k, s in keys if get(k, s) is None]
        lines.append((name, "no data: " + "; ".join(failed) + " failed or not run", limit_text, "n/a"))

    def wall_ratio(name, key, base_key, limit):
        a, b = get(key), get(base_key)
        limit_text = "<= %.1f x %s" % (limit, SHORT[base_key])
        if a is None or b is None:
            return missing(name, limit_text, (key, TARGET_SIZE), (base_key, TARGET_SIZE))
        r = a.wall / b.wall
        check(name, limit_text, "%.2f s / %.2f s = %.2f x" % (a.wall, b.wall, r), r <= limit)

    wall_ratio("fresh ingest wall vs ceiling", "ingest", "ceiling", 1.5)
    wall_ratio("fresh ingest wall vs Python peer", "ingest", "python", 0.4)
    wall_ratio("fresh ingest wall vs XMLParser peer", "ingest", "xmlparser", 0.4)
    wall_ratio("re-ingest wall vs fresh ingest", "reingest", "ingest", 1.0)
    wall_ratio("loopback HTTP wall vs file ingest", "http", "ingest", 1.3)
    for key, mode in (("ingest", "fresh ingest"), ("reingest", "re-ingest"), ("http", "loopback HTTP")):
        cell = get(key)
        if cell is None:
            missing("peak RSS, " + mode, "<= 64 MiB", (key, TARGET_SIZE))
        else:
            check("peak RSS, " + mode, "<= 64 MiB", "%.1f MiB" % cell.rss_mib, cell.rss_mib <= 64.0)
    for key, mode in (("ingest", "fresh ingest"), ("reingest", "re-ingest"), ("http", "loopback HTTP")):
        big, small = get(key), get(key, SMALL_SIZE)
        name = "peak RSS growth 30k -> 300k, " + mode
        if big is None or small is None:
            missing(name, "<= +16 MiB", (key, TARGET_SIZE), (key, SMALL_SIZE))
        else:
            d = big.rss_mib - small.rss_mib
            check(name, "<= +16 MiB", "%.1f - %.1f = %+.1f MiB" % (big.rss_mib, small.rss_mib, d), d <= 16.0)
    for key, mode in (("ingest", "fresh ingest"), ("reingest", "re-ingest"), ("http", "loopback HTTP")):
        big, small = get(key), get(key, SMALL_SIZE)
        name = "records/s 300k vs 30k, " + mode
        if big is None or small is None:
            missing(name, "within 15 %", (key, TARGET_SIZE), (key, SMALL_SIZE))
        else:
            d = big.rate / small.rate - 1.0
            check(name, "within 15 %", "{:,.0f} vs {:,.0f} = {:+.1f} %".format(big.rate, small.rate, 100 * d), abs(d) <= 0.15)
    widths = [max(len(l[i]) for l in lines) for i in range(3)]
    for name, value, limit, verdict in lines:
        print("  %s  %s  %s  %s" % (verdict.ljust(4), name.ljust(widths[0]), limit.ljust(widths[2]), value))
    passed = sum(1 for l in lines if l[3] == "PASS")
    print("  %d of %d targets met" % (passed, len(lines)))


def cmd_report(args):
    cells = load(args.results)
    sizes = sorted({size for _, size in cells})
    print("TrafficIncidents ingest benchmark  |  %s  |  nproc %s  |  %s round%s  |  product %s" % (
        args.date, args.nproc, args.rounds, "" if args.rounds == "1" else "s", args.product))
    if args.machine:
        print(args.machine)
    print("medians over the rounds; x ceil = figure / the ceiling's figure on the same feed; "
          "spread = (max - min) / median wall")
    print()
    print_table(cells, sizes, args.rounds)
    if TARGET_SIZE in sizes:
        print_targets(cells)
    else:
        print()
        print("targets: not evaluated (they need the {:,}-record feed; --quick runs only {:,})".format(
            TARGET_SIZE, SMALL_SIZE))
    product_failed = any(cell.failures or not cell.walls for (key, _), cell in cells.items() if key in PRODUCT)
    return 1 if product_failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("routes")
    p.add_argument("out")
    p.add_argument("pairs", nargs="+", metavar="PATH=FEED")
    p.set_defaults(func=cmd_routes)
    p = sub.add_parser("config")
    p.add_argument("out")
    p.add_argument("name")
    p.add_argument("url")
    p.set_defaults(func=cmd_config)
    p = sub.add_parser("report")
    p.add_argument("results")
    p.add_argument("--rounds", default="?")
    p.add_argument("--nproc", default="?")
    p.add_argument("--date", default="?")
    p.add_argument("--product", default="?")
    p.add_argument("--machine", default="")
    p.set_defaults(func=cmd_report)
    args = parser.parse_args()
    sys.exit(args.func(args) or 0)


if __name__ == "__main__":
    main()
