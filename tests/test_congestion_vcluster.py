"""jb-congestion's known answer on the virtual cluster: two nodes whose links run at 100 Mbit/s each
way, four ranks as four virtual nodes; ranks 0 and 2 (one on each node) the canaries, ranks 1 and
3 an all-to-all group of 64 KiB messages (one on each node), so the congestor's flow shares each
node's one link with the canaries'.

The prediction, from the link alone: the canaries' 2 x 128 KiB each way take 9 MB/s of the
12.5 MB/s link alone; beside one congestor flow a fair share is at most half of it, 6.25 MB/s, so
the bandwidth canary's factor is about 1.4.  An 8-byte message queued behind a 64 KiB one waits up
to its 5.2 ms on the wire, against some 0.2 ms alone: the latency canary's factor is tens.
Measured (4 runs): bandwidth 1.45-1.50, latency 19-37 with the congestor; 1.03-1.06 and
0.79-1.21 without (`--congestors none`: the factors' noise)."""
from __future__ import annotations

import json
import subprocess

import pytest

from support import clusters
from jitterbench import mpi as mpis

pytestmark = [pytest.mark.vcluster, pytest.mark.skipif(clusters.why_not() is not None, reason=clusters.why_not() or "")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from clusters.cluster(tmp_path_factory, "2", "--rails", "1", "--link-rate", "100mbit")


def factors(cluster, tmp_path, congestors):
    doc = tmp_path / f"{congestors}.json"
    # four ranks on two cores: the MPI yields while it waits (jitterbench/mpi.py's yield_vars)
    proc = subprocess.run(["srun", "-p", "vc", "-N", "2", "--ntasks-per-node", "2", "--mpi=pmix",
                           str(mpis.OPENMPI.binary("congestion")), "--tasks-per-node", "1", "--congestors", congestors,
                           "--congestor-size", "64K", "--calls", "60", "--rounds", "4", "--json", str(doc)],
                          env={**cluster, **mpis.OPENMPI.yield_vars}, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    d = json.loads(doc.read_text())
    assert d["config"]["canary_nodes"] == 2
    return d, {r["canary"]: (r["impact_avg"], r["impact_p99"]) for r in d["results"] if r["phase"] == "congested"}


def test_a_congestor_sharing_the_canaries_links_slows_them_as_the_link_predicts(cluster, tmp_path):
    quiet, alone = factors(cluster, tmp_path, "none")
    assert quiet["config"]["congestors"] == []
    assert 0.8 < alone["bandwidth"][0] < 1.2 and alone["latency"][0] < 3
    loaded, congested = factors(cluster, tmp_path, "alltoall")
    (group,) = loaded["config"]["congestors"]
    assert (group["congestor"], group["tasks"]) == ("alltoall", 2) and group["turns_per_s"] > 0
    assert 1.2 < congested["bandwidth"][0] < 2.5  # about 1.4: half the link at most, against 9 of 12.5 MB/s
    assert congested["latency"][0] > 3  # tens: queued behind 64 KiB messages
