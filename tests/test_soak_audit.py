"""Soak: two annotator PROCESSES label the same 500-turn audit at the same time.

Each process (an annotator with an account) loops next_turn_for -> submit_label until its queue
is empty. Every turn has two seats, so both must land all 500 labels: 1,000
submitted labels, every turn labelled by both, nothing lost to "database is
locked" or to a lost claim race. Runs on SQLite (WAL) and on PostgreSQL.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

from test_db_support import db_url, make_audit, pg_url  # noqa: F401  (fixtures)

import db
from db.session import dispose_all

REPO = Path(__file__).resolve().parents[1]
N_TURNS = 500

WORKER = textwrap.dedent("""
    import json, sys, time, zlib
    sys.path.insert(0, sys.argv[1])
    from audit import assignment as asg
    url, who, start = sys.argv[2], sys.argv[3], float(sys.argv[4])
    while time.time() < start:
        time.sleep(0.005)
    n = 0
    t0 = time.time()
    while (it := asg.next_turn_for("soak", who, db=url)) is not None:
        h = zlib.crc32((who + it.turn_id).encode()) % 10
        if h < 3:
            asg.submit_label("soak", who, it.turn_id, "failure", ("IUV", "WNF", "PC")[h], db=url)
        elif h == 3:  # several classes, given out of order: stored as "IUV,UV"
            asg.submit_label("soak", who, it.turn_id, "failure", ["UV", "IUV"], db=url)
        elif h == 4:
            asg.submit_label("soak", who, it.turn_id, "unsure", db=url)
        else:
            asg.submit_label("soak", who, it.turn_id, "acceptable", db=url)
        n += 1
    print(json.dumps({"who": who, "submitted": n, "seconds": round(time.time() - t0, 2)}))
""")


def test_two_processes_write_500_labels_each(db_url):
    make_audit(db_url, n=N_TURNS, name="soak", dialogues=50)
    for who in ("ann-A", "ann-B"):  # real accounts, as the app has them (issue 10); the workers use the names
        db.accounts.create_account(who, "soak password", db=db_url)
    dispose_all()
    start = time.time() + 3.0  # both workers import, then begin at the same instant
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(REPO), db_url, who, str(start)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for who in ("ann-A", "ann-B")]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    backend = db_url.split(":", 1)[0]
    labels = db.current_labels("soak", db=db_url)
    total = db.count_events("soak", db=db_url)
    per = {r["who"]: r["submitted"] for r in results}
    print(f"\nSOAK [{backend}] per process: {results}; submitted rows in DB: {total}; "
          f"turns with two labels: {sum(len(v) == 2 for v in labels.values())}/{N_TURNS}")
    assert per == {"ann-A": N_TURNS, "ann-B": N_TURNS}
    assert total == 2 * N_TURNS
    assert len(labels) == N_TURNS and all(set(v) == {"ann-A", "ann-B"} for v in labels.values())
    assert sum(len(db.label_history("soak", annotator=w, db=db_url)) for w in per) == 2 * N_TURNS
    # every stored label is what its worker chose (the same hash), class lists canonical
    want = {0: ("failure", "IUV"), 1: ("failure", "WNF"), 2: ("failure", "PC"), 3: ("failure", "IUV,UV"),
            4: ("unsure", None)}
    for tid, by in labels.items():
        for w, r in by.items():
            assert (r.label, r.failure_class) == want.get(zlib.crc32((w + tid).encode()) % 10,
                                                           ("acceptable", None)), (tid, w)
