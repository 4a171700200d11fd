"""Reference files: validation with one clear line, and building them from ReFrame reports."""
from __future__ import annotations

import json

import pytest
import yaml

from jitterbench import cli, references

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
