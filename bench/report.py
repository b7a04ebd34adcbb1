#!/usr/bin/env python3
"""report.py -- helpers of bench/run.sh: row converters, and the report (markdown, JSON, SVG).

Standard library only. Subcommands:
  heavy-page PAGE.json BYTES          the page with every record replaced by a ~BYTES nested one
  line ROWS.jsonl                     one-line summary of the last row (progress on stderr)
  rbench SECTION NAME NOTE CSVLINE    a redis-benchmark --csv result line as a row
  wrk SECTION NAME JSON [FOREIGN]     a wrk run (bench's Lua done() output) as a row
  busy ROWS.jsonl MAX KEY...          each "SECTION|NAME" whose last run had more than MAX % of
                                      the CPU taken by other work, as "NAME N%; ..." (empty: none)
  pgbench SECTION NAME NOTE SECONDS LOGS...   pgbench per-transaction logs as a row
  slowlog                             `redis-cli --json slowlog get` on stdin -> compact JSON
  webdis-check WEBDIS.json RANKD.json N   webdis' reply of the page script against rankd's page
                                      (same total, ids and records); exit 1 when they differ
  import SECTION NAME NOTE BASELINE ENTRIES MS CMDS REDIS_CPU_US SERVER_CPU_US FOREIGN
                                      a timed bulk import as a row (rate: entries/s)
  build META.json ROWS.jsonl OUTDIR   latest.json, latest.md, latest-delete.svg,
                                      latest-throughput.svg (written as *.tmp, then renamed)
  summary latest.json                 the short table the top-level README shows
"""
import json
import math
import os
import sys

# ---------------------------------------------------------------- row converters


def lat_block(n, rps, p50, p99, p999, mx, mean=None, non2xx=0):
    return {"n": n, "rps": rps, "non2xx": non2xx, "mean_ms": mean, "p50_ms": p50,
            "p99_ms": p99, "p999_ms": p999, "max_ms": mx}


def cmd_rbench(section, name, note, line, foreign=None):
    # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",
    # "p99_latency_ms","max_latency_ms"
    f = [x.strip('"') for x in line.strip().split('","')]
    f = [x.strip('"') for x in f]
    rps, avg, p50, p99, mx = float(f[1]), float(f[2]), float(f[4]), float(f[6]), float(f[7])
    row = {"section": section, "name": name, "kind": "redis-benchmark", "note": note,
           "command": f[0], "foreign_cpu_pct": None if foreign is None else int(foreign),
           "result": {"all": lat_block(None, rps, p50, p99, None, mx, avg)}}
    print(json.dumps(row))


def cmd_wrk(section, name, js, foreign=None):
    d = json.loads(js)
    secs = d["duration_us"] / 1e6
    row = {"section": section, "name": name, "kind": "wrk", "note": "wrk -t1, same URLs",
           "foreign_cpu_pct": None if foreign is None else int(foreign),
           "result": {"errors": d["errors"],
                      "all": lat_block(d["requests"], d["requests"] / secs, d["p50_us"] / 1000,
                                       d["p99_us"] / 1000, d["p999_us"] / 1000,
                                       d["max_us"] / 1000, d["mean_us"] / 1000)}}
    print(json.dumps(row))


def last_rows(rows):
    """Each (section, name)'s last run (a row run again replaces the earlier ones), in the order
    of their first runs, each with "runs": how many times it ran."""
    out, runs = {}, {}
    for r in rows:
        k = (r["section"], r["name"])
        runs[k] = runs.get(k, 0) + 1
        if k not in out:
            out[k] = None
        out[k] = r
    for k, r in out.items():
        r["runs"] = runs[k]
    return list(out.values())


def cmd_busy(rows_path, most, *keys):
    with open(rows_path) as fh:
        rows = last_rows([json.loads(x) for x in fh if x.strip()])
    by = {(r["section"], r["name"]): r for r in rows}
    busy = []
    for k in keys:
        sec, _, name = k.partition("|")
        r = by.get((sec, name))
        f = (r or {}).get("foreign_cpu_pct") or 0
        if f > int(most):
            busy.append(f"{name} {f}%")
    print("; ".join(busy))


def pct(sorted_v, q):
    if not sorted_v:
        return 0
    i = max(1, math.ceil(q * len(sorted_v)))
    return sorted_v[i - 1]


def cmd_pgbench(section, name, note, secs, logs):
    v = []
    for path in logs:
        with open(path) as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 3:
                    v.append(int(parts[2]) / 1000.0)  # latency, us -> ms
    v.sort()
    secs = float(secs)
    row = {"section": section, "name": name, "kind": "pgbench", "note": note,
           "result": {"all": lat_block(len(v), len(v) / secs, pct(v, .5), pct(v, .99),
                                       pct(v, .999), v[-1] if v else 0,
                                       sum(v) / len(v) if v else 0)}}
    print(json.dumps(row))


def cmd_slowlog():
    try:
        entries = json.load(sys.stdin)
    except ValueError:
        entries = []
    out = []
    for e in entries:
        args = e[3] if len(e) > 3 else []
        out.append({"us": e[2], "cmd": " ".join(str(a) for a in args[:2])[:60]})
    print(json.dumps({"entries": len(out), "max_us": max([x["us"] for x in out] or [0]),
                      "top": sorted(out, key=lambda x: -x["us"])[:3]}))


def cmd_webdis_check(wd_path, rk_path, n):
    n = int(n)
    with open(wd_path, "rb") as fh:
        wraw = fh.read()
    with open(rk_path, "rb") as fh:
        rraw = fh.read()
    problems = []
    try:
        w = json.loads(wraw)["EVALSHA"]
        r = json.loads(rraw)
        k = (len(w) - 1) // 3  # {total, id, stored, ..., record, ...}
        ids, recs = w[1:1 + 2 * k:2], w[1 + 2 * k:]
        if w[0] != n or r["total"] != n:
            problems.append(f"totals {w[0]} (webdis), {r['total']} (rankd), expected {n}")
        if len(ids) != 20 or len(recs) != 20 or len(w) != 61:
            problems.append(f"{len(w)} values in webdis' reply, expected 61 (20 entries)")
        if ids != [it["id"] for it in r["items"]]:
            problems.append("the ids differ")
        if [json.loads(x) if x else None for x in recs] != [it.get("record") for it in r["items"]]:
            problems.append("the records differ")
    except (ValueError, KeyError, TypeError, IndexError) as e:
        problems.append(f"unreadable reply: {e!r}: {wraw[:200]!r}")
    print(json.dumps({"ok": not problems, "problems": problems, "total": n, "entries": 20,
                      "webdis_bytes": len(wraw), "rankd_bytes": len(rraw),
                      "page": json.loads(rraw).get("page") if not problems else None}))
    sys.exit(1 if problems else 0)


