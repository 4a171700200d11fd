"""Reference files: validation with one clear line, and building them from ReFrame reports."""
from __future__ import annotations

import json

import pytest
import yaml

from jitterbench import cli, references

pytestmark = pytest.mark.unit

PROVENANCE = {"system": "local", "source": "measured", "measured_by": "test", "date": "2026-11-22",
              "method": "by hand"}


def write(tmp_path, doc, name="local.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False) if not isinstance(doc, str) else doc)
    return path


def halo_entry(leaf):
    return {"$index": ["$partition", "pattern"], "local:default": {"sendrecv": {"max": leaf}}}


def test_a_well_formed_file_loads(tmp_path):
    doc = {"provenance": PROVENANCE, "HaloCheck": halo_entry([10.0, -0.5, 2.0, "us"])}
    assert references.load(write(tmp_path, doc))["HaloCheck"]["$index"] == ["$partition", "pattern"]


@pytest.mark.parametrize("doc,message", [
    ("a: [unclosed", "not YAML (line 1)"),
    ({"HaloCheck": halo_entry([1, -0.5, 0.5, "us"])}, "must start with a 'provenance' mapping"),
    ({"provenance": {"system": "local"}}, "provenance lacks source, date, method"),
    ({"provenance": PROVENANCE, "HaloCheck": {"local:default": {}}}, "HaloCheck: expected a mapping with an '$index' list"),
    ({"provenance": PROVENANCE, "HaloCheck": halo_entry(["fast", -0.5, 0.5, "us"])},
     "HaloCheck > local:default > sendrecv > max: expected [value, lower, upper, unit]"),
    ({"provenance": PROVENANCE, "HaloCheck": halo_entry([1.0, 0.5, 0.5, "us"])}, "thresholds must be"),
    ({"provenance": PROVENANCE, "HaloCheck": halo_entry([1.0, "low", None, "us"])}, "expected [value, lower"),
    ({"provenance": PROVENANCE, "HaloCheck": {"$index": ["$partition", "pattern"], "local:default": [1, 2]}},
     "HaloCheck > local:default: expected a mapping"),
])
def test_malformed_files_name_the_problem(tmp_path, doc, message):
    with pytest.raises(references.ReferenceFileError) as err:
        references.load(write(tmp_path, doc))
    text = str(err.value)
    assert message in text and "\n" not in text and "local.yaml" in text


PAPER = {"system": "sp2", "source": "paper", "measured_by": "test", "date": "not stated", "method": "by hand"}
STATED = {"id": "throughput-p2", "quantity": "all-to-all throughput, 2 processors", "value": 40.991, "unit": "MB/s",
          "where": "003_1fe4774c09b49939.txt, section 3, Table 1"}


def with_stated(*entries):
    return {"provenance": PAPER, "stated": list(entries)}


def test_stated_numbers_load_beside_check_entries(tmp_path):
    figure = {**STATED, "id": "figure", "value": None, "unit": None, "note": "in the figure only"}
    counterpart = {**STATED, "metric": "alltoall_throughput", "at": {"tasks": 2, "msg_size": 1048576}}
    doc = {**with_stated(counterpart, figure, {**STATED, "id": "read", "read_off_figure": True}),
           "HaloCheck": halo_entry([10.0, None, None, "us"])}
    loaded = references.load(write(tmp_path, doc, "sp2.yaml"))
    assert [e["id"] for e in references.stated(loaded)] == ["throughput-p2", "figure", "read"]
    assert references.stated(references.load(write(tmp_path, {"provenance": PROVENANCE}))) == []


@pytest.mark.parametrize("doc,message", [
    ({"provenance": PAPER, "stated": {"a": 1}}, "stated: expected a list of entries"),
    (with_stated([1, 2]), "stated[0]: expected a mapping"),
    (with_stated({k: v for k, v in STATED.items() if k != "where"}), "stated > throughput-p2: lacks where"),
    (with_stated({k: v for k, v in STATED.items() if k != "id"}), "stated[0]: lacks id"),
    (with_stated(STATED, STATED), "stated > throughput-p2: id is not unique in the file"),
    (with_stated({**STATED, "quantity": " "}), "stated > throughput-p2: quantity must be a non-empty string"),
    (with_stated({**STATED, "value": "40.991"}), "value must be a number or null, got '40.991'"),
    (with_stated({**STATED, "value": True}), "value must be a number or null, got True"),
    (with_stated({**STATED, "unit": None}), "unit may be null only with a null value"),
    (with_stated({**STATED, "value": None, "unit": None}), "a null value needs a note saying why"),
    (with_stated({**STATED, "metric": "throughput"}), "metric must be one of alltoall_throughput, "),
    (with_stated({**STATED, "metric": "alltoall_throughput", "at": [2, 1048576]}), "at must be a mapping"),
    (with_stated({**STATED, "at": {"tasks": 2}}), "at says where a metric is taken: it needs a metric"),
    (with_stated({**STATED, "read_off_figure": "yes"}), "read_off_figure must be true or false, got 'yes'"),
    (with_stated({**STATED, "metrics": "alltoall_throughput"}), "stated > throughput-p2: unknown key(s) metrics"),
])
def test_malformed_stated_entries_name_the_entry(tmp_path, doc, message):
    with pytest.raises(references.ReferenceFileError) as err:
        references.load(write(tmp_path, doc, "sp2.yaml"))
    text = str(err.value)
    assert message in text and "\n" not in text and text.startswith(str(tmp_path / "sp2.yaml"))


def report(tmp_path, name, values, system="local"):
    """A ReFrame run report with one HaloCheck variant per (pattern, max) value."""
    cases = [{
        "display_name": f"HaloCheck %nodes=1 %pattern={pattern}", "nodes": 1, "pattern": pattern,
        "system": system, "partition": "default", "environ": "openmpi", "result": "pass", "fixture": False,
        "perfvalues": {f"{system}:default:max": [v, 0, None, None, "us", "pass"],
                       f"{system}:default:jitter": [1.5, 0, None, None, "MAX/AVG", "pass"]},
    } for pattern, v in values]
    doc = {"session_info": {"version": "4.10.4", "time_start_unix": 1795323075, "cmdline": "reframe -r"},
           "runs": [{"testcases": cases}]}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_reference_from_repeats_takes_the_median_and_the_spread(tmp_path):
    runs = [report(tmp_path, f"r{i}.json", [("sendrecv", v)]) for i, v in enumerate([10.0, 12.0, 20.0])]
    doc = references.build(runs, "local", "tester", min_slack=0.5, spread_factor=2.0)
    leaf = doc["HaloCheck"]["local:default"]["openmpi"][1]["sendrecv"]
    assert doc["HaloCheck"]["$index"] == ["$partition", "$environ", "nodes", "pattern"]
    assert leaf["max"] == [12.0, None, round(2 * (20 / 12 - 1), 3), "us"]  # a time: bounded above only
    assert leaf["jitter"] == [1.5, None, 0.5, "MAX/AVG"]                    # no spread: the slack
    prov = doc["provenance"]
    assert prov["date"] == "2026-11-22" and prov["measured_by"] == "tester" and "3 ReFrame run report" in prov["method"]


def test_reference_command_writes_a_loadable_file(tmp_path, capsys):
    run = report(tmp_path, "r.json", [("sendrecv", 10.0), ("isend-recv", 8.0)])
    out = tmp_path / "local.yaml"
    assert cli.main(["reference", str(run), "--system", "local", "-o", str(out)]) == 0
    doc = references.load(out)
    assert doc["HaloCheck"]["local:default"]["openmpi"][1]["isend-recv"]["max"][0] == 8.0
    assert cli.main(["reference", str(run), "--system", "vcluster", "-o", str(tmp_path / "v.yaml")]) == 2
    assert "no performance values for system 'vcluster'" in capsys.readouterr().err
    assert not (tmp_path / "v.yaml").exists()