def cmd_import(section, name, note, baseline, entries, ms, cmds, rcpu, scpu, foreign):
    entries, ms = int(entries), max(1, int(ms))
    row = {"section": section, "name": name, "kind": "import", "note": note,
           "baseline": baseline, "redis_cmds": int(cmds), "redis_cpu_us": int(rcpu),
           "server_cpu_us": int(scpu), "foreign_cpu_pct": int(foreign),
           "first_try_foreign_pct": None,
           "result": {"entries": entries, "ms": ms, "total_requests": entries, "errors": 0,
                      "all": lat_block(entries, entries * 1000.0 / ms, None, None, None, None)}}
    print(json.dumps(row))


def cmd_heavy_page(path, nbytes):
    nbytes = int(nbytes)
    with open(path) as fh:
        page = json.load(fh)
    for k, it in enumerate(page.get("items", [])):
        inv = []
        rec = {"name": "player-%07d" % k,
               "profile": {"country": "DE", "stats": {"level": 42, "wins": 17, "losses": 3}},
               "inventory": inv}
        while len(json.dumps(rec, separators=(",", ":"))) + 120 < nbytes:
            inv.append({"slot": len(inv), "item": {"kind": "sword", "tier": len(inv) % 5,
                                                   "enchant": ["fire", "ice"],
                                                   "durability": 0.5}})
        it["record"] = rec
    sys.stdout.write(json.dumps(page, separators=(",", ":"), ensure_ascii=False))


# ---------------------------------------------------------------- formatting


def fnum(x, nd=None):
    if x is None:
        return "n/a"
    if nd is None:
        ax = abs(x)
        nd = 3 if ax < 1 else 2 if ax < 10 else 1 if ax < 100 else 0
    return f"{x:,.{nd}f}"


def frps(x):
    return "n/a" if x is None else f"{x:,.0f}"


def line_of(row):
    r = row.get("result", {})
    a = r.get("all")
    if not a:
        return f"{row['section']:<14} {row['name']:<44} {json.dumps(r)[:100]}"
    extra = ""
    st = r.get("staleness")
    if st:
        extra = (f" wrong={st['wrong_share'] * 100:.1f}% lag_max={st['page1_lag_max_ms']:.0f}ms"
                 f" writes={r['by_class'].get('write', {}).get('rps', 0):.0f}/s")
    xc = r.get("xcache")
    if xc and (xc["hit"] + xc["miss"] + xc["stale"]):
        tot = xc["hit"] + xc["miss"] + xc["stale"] + xc["none"]
        extra += f" hit={100.0 * (xc['hit'] + xc['stale']) / tot:.1f}%"
    bad = (a.get("non2xx") or 0) + (r.get("errors") or 0)
    if bad:
        extra += f" non2xx/errors={bad}"
    if (row.get("foreign_cpu_pct") or 0) >= 5:
        extra += f" others={row['foreign_cpu_pct']}%"
    if row.get("kind") == "import":
        return (f"{row['section']:<14} {row['name'][:44]:<44} {frps(a['rps']):>9} entries/s"
                f"  ({r['entries']:,} in {r['ms']:,} ms){extra}")
    return (f"{row['section']:<14} {row['name'][:44]:<44} {frps(a['rps']):>9} req/s"
            f"  p50 {fnum(a['p50_ms'])}  p99 {fnum(a['p99_ms'])}  p99.9 {fnum(a['p999_ms'])}"
            f"  max {fnum(a['max_ms'])} ms{extra}")


def cmd_line(rows_path):
    with open(rows_path) as fh:
        rows = [json.loads(x) for x in fh if x.strip()]
    if rows:
        print("    " + line_of(rows[-1]))


# ---------------------------------------------------------------- report


def esc(s):
    return str(s).replace("|", "\\|")


def hit_pct(r):
    xc = r.get("xcache")
    if not xc:
        return None
    tot = sum(xc.values())
    if not tot or not (xc["hit"] + xc["miss"] + xc["stale"]):
        return None
    return 100.0 * (xc["hit"] + xc["stale"]) / tot


def per_req(total, row):
    """A counter taken around the whole loadgen run, per request of that run (warm-up too)."""
    n = row["result"].get("total_requests")
    if n is None:
        a = row["result"].get("all", {})
        n = (a.get("n") or 0) + sum(v.get("n", 0) for k, v in
                                   row["result"].get("by_class", {}).items()
                                   if k in ("write", "probe"))
    return None if not n or total is None else total / n


def other_load(row):
    f = row.get("foreign_cpu_pct")
    if f is None:
        return "n/a"
    s = f"{f}%"
    if row.get("runs", 1) > 1:
        s += f" (run {row['runs']} times)"
    if row.get("first_try_foreign_pct") is not None:
        s += f" (retried; {row['first_try_foreign_pct']}% at first)"
    return s


class Report:
    NGINX = "nginx static file, same page bytes"

    def __init__(self, meta, rows):
        self.meta, self.rows = meta, last_rows(rows)
        self.md = []
        ng = self.best("limits", self.NGINX)
        self.nginx = ng["result"]["all"]["rps"] if ng else None

    def best(self, section, name):
        """A baseline's row, or its wrk row when wrk got more from the same baseline."""
        a, w = self.find(section, name), self.find(section, name + " (wrk)")
        if not a or "all" not in a["result"]:
            return w
        if w and "all" in w["result"] and w["result"]["all"]["rps"] > a["result"]["all"]["rps"]:
            return w
        return a

    def ratio(self, rps):
        if not self.nginx or rps is None:
            return "n/a"
        return f"{rps / self.nginx:.2f}"

    def sec(self, name):
        return [r for r in self.rows if r["section"] == name]

    def find(self, section, name):
        return next((r for r in self.rows if r["section"] == section and r["name"] == name), None)

    def w(self, s=""):
        self.md.append(s)

    def table(self, head, lines):
        self.w("| " + " | ".join(head) + " |")
        left = ("row", "strategy", "case", "notes", "rankd short-ttl")
        self.w("|" + "|".join(" --- " if i == 0 or h in left else " ---: "
                              for i, h in enumerate(head)) + "|")
        for ln in lines:
            self.w("| " + " | ".join(esc(x) for x in ln) + " |")
        self.w()

    def std_cells(self, row):
        a = row["result"]["all"]
        return [frps(a["rps"]), self.ratio(a["rps"]), fnum(a["p50_ms"]), fnum(a["p99_ms"]),
                fnum(a["p999_ms"]), fnum(a["max_ms"]), other_load(row)]

    STD = ["req/s", "× nginx", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "other load"]

    def cost_cells(self, row):
        r = row["result"]
        hp = hit_pct(r)
        cmds = per_req(row.get("redis_cmds"), row)
        cpu = per_req(row.get("redis_cpu_us"), row)
        scpu = per_req(row.get("server_cpu_us"), row) if row.get("server_cpu_us") else None
        bad = (r["all"].get("non2xx") or 0) + (r.get("errors") or 0)
        return ["n/a" if hp is None else f"{hp:.1f}%", fnum(cmds, 1), fnum(cpu, 1),
                "n/a" if scpu is None else fnum(scpu, 0), str(bad)]

    COST = ["cache hits", "Redis cmds/req", "Redis CPU µs/req", "server CPU µs/req", "non-2xx"]

    def build(self):
        m = self.meta
        self.w("# rankd benchmark: latest results")
        self.w()
        self.w(f"Command: `{m['command']}` ({'quick variant' if m['quick'] else 'full run'}), "
               f"{m['date']}, {m['elapsed_s']} s wall time. rankd {m['rankd_commit']}.")
        self.w()
        self.w(f"Machine: {m['cpu']}, {m['cores']} cores, {m['mem_gb']} GB RAM, {m['os']}, "
               f"kernel {m['kernel']}; Redis {m['redis']}, nginx {m['nginx']}, PostgreSQL "
               f"{m['postgresql']}. Load average at start: {m['loadavg_start']}. Everything "
               f"(servers and load generator) shares these cores, on loopback. *Other load*: the "
               f"share of all cores that processes outside the bench used during the row (a row "
               f"above {15}% is run once more after the machine quiets down; both shown).")
        self.w()
        self.w(f"Load: `bench/loadgen` (one thread, epoll, keep-alive), {m['conns']} connections, "
               f"{m['warmup_s']} s warm-up then {m['duration_s']} s measured per row unless said; "
               f"every request's latency recorded (no histogram buckets). Page body "
               f"{m['page_bytes']} bytes (20 entries with ~110-byte records). `× nginx`: "
               f"throughput as a share of nginx serving the same bytes as a static file in this "
               f"run. `redis-benchmark` rows use {m['conns']} clients, one thread, and report no "
               f"p99.9.")
        self.w()
        self.headline()
        self.goals29()
        self.limits()
        self.hot()
        self.mix()
        self.writers()
        self.deep()
        self.delete()
        self.weight()
        self.memory()
        self.vs()
        self.notes()

    def headline(self):
        """The few numbers that answer the question, each from a table below."""
        out = []

        def rps(sec, name):
            row = self.find(sec, name)
            return row["result"]["all"] if row and "all" in row["result"] else None

        ng = self.nginx
        a, b = rps("hot", "rankd short-ttl (Redis-cached page)"), rps(
            "hot", "rankd short-ttl + in-process tier")
        c = rps("hot", "full-page cache")
        if ng and a and b and c:
            out.append(f"One hot page, {self.meta['conns']} connections: rankd's Redis-cached "
                       f"page {a['rps']:,.0f} req/s ({a['rps'] / ng:.2f} × nginx, p99 "
                       f"{fnum(a['p99_ms'])} ms), with the in-process tier {b['rps']:,.0f} "
                       f"({b['rps'] / ng:.2f} ×, p99 {fnum(b['p99_ms'])} ms); the full-page "
                       f"cache's plain GET {c['rps']:,.0f} ({c['rps'] / ng:.2f} ×).")
        for bname in ("b10k", "b1m"):
            rows = {r["name"]: r["result"]["all"] for r in self.sec("mix-" + bname)
                    if r["kind"] == "loadgen"}
            if {"live", "short-ttl", "full-page"} <= rows.keys():
                fp = rows["full-page"]
                parts = ", ".join(f"{k} {v['rps']:,.0f} req/s (p99 {fnum(v['p99_ms'])} ms)"
                                  for k, v in rows.items())
                out.append(f"Request mix on `{bname}`: {parts}. Full-page hits are fast (p50 "
                           f"{fnum(fp['p50_ms'])} ms) but every miss costs the source query.")
        p1, pn = rps("deep", "rankd live, page 1"), None
        for r in self.sec("deep"):
            if r["name"].startswith("rankd live, page ") and r["name"] != "rankd live, page 1":
                pn = (r["name"], r["result"]["all"])
        pg = [r for r in self.sec("deep") if r["name"].startswith("PostgreSQL")]
        if p1 and pn:
            s = (f"Deep paging: page 1 p50 {fnum(p1['p50_ms'])} ms, {pn[0].split(', ')[1]} p50 "
                 f"{fnum(pn[1]['p50_ms'])} ms through rankd")
            if len(pg) == 2:
                s += (f"; PostgreSQL OFFSET 0 p50 {fnum(pg[0]['result']['all']['p50_ms'])} ms, "
                      f"at the end p50 {fnum(pg[1]['result']['all']['p50_ms'])} ms")
            out.append(s + ".")
        dl = {r["name"]: r for r in self.sec("delete") if r["kind"] == "loadgen"}
        base = dl.get("no delete (baseline)")
        de = dl.get("DEL, Redis default config")
        un = next((v for k, v in dl.items() if k.startswith("rankd DELETE")), None)
        if base and de and un:
            out.append(f"Deleting a {self.meta['big_n']:,}-member board: a reader's max latency "
                       f"{fnum(base['result']['all']['max_ms'])} ms alone, "
                       f"{fnum(de['result']['all']['max_ms'])} ms under a plain `DEL`, "
                       f"{fnum(un['result']['all']['max_ms'])} ms under rankd's `DELETE` "
                       f"(`UNLINK`).")
        if out:
            self.w("## Headline")
            self.w()
            for s in out:
                self.w("- " + s)
            self.w()

    def limits(self):
        self.w("## 1. Physical limits")
        self.w()
        self.table(["row"] + self.STD + ["notes"],
                   [[r["name"]] + self.std_cells(r) + [r.get("note", "")]
                    for r in self.sec("limits") if "all" in r["result"]])

    def hot(self):
        rows = self.sec("hot")
        if not rows:
            return
        self.w(f"## 2. One hot page, {self.meta['conns']} connections")
        self.w()
        self.table(["strategy"] + self.STD + self.COST,
                   [[r["name"]] + self.std_cells(r) + self.cost_cells(r) for r in rows])
        goals = []
        red = self.find("hot", "rankd short-ttl (Redis-cached page)")
        l1 = self.find("hot", "rankd short-ttl + in-process tier")
        for row, want, label in ((red, 0.5, "Redis-cached page"), (l1, 0.8, "in-process tier")):
            if row and self.nginx:
                a = row["result"]["all"]
                ratio = a["rps"] / self.nginx
                ok = ratio >= want and a["p99_ms"] < 2
                goals.append(f"- {label}: {ratio:.2f} × nginx (goal ≥ {want}), p99 "
                             f"{fnum(a['p99_ms'])} ms (goal < 2 ms): "
                             f"**{'met' if ok else 'not met'}**")
        ng = self.find("limits", "nginx static file, same page bytes")
        if goals and ng:
            p99 = ng["result"]["all"]["p99_ms"]
            goals.append(f"- for reference, nginx itself (same bytes, same run): p99 {fnum(p99)} ms "
                         f"({'under' if p99 < 2 else 'over'} the 2 ms goal)")
        if goals:
            self.w("Goals of issue #3 (same run, same machine):")
            self.w()
            for g in goals:
                self.w(g)
            self.w()
        sweep = self.sec("hot-sweep")
        if sweep:
            self.w("The cached path by number of connections (same page, same rankd unless "
                   "said; rankd runs its default event threads, half the cores, unless "
                   "`--http-threads` says otherwise):")
            self.w()
            self.table(["rankd short-ttl"] + self.STD + self.COST,
                       [[r["name"]] + self.std_cells(r) + self.cost_cells(r) for r in sweep])

    def mix(self):
        for b, n in (("b10k", "10,000"), ("b1m", "1,000,000")):
            rows = [r for r in self.sec("mix-" + b) if r["kind"] == "loadgen"]
            if not rows:
                continue
            self.w(f"## 3. Strategies, request mix, {n}-member board (`{b}`)")
            self.w()
            self.w("Mix: 90% pages (80% of them pages 1-5, 20% uniform over all pages), 10% "
                   "member lookups (uniform over all members). `live`: page_ttl_ms 0. "
                   "`short-ttl`: 1 s page cache in Redis. `in-process tier`: plus "
                   f"`--l1-ttl-ms {self.meta['l1_ttl_ms']}`. `full-page`: bench/fullpage.c, "
                   f"whole responses cached 60 s, rebuilt on a miss after a "
                   f"{self.meta['fp_delay_ms']} ms source query. Redis commands count those run "
                   "inside scripts; Redis CPU is the main thread's.")
            self.w()
            self.table(["strategy"] + self.STD + self.COST,
                       [[r["name"]] + self.std_cells(r) + self.cost_cells(r) for r in rows])
            extra = []
            for r in rows:
                bc = r["result"].get("by_class", {})
                if "member" in bc and "page" in bc:
                    extra.append([r["name"], fnum(bc["page"]["p50_ms"]), fnum(bc["page"]["p99_ms"]),
                                  fnum(bc["member"]["p50_ms"]), fnum(bc["member"]["p99_ms"])])
            self.table(["strategy", "page p50 ms", "page p99 ms", "member p50 ms",
                        "member p99 ms"], extra)
            for r in self.sec("mix-" + b):
                if r["kind"] == "info":
                    res = r["result"]
                    st = res.get("stats")
                    s = (f"- {r['name']} at the end of its row: {res['keys']:,} keys, "
                         f"~{res['bytes'] / 1e6:.1f} MB in Redis")
                    if st:
                        s += (f"; {st['hits']:,} hits, {st['misses']:,} misses, "
                              f"{st['source_queries']:,} source queries (every miss rebuilds)")
                    self.w(s)
            self.w()

    def writers(self):
        secs = sorted({r["section"] for r in self.rows if r["section"].startswith("writers-")},
                      key=lambda s: float(s.split("-")[1]))
        if not secs:
            return
        self.w("## 4. Concurrent writers and measured staleness (`b10k`)")
        self.w()
        self.w("Writers `POST` score increments (`incr` by 1-100 on a random member) on their "
               "own connections, gated to the stated share of all requests; readers run the "
               "mix above. *Wrong pages*: 5% of served pages are compared, on arrival, with "
               "`ZRANGE` of the same positions in Redis (share with any id at a wrong rank; a "
               "write landing between the serve and the check counts too, which is the noise "
               "floor the `live` row shows). *Page-1 lag*: a probe member is set to a growing "
               "top score every 50 ms; for every served page 1, the time since the first probe "
               "write it does not show completed (0 when it shows the latest); for `full-page` it is "
               "bounded by the row's length, not by its 60 s TTL. Actual write share: writers "
               "that cannot keep up stay under the target share.")
        self.w()
        lines = []
        for s in secs:
            share = float(s.split("-")[1])
            for r in self.sec(s):
                res = r["result"]
                st = res.get("staleness", {})
                bc = res.get("by_class", {})
                nw = bc.get("write", {}).get("n", 0)
                nr = res["all"]["n"]
                lines.append([f"{share * 100:g}%", r["name"], frps(res["all"]["rps"]),
                              self.ratio(res["all"]["rps"]),
                              fnum(res["all"]["p99_ms"]), fnum(res["all"]["max_ms"]),
                              f"{100.0 * nw / (nw + nr):.1f}%" if nw + nr else "n/a",
                              fnum(bc.get("write", {}).get("p99_ms")),
                              f"{st.get('wrong_share', 0) * 100:.1f}% of {st.get('checked', 0):,}",
                              f"{st.get('page1_lag_p99_ms', 0):,.0f}",
                              f"{st.get('page1_lag_max_ms', 0):,.0f}",
                              fnum(per_req(r.get("server_cpu_us"), r), 0)
                              if r.get("server_cpu_us") else "n/a", other_load(r)])
        self.table(["writes", "strategy", "read req/s", "× nginx", "read p99 ms", "read max ms",
                    "actual write share", "write p99 ms", "wrong pages", "page-1 lag p99 ms",
                    "page-1 lag max ms", "server CPU µs/req", "other load"], lines)

    def deep(self):
        rows = self.sec("deep")
        if not rows:
            return
        self.w("## 5. Deep paging (`b1m`, live)")
        self.w()
        self.table(["row"] + self.STD + self.COST + ["notes"],
                   [[r["name"]] + self.std_cells(r) + self.cost_cells(r) + [r.get("note", "")]
                    for r in rows if "all" in r["result"]])
        dr = self.deep_ratio()
        if dr:
            self.w(f"Last page / page 1 through rankd (same connections, same run): p50 "
                   f"{dr['p50']:.2f}, mean {dr['mean']:.2f}, p99 {dr['p99']:.2f}, throughput "
                   f"{dr['rps']:.2f} (page {dr['last']:,} at {fnum(dr['a']['p50_ms'])} ms p50, "
                   f"page 1 at {fnum(dr['b']['p50_ms'])} ms).")
            self.w()
        for r in rows:
            if r["kind"] == "info":
                self.w(f"- {r['name']}: skipped: {r['result'].get('skipped')}")
        self.w()

    def deep_ratio(self):
        """Latency of the deepest rankd page row over page 1's (section 5)."""
        p1 = self.find("deep", "rankd live, page 1")
        pn = next((r for r in self.sec("deep") if r["name"].startswith("rankd live, page ")
                   and r is not p1), None)
        if not p1 or not pn:
            return None
        a, b = pn["result"]["all"], p1["result"]["all"]
        if not (b["p50_ms"] and b["mean_ms"] and b["p99_ms"] and b["rps"]):
            return None
        return {"last": int(pn["name"].rsplit(" ", 1)[1]), "a": a, "b": b,
                "p50": a["p50_ms"] / b["p50_ms"], "mean": a["mean_ms"] / b["mean_ms"],
                "p99": a["p99_ms"] / b["p99_ms"], "rps": a["rps"] / b["rps"],
                "foreign": max(p1.get("foreign_cpu_pct") or 0, pn.get("foreign_cpu_pct") or 0)}

    # ------------------------------------------------------------ issue #12

    VS_SECTIONS = (("vs-b200k", "200,000-member board (`b200k`, page_ttl_ms 0)"),
                   ("vs-b1m", "1,000,000-member board (`b1m`, page_ttl_ms 0)"),
                   ("vs-writes", "single-entry writes"),
                   ("vs-import", "bulk import of 200,000 entries"))

    def base_of(self, row):
        """(ratio, baseline row) of a row with a baseline in its own section (the higher of the
        bench's and wrk's figures for that baseline)."""
        name = row.get("baseline")
        if not name:
            return None, None
        b = self.best(row["section"], name)
        if not b or not b["result"].get("all", {}).get("rps") or not row["result"].get("all"):
            return None, b
        return row["result"]["all"]["rps"] / b["result"]["all"]["rps"], b

    def vs(self):
        if not any(self.sec(s) for s, _ in self.VS_SECTIONS):
            return
        m = self.meta
        self.w("## 9. Against webdis, redis-benchmark and redis-cli --pipe (issue #12)")
        self.w()
        self.w(f"Baselines measured in the same run, {m['conns']} keep-alive connections "
               f"({m.get('vs_warmup_s', '?')} s warm-up, {m.get('vs_duration_s', '?')} s "
               f"measured). *webdis* ({m.get('webdis', 'n/a')}, Debian's package, on the bench's "
               "Redis, with the settings that served it fastest, below) runs one `EVALSHA` of the bench's own page script: `ZCARD`, "
               "`ZRANGE` of 20 `WITHSCORES` and `HMGET` of their records on rankd's own keys, and "
               "renders Redis' reply as JSON (`GET /EVALSHA/<sha>/2/rankd%3A%7B<board>%7D%3Az/"
               "rankd%3Aitems/<page>`); the bench checks first that it answers 200 with the same "
               "total, ids and records as rankd. rankd's member lookups are compared with "
               "webdis' random pages of the same board. *redis-benchmark ZADD*: "
               f"`redis-benchmark -c {m['conns']} -r 1000000 zadd bench:zadd __rand_int__ "
               "m:__rand_int__`. *redis-cli --pipe*: one `ZADD` and one `HSET` per entry (RESP "
               "generated beforehand), the same entries and records that rankd imports from one "
               "NDJSON `POST`. `× baseline`: throughput (entries/s for imports) over the "
               "baseline row's. *server CPU µs/req*: utime + stime of the server process "
               "(rankd, or webdis on its rows) from `/proc/<pid>/stat` around the row, over the "
               "requests it completed, warm-up included (per entry for imports).")
        self.w()
        head = ["row", "req/s", "× baseline", "p50 ms", "p99 ms", "p99.9 ms", "max ms",
                "server CPU µs/req", "Redis cmds/req", "Redis CPU µs/req", "non-2xx",
                "other load", "notes"]
        for sec, title in self.VS_SECTIONS:
            rows = [r for r in self.sec(sec) if "all" in r.get("result", {})]
            if not rows:
                continue
            self.w(f"### {title}")
            self.w()
            lines = []
            for r in rows:
                a = r["result"]["all"]
                ratio, b = self.base_of(r)
                rx = "baseline" if not r.get("baseline") else "n/a" if ratio is None else \
                    f"{ratio:.2f}"
                cmds = per_req(r.get("redis_cmds"), r)
                rcpu = per_req(r.get("redis_cpu_us"), r)
                scpu = per_req(r.get("server_cpu_us"), r) if r.get("server_cpu_us") else None
                bad = (a.get("non2xx") or 0) + (r["result"].get("errors") or 0)
                rate = frps(a["rps"]) + (" entries/s" if r["kind"] == "import" else "")
                note = r.get("note", "")
                if r["kind"] == "import":
                    note = f"{r['result']['entries']:,} entries in {r['result']['ms']:,} ms; {note}"
                lines.append([r["name"], rate, rx, fnum(a["p50_ms"]), fnum(a["p99_ms"]),
                              fnum(a["p999_ms"]), fnum(a["max_ms"]),
                              "n/a" if scpu is None else fnum(scpu, 1), fnum(cmds, 1),
                              fnum(rcpu, 1), str(bad), other_load(r), note])
            self.table(head, lines)
            info = [r["result"] for r in self.sec(sec) if r["kind"] == "info"]
            for res in info:
                if "tried" in res:
                    self.w(f"- webdis ran with {res['threads']} threads and {res['pool_size']} "
                           "Redis connections each, the fastest of: " + ", ".join(
                               f"{t['threads']} threads × {t['pool_size']}: {t['rps']:,} req/s"
                               for t in res["tried"]) + " (1 s each on page 1 of b200k).")
                if "skipped" in res:
                    self.w(f"- webdis: skipped: {res['skipped']}")
                for c in res.get("checks", []):
                    self.w(f"- checked before timing: webdis answers 200 for page {c['page']:,} "
                           f"with rankd's total ({c['total']:,}), 20 ids and records; "
                           f"{c['webdis_bytes']:,} bytes against rankd's {c['rankd_bytes']:,}.")
            if info:
                self.w()

    def goals29(self):
        """The goals of issue #29, each with its ratio, its rows and their other load."""
        if not any(self.sec(s) for s, _ in self.VS_SECTIONS):
            return
        out = []
        most = 15

        def load(r):
            return (r or {}).get("foreign_cpu_pct") or 0

        def desc(r):
            """A row as the goal names it: its figure, its other load, its runs."""
            a = r["result"]["all"]
            unit = " entries/s" if r.get("kind") == "import" else " req/s"
            runs = f", {r['runs']} runs" if r.get("runs", 1) > 1 else ""
            return f"{r['name']} {a['rps']:,.0f}{unit} (other load {load(r)}%{runs})"

        def quiet(rows):
            busy = [r for r in rows if load(r) > most]
            if not busy:
                return f"every row under {most}% other load"
            return ("**could not get every row under " + f"{most}% other load**: " +
                    ", ".join(f"{r['name']} {load(r)}%" for r in busy) +
                    " (rankd's row busy: a lower bound; the baseline's: an upper bound)")

        def verdict(ok):
            return "n/a" if ok is None else "**met**" if ok else "**not met**"

        def ratio_goal(label, r, b, want):
            if not r or not b or "all" not in r["result"] or "all" not in b["result"]:
                out.append(f"- {label} ≥ {want} ×: n/a (rows missing)")
                return
            ratio = r["result"]["all"]["rps"] / b["result"]["all"]["rps"]
            out.append(f"- {label}: **{ratio:.2f} ×** (goal ≥ {want}: {verdict(ratio >= want)}); "
                       f"rows: {desc(r)} against {desc(b)}; {quiet([r, b])}")

        def vs(sec, name, want, label):
            r = self.find(sec, name)
            b = self.best(sec, r["baseline"]) if r and r.get("baseline") else None
            ratio_goal(label, r, b, want)

        for b, bn in (("b200k", "200k"), ("b1m", "1M")):
            vs("vs-" + b, "rankd live, page 1", 1.2, f"live page 1, {bn} board, × webdis")
            vs("vs-" + b, "rankd live, random pages", 1.2,
               f"random live pages, {bn} board, × webdis")
            vs("vs-" + b, "rankd member lookup, random ids", 1.5,
               f"member lookup, {bn} board, × webdis' random pages")
        ng = self.best("limits", self.NGINX)
        ratio_goal("Redis-cached hot page × nginx", self.find(
            "hot", "rankd short-ttl (Redis-cached page)"), ng, 1.0)
        ratio_goal("in-process tier × nginx", self.find(
            "hot", "rankd short-ttl + in-process tier"), ng, 1.3)
        vs("vs-writes", "rankd POST one entry (set), random ids", 0.5,
           "single-entry writes × redis-benchmark ZADD")
        vs("vs-import", "rankd NDJSON import (set)", 1.0, "NDJSON import × redis-cli --pipe")

        def cpu_goal(label, picks, want):
            vals, rows = [], []
            for sec, name, short in picks:
                r = self.find(sec, name)
                v = per_req(r.get("server_cpu_us"), r) if r and r.get("server_cpu_us") else None
                if v is not None:
                    vals.append((short, v, r))
                    rows.append(r)
            if not vals:
                out.append(f"- rankd CPU per request, {label}: n/a (rows missing)")
                return
            ok = all(v <= want for _, v, _ in vals)
            out.append(f"- rankd CPU per request, {label}: "
                       + ", ".join(f"{s} **{v:.1f} µs** (other load {load(r)}%)"
                                   for s, v, r in vals)
                       + f" (goal ≤ {want} µs: {verdict(ok)}); {quiet(rows)}")

        cpu_goal("live page", [("vs-b200k", "rankd live, page 1", "200k page 1"),
                               ("vs-b200k", "rankd live, random pages", "200k random"),
                               ("vs-b1m", "rankd live, page 1", "1M page 1"),
                               ("vs-b1m", "rankd live, random pages", "1M random")], 20)
        cpu_goal("member lookup", [("vs-b200k", "rankd member lookup, random ids", "200k"),
                                   ("vs-b1m", "rankd member lookup, random ids", "1M")], 15)
        cpu_goal("cache hit", [("hot", "rankd short-ttl (Redis-cached page)",
                                "hot page, short-ttl")], 12)
        dr = self.deep_ratio()
        if dr:
            out.append(f"- page {dr['last']:,} / page 1 on the 1M board (p50, rankd live): "
                       f"{fnum(dr['a']['p50_ms'])} / {fnum(dr['b']['p50_ms'])} ms = "
                       f"**{dr['p50']:.2f}** (goal ≤ 1.1: {verdict(dr['p50'] <= 1.1)}; mean "
                       f"{dr['mean']:.2f}, p99 {dr['p99']:.2f}; other load {dr['foreign']}%)")
        else:
            out.append("- page 50,000 / page 1 ≤ 1.1: n/a (deep rows missing)")
        self.w("## Goals of issue #29 (same run, same machine)")
        self.w()
        self.w("Each ratio is rankd's row over its baseline's row of the same run (section 9, the "
               "hot page from sections 1-2, the deep ratio from section 5). A baseline's figure is "
               "the higher of `bench/loadgen`'s and wrk's (`(wrk)` rows). *Other load*: the share "
               f"of the machine's CPU that processes outside the bench took during the row; a "
               f"ratio whose rows had more than {most}% is run again (baseline, then rankd) "
               "while time allows, and the goal says when it stayed busy. A miss's top-level "
               "Redis commands and a hit's are counted with MONITOR in the tests "
               "(`request_path`).")
        self.w()
        for line in out:
            self.w(line)
        self.w()

    def delete(self):
        rows = [r for r in self.sec("delete") if r["kind"] == "loadgen"]
        if not rows:
            return
        n = self.meta["big_n"]
        self.w(f"## 6. Big delete: a reader on `b1m` while a {n:,}-member board is deleted")
        self.w()
        self.w("Reader: 4 connections paced at 1,000 requests/s in total (latency counted from "
               "each request's scheduled time, so a stall also charges the requests it held "
               "back), the mix above on `b1m` with page_ttl_ms 0 so that every read reaches "
               "Redis. The delete starts ~2 s into the reader. Chart: `latest-delete.svg`.")
        self.w()
        lines = []
        for r in rows:
            a = r["result"]["all"]
            op = r["op_end_wall_ms"] - r["op_start_wall_ms"]
            sl = r.get("slowlog", {})
            lines.append([r["name"], f"{op:,}" if "baseline" not in r["name"] else "",
                          fnum(a["p50_ms"]), fnum(a["p99_ms"]), fnum(a["p999_ms"]),
                          fnum(a["max_ms"]), str(a["non2xx"] + r["result"].get("errors", 0)),
                          f"{sl.get('max_us', 0) / 1000:,.1f} ({sl.get('entries', 0)})",
                          other_load(r), r.get("note", "")])
        self.table(["case", "operation ms (client)", "reader p50 ms", "p99 ms", "p99.9 ms",
                    "max ms", "non-2xx", "slowlog max ms (entries)", "other load", "notes"],
                   lines)
        base = next((r for r in rows if "baseline" in r["name"]), None)
        rk = next((r for r in rows if r["name"].startswith("rankd DELETE")), None)
        if base and rk:
            d = rk["result"]["all"]["max_ms"] - base["result"]["all"]["max_ms"]
            self.w(f"Goal of issue #5: rankd's delete adds under 2 ms to the reader's max: "
                   f"{fnum(d)} ms over the baseline: **{'met' if d < 2 else 'not met'}**.")
            self.w()
        for r in self.sec("delete"):
            if r["kind"] == "info":
                self.w(f"- {r['name']}: skipped: {r['result'].get('skipped')}")
                self.w()

    def weight(self):
        rows = self.sec("weight")
        if not rows:
            return
        self.w("## 7. Record weight")
        self.w()
        self.table(["row"] + self.STD + ["notes"],
                   [[r["name"]] + self.std_cells(r) + [r.get("note", "")]
                    for r in rows if "all" in r["result"]])
        for r in rows:
            if r["kind"] == "info":
                res = r["result"]
                self.w(f"- {r['name']}: HTTP {res.get('status')}: `{res.get('reply', '')[:160]}`")
        self.w("- rankd keeps records flat and at most 1 KiB, so the 10 KB nested case is "
               "measured on Redis alone (`HMGET`) and as nginx bytes on the wire.")
        self.w()

    def memory(self):
        rows = self.sec("memory")
        if not rows:
            return
        self.w("## 8. Memory")
        self.w()
        for r in rows:
            res = r["result"]
            if "zset_bytes" in res:
                n = res["members"]
                self.w(f"- Sorted set: {res['zset_bytes'] / n:.0f} bytes per member "
                       f"(`MEMORY USAGE` of the 1M set: {res['zset_bytes'] / 1e6:.1f} MB).")
                self.w(f"- Records hash: {res['records_bytes'] / res['records']:.0f} bytes per "
                       f"record ({res['records']:,} records, {res['records_bytes'] / 1e6:.1f} MB).")
                self.w(f"- Together: {(res['zset_bytes'] + res['records_bytes']) / n:.0f} bytes "
                       f"per member; `used_memory` grew by {res['used_memory_delta'] / n:.0f} "
                       f"bytes per member while the 1M board loaded.")
            elif "metrics" in res and res["metrics"]:
                self.w(f"- In-process tier counters after the run: `{res['metrics']}`")
        for b in ("b10k", "b1m"):
            for r in self.sec("mix-" + b):
                if r["kind"] == "info":
                    res = r["result"]
                    per = res["bytes"] / res["keys"] if res["keys"] else 0
                    self.w(f"- {b} {r['name']}: {res['keys']:,} keys, {res['bytes'] / 1e6:.2f} MB "
                           f"({per:,.0f} bytes per cached response) at the end of its row.")
        self.w()

    def notes(self):
        m = self.meta
        self.w("## Notes")
        self.w()
        imp = m.get("import", {})
        if imp.get("ms"):
            self.w(f"- `b10k` was loaded through rankd's NDJSON endpoint: {imp['entries']:,} "
                   f"entries ({imp['bytes'] / 1e6:.1f} MB) in {imp['ms']:,} ms "
                   f"({imp['entries'] / imp['ms'] * 1000:,.0f} entries/s). `b1m` was written "
                   f"directly in rankd's key format by `bench/gen` + `redis-cli --pipe` in "
                   f"{m['direct_load']['ms']:,} ms and checked through rankd.")
        if m["quick"]:
            self.w("- Quick variant: 2 s rows (section 9 too), one writer share (10%), a "
                   "1M-member board for the delete, no PostgreSQL, no reset/trim cases. Run "
                   "`make bench` for the full set.")
        self.w("- Redis runs `schema/redis.conf` with persistence off (`appendonly no`): an AOF "
               "rewrite fork during a row would be noise, and persistence is not measured.")
        self.w()


# ---------------------------------------------------------------- SVG

COLORS = ["#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b"]


def svg_text(x, y, s, size=12, anchor="start", color="#222", weight="normal"):
    s = str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{color}" font-weight="{weight}">{s}</text>')


def delete_svg(meta, rows):
    rows = [r for r in rows if r["section"] == "delete" and r["kind"] == "loadgen"
            and r.get("timeline") and os.path.exists(r["timeline"])]
    if not rows:
        return None
    W, H, L, R, T, B = 960, 460, 70, 250, 40, 50
    pw, ph = W - L - R, H - T - B
    series, tmax, lmax = [], 1.0, 1.0
    bucket = 0.02  # s
    for r in rows:
        pts, bad = {}, []
        with open(r["timeline"]) as fh:
            for line in fh:
                p = line.split(",")
                if len(p) < 3:
                    continue
                t, lat, st = float(p[0]) / 1000, int(p[1]) / 1000.0, int(p[2])
                k = int(t / bucket)
                pts[k] = max(pts.get(k, 0), lat)
                if not 200 <= st < 300:
                    bad.append((t, lat))
                tmax, lmax = max(tmax, t), max(lmax, lat)
        op = (r["op_start_wall_ms"] - r["result"]["start_wall_ms"]) / 1000
        series.append((r, sorted(pts.items()), bad, op))
    lo, hi = 0.05, 10 ** math.ceil(math.log10(max(lmax, 10)))

    def X(t):
        return L + pw * t / tmax

    def Y(v):
        v = min(max(v, lo), hi)
        return T + ph * (1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'viewBox="0 0 {W} {H}" font-family="sans-serif">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         svg_text(L, 22, f"Reader latency while a {meta['big_n']:,}-member sorted set is deleted "
                  "(max per 20 ms, log scale)", 15, weight="bold")]
    e = math.floor(math.log10(lo))
    while 10 ** e <= hi * 1.001:
        for k in (1, 2, 5):
            v = k * 10 ** e
            if lo * 0.999 <= v <= hi * 1.001:
                y = Y(v)
                o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{L + pw}" y2="{y:.1f}" '
                         f'stroke="{"#ccc" if k == 1 else "#eee"}"/>')
                o.append(svg_text(L - 6, y + 4, f"{v:g} ms", 11 if k == 1 else 9, "end",
                                  "#222" if k == 1 else "#888"))
        e += 1
    step = 0.5 if tmax <= 6 else 1 if tmax <= 15 else 5
    t = 0.0
    while t <= tmax + 1e-9:
        o.append(f'<line x1="{X(t):.1f}" y1="{T + ph}" x2="{X(t):.1f}" y2="{T + ph + 5}" '
                 f'stroke="#444"/>')
        o.append(svg_text(X(t), T + ph + 18, f"{t:g}", 11, "middle"))
        t += step
    o.append(svg_text(L + pw / 2, H - 10, "seconds since the reader started", 12, "middle"))
    o.append(f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
    for i, (r, pts, bad, op) in enumerate(series):
        c = COLORS[i % len(COLORS)]
        path = " ".join(f"{X((k + 0.5) * bucket):.1f},{Y(v):.1f}" for k, v in pts)
        key = r["name"].startswith(("DEL, Redis default", "rankd DELETE"))
        o.append(f'<polyline points="{path}" fill="none" stroke="{c}" '
                 f'stroke-width="{1.8 if key else 0.9}" opacity="{0.95 if key else 0.6}"/>')
        if "baseline" not in r["name"]:
            o.append(f'<line x1="{X(op):.1f}" y1="{T}" x2="{X(op):.1f}" y2="{T + ph}" stroke="{c}" '
                     f'stroke-dasharray="4,3"/>')
        for bt, bl in bad[:200]:
            o.append(f'<text x="{X(bt):.1f}" y="{Y(bl) + 4:.1f}" font-size="11" fill="{c}" '
                     f'text-anchor="middle">×</text>')
        a = r["result"]["all"]
        ly = T + 14 + i * 44
        o.append(f'<line x1="{L + pw + 12}" y1="{ly - 4}" x2="{L + pw + 32}" y2="{ly - 4}" '
                 f'stroke="{c}" stroke-width="3"/>')
        o.append(svg_text(L + pw + 38, ly, r["name"][:34], 11))
        o.append(svg_text(L + pw + 38, ly + 15, f"max {fnum(a['max_ms'])} ms, p99.9 "
                          f"{fnum(a['p999_ms'])} ms", 11, color="#555"))
        if a["non2xx"] or r["result"].get("errors"):
            o.append(svg_text(L + pw + 38, ly + 29, f"non-2xx: {a['non2xx']} (×)", 11,
                              color="#555"))
    o.append(svg_text(L + pw + 12, T + ph - 4, "dashed: the delete starts", 11, color="#555"))
    o.append("</svg>")
    return "\n".join(o)


def throughput_svg(meta, rows, nginx):
    groups = [("Physical limits", "limits"), ("One hot page", "hot"),
              ("Mix, 10k board", "mix-b10k"), ("Mix, 1M board", "mix-b1m"),
              ("Against webdis, 1M board", "vs-b1m")]
    items = []
    for title, sec in groups:
        rs = [r for r in rows if r["section"] == sec and "all" in r.get("result", {})
              and r["result"]["all"].get("rps")]
        if rs:
            items.append(("h", title, None))
            items += [("b", r["name"], r["result"]["all"]["rps"]) for r in rs]
    if not items:
        return None
    W, L, R, T, bh = 960, 330, 200, 40, 20
    H = T + 20 + sum(26 if k == "h" else bh + 4 for k, _, _ in items)
    vmax = max(v for k, _, v in items if k == "b")
    pw = W - L - R
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'viewBox="0 0 {W} {H}" font-family="sans-serif">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         svg_text(10, 22, f"Throughput by strategy (requests/s, {meta['conns']} connections; "
                  "ratio to nginx static)", 15, weight="bold")]
    y = T
    ci = -1
    for k, name, v in items:
        if k == "h":
            ci += 1
            y += 18
            o.append(svg_text(10, y, name, 13, weight="bold"))
            y += 8
            continue
        c = COLORS[ci % len(COLORS)]
        wbar = max(1.0, pw * v / vmax)
        o.append(svg_text(L - 8, y + bh - 6, name[:48], 11, "end"))
        o.append(f'<rect x="{L}" y="{y}" width="{wbar:.1f}" height="{bh}" fill="{c}" '
                 f'opacity="0.8"/>')
        lab = f"{v:,.0f}" + (f"  ({v / nginx:.2f}×)" if nginx else "")
        o.append(svg_text(L + wbar + 6, y + bh - 6, lab, 11))
        y += bh + 4
    o.append("</svg>")
    return "\n".join(o)


def write_atomic(path, text):
    with open(path + ".tmp", "w") as fh:
        fh.write(text)
    os.replace(path + ".tmp", path)


def cmd_build(meta_path, rows_path, out):
    with open(meta_path) as fh:
        meta = json.load(fh)
    with open(rows_path) as fh:
        rows = [json.loads(x) for x in fh if x.strip()]
    rep = Report(meta, rows)
    rep.build()
    dsvg = delete_svg(meta, rows)
    tsvg = throughput_svg(meta, rows, rep.nginx)
    charts = []
    if tsvg:
        write_atomic(os.path.join(out, "latest-throughput.svg"), tsvg)
        charts.append("![throughput by strategy](latest-throughput.svg)")
    if dsvg:
        write_atomic(os.path.join(out, "latest-delete.svg"), dsvg)
        charts.append("![reader latency during the big delete](latest-delete.svg)")
    md = "\n".join(rep.md).rstrip() + "\n"
    if charts:
        md += "\n## Charts\n\n" + "\n\n".join(charts) + "\n"
    write_atomic(os.path.join(out, "latest.md"), md)
    # timelines are summarized in the chart; the JSON keeps every number but not the raw points
    for r in rows:
        r.pop("timeline", None)
    write_atomic(os.path.join(out, "latest.json"),
                 json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")


def cmd_summary(path):
    """The key rows of a run as one short markdown table (for the top-level README)."""
    with open(path) as fh:
        d = json.load(fh)
    rep = Report(d["meta"], d["rows"])
    picks = [("limits", "nginx static file, same page bytes", "nginx, static file of the page"),
             ("limits", "redis-benchmark GET of a page-sized value", "redis-benchmark GET, page-sized"),
             ("hot", "rankd short-ttl (Redis-cached page)", "hot page: rankd, Redis-cached"),
             ("hot", "rankd short-ttl + in-process tier", "hot page: rankd + in-process tier"),
             ("hot", "full-page cache", "hot page: full-page cache"),
             ("mix-b10k", "live", "10k mix: rankd live"),
             ("mix-b10k", "short-ttl", "10k mix: rankd short-ttl"),
             ("mix-b10k", "short-ttl + in-process tier", "10k mix: rankd + in-process tier"),
             ("mix-b10k", "full-page", "10k mix: full-page (250 ms source)"),
             ("mix-b1m", "live", "1M mix: rankd live"),
             ("mix-b1m", "short-ttl", "1M mix: rankd short-ttl"),
             ("mix-b1m", "full-page", "1M mix: full-page (250 ms source)"),
             ("vs-b1m", "webdis EVALSHA, page 1", "1M page 1: webdis EVALSHA"),
             ("vs-b1m", "rankd live, page 1", "1M page 1: rankd live"),
             ("vs-b1m", "webdis EVALSHA, random pages", "1M random pages: webdis EVALSHA"),
             ("vs-b1m", "rankd live, random pages", "1M random pages: rankd live"),
             ("vs-b1m", "rankd member lookup, random ids", "1M member lookup: rankd")]
    rows = []
    for sec, name, label in picks:
        r = rep.find(sec, name)
        if r and "all" in r["result"]:
            a = r["result"]["all"]
            rows.append([label, frps(a["rps"]), rep.ratio(a["rps"]), fnum(a["p50_ms"]),
                         fnum(a["p99_ms"]), fnum(a["p999_ms"]), fnum(a["max_ms"])])
    for r in rep.sec("deep"):
        if "all" in r["result"] and r["kind"] != "redis-benchmark":
            a = r["result"]["all"]
            rows.append([f"deep paging: {r['name']}", frps(a["rps"]), rep.ratio(a["rps"]),
                         fnum(a["p50_ms"]), fnum(a["p99_ms"]), fnum(a["p999_ms"]),
                         fnum(a["max_ms"])])
    for r in rep.sec("delete"):
        if r["kind"] == "loadgen" and not r["name"].startswith("rankd trim"):
            a = r["result"]["all"]
            rows.append([f"reader during big delete: {r['name']}", frps(a["rps"]), "",
                         fnum(a["p50_ms"]), fnum(a["p99_ms"]), fnum(a["p999_ms"]),
                         fnum(a["max_ms"])])
    rep.table(["row", "req/s", "× nginx", "p50 ms", "p99 ms", "p99.9 ms", "max ms"], rows)
    print("\n".join(rep.md))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, a = argv[1], argv[2:]
    if cmd == "heavy-page":
        cmd_heavy_page(*a)
    elif cmd == "line":
        cmd_line(*a)
    elif cmd == "rbench":
        cmd_rbench(*a)
    elif cmd == "wrk":
        cmd_wrk(*a)
    elif cmd == "busy":
        cmd_busy(*a)
    elif cmd == "pgbench":
        cmd_pgbench(a[0], a[1], a[2], a[3], a[4:])
    elif cmd == "slowlog":
        cmd_slowlog()
    elif cmd == "webdis-check":
        cmd_webdis_check(*a)
    elif cmd == "import":
        cmd_import(*a)
    elif cmd == "build":
        cmd_build(*a)
    elif cmd == "summary":
        cmd_summary(*a)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
